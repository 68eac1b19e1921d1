"""qcheck.Domain and the entry points that honour it (numpy kernels): a case
outside is exit 2 with the reason and the kernel is never called; fuzz
repairs into the domain; the minimizer keeps to it; a raising kernel is a
finding named by its exception's type, and shrinks."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import qcheck

import adapters
from adapters import correct, divides_by_tail, fails_to_compile_separate, skips_tail_token

HERE = Path(__file__).resolve().parent
CHECK_TOOL = os.environ.get("QCHECK_CHECK_TOOL")
CASE_TOOL = os.environ.get("QCHECK_CASE_TOOL")


def case_with(**fields):
    f = qcheck.Case.from_seed(3, "tiny").fields
    f.update(fields)
    return qcheck.Case.from_json(json.dumps(f))


def test_the_arguments_make_the_json_form():
    d = qcheck.Domain(paths="bf16-packed", indexer=True, alias=False, rope="neox", cache_dtypes="f32",
                      weights_out_dtypes=["bf16"], unit_inner_stride=["index_weights"], rope_dim=64,
                      index_dim=[64, 128], mqa_heads=range(16, 129, 16), power_of_two=("nope_dim",), max_tokens=65535,
                      min_indexer_heads=2, relations=["mqa_heads <= 4 * indexer_heads"])
    assert json.loads(d.json) == {
        "query_paths": ["bf16-packed"], "indexer": [True], "alias": ["none"], "indexer_ropes": ["neox"],
        "mqa_cache_dtypes": ["f32"], "indexer_cache_dtypes": ["f32"], "weights_out_dtypes": ["bf16"],
        "unit_inner_stride": ["index_weights"],
        "dims": {"num_tokens": {"max": 65535}, "mqa_heads": {"min": 16, "max": 128, "multiple_of": 16},
                 "indexer_heads": {"min": 2}, "index_dim": {"values": [64, 128]}, "rope_dim": {"values": [64]},
                 "nope_dim": {"power_of_two": True}},
        "relations": ["mqa_heads <= 4 * indexer_heads"]}
    assert qcheck.Domain.from_json(d.json) == d
    assert qcheck.Domain().json == "{}"


def test_a_bad_argument_names_itself():
    with pytest.raises(qcheck.QcheckError, match=r"indexer_ropes\[0\]: \"gptj\" is not a RoPE style"):
        qcheck.Domain(rope="gptj")
    with pytest.raises(TypeError, match="unknown argument 'heads'"):
        qcheck.Domain(heads=4)
    with pytest.raises(qcheck.QcheckError, match=r"relations\[0\]: relation 'H < NI - 1'"):
        qcheck.Domain(relations=["H < NI - 1"])
    with pytest.raises(qcheck.QcheckError, match="unknown key 'rope'"):
        qcheck.Domain.from_json('{"rope": ["neox"]}')


def test_contains_outside_and_fit():
    d = qcheck.Domain(max_tokens=16, mqa_heads=[4, 8])
    c = case_with(num_tokens=17, mqa_heads=3)
    assert d.outside(c) == "outside the domain: num_tokens 17 (the domain allows up to 16)"
    assert not d.contains(c)
    fitted = d.fit(c)
    assert (fitted["num_tokens"], fitted["mqa_heads"]) == (16, 4) and d.contains(fitted)


class Counting:
    """A kernel that records every case it is called on, and asserts its domain as a wrapper would."""

    def __init__(self, kernel, domain):
        self.kernel, self.domain, self.calls = kernel, domain, []
        self.__name__ = "counting"

    def __call__(self, tensors):
        self.calls.append(tensors.case)
        assert self.domain.contains(tensors.case), "called outside its domain"
        self.kernel(tensors)


def test_every_entry_point_refuses_a_case_outside_without_calling_the_kernel():
    k = Counting(correct, qcheck.Domain(max_tokens=16))
    c = case_with(num_tokens=17)
    for verdict in (qcheck.run(c, k), qcheck.against(c, k, correct).first):
        assert verdict.exit_code == 2 and not verdict.passed, verdict.text
        assert verdict.text == ("INVALID INPUT: outside the domain of counting: outside the domain: num_tokens 17 "
                                "(the domain allows up to 16)\n")
    assert qcheck.against(c, k, correct).difference is None
    t = c.numpy_inputs()
    correct(t)
    assert qcheck.check(c, t, domain=k.domain).exit_code == 2
    assert qcheck.check(c, t).passed  # the same outputs, judged without the domain
    assert k.calls == []
    inside = case_with(num_tokens=16)
    assert qcheck.run(inside, k).passed and len(k.calls) == 2


def test_the_decorator_declares_domain_and_profile():
    @qcheck.kernel(domain=qcheck.Domain(paths="fp8-packed"), profile="qcheck")
    def adapter(tensors):
        correct(tensors)

    assert adapter.profile == "qcheck" and "fp8-packed" in adapter.domain.json
    assert qcheck.run(case_with(query_path="bf16-packed"), adapter).exit_code == 2
    with pytest.raises(TypeError):
        qcheck.kernel(domain={"paths": "fp8-packed"})


def test_fuzz_repairs_every_case_into_the_domain(tmp_path):
    domain = qcheck.Domain(paths=["bf16-packed"], max_tokens=20, mqa_heads=[2, 4], contiguous=True,
                           relations=["mqa_heads <= 2 * indexer_heads"])
    k = Counting(correct, domain)
    result = qcheck.fuzz(k, executions=80, findings=tmp_path / "f", progress=False)
    assert result.executions == 80 and not result.findings, result.summary()
    assert len(k.calls) == 160  # two runs a case, every one inside (Counting asserts it)


def test_the_minimizer_keeps_to_the_domain(tmp_path):
    domain = qcheck.Domain(min_tokens=3, mqa_heads={"multiple_of": 2})
    k = Counting(skips_tail_token, domain)
    k.__module__, k.__qualname__ = "adapters", "skips_tail_token"
    start = domain.fit(case_with(num_tokens=41, mqa_heads=6))
    m = qcheck.minimize(start, k, out=tmp_path / "min", budget=30)
    assert m.case["num_tokens"] == 3 and m.case["mqa_heads"] == 2, m.report
    assert all(domain.contains(c) for c in k.calls)
    outside = qcheck.minimize(case_with(num_tokens=2), k, out=tmp_path / "out")
    assert outside.outside and "OUTSIDE THE DOMAIN" in outside.report


def test_a_raising_kernel_is_minimized_while_it_raises_the_same_type(tmp_path):
    start = case_with(num_tokens=41, mqa_heads=5)
    verdict = qcheck.run(start, divides_by_tail)
    assert verdict.exit_code == 3 and verdict.signature == "kernel raised ZeroDivisionError"
    assert "integer division by zero with 41 tokens" in verdict.text and "Traceback" not in verdict.text.splitlines()[0]
    m = qcheck.minimize(start, divides_by_tail, out=tmp_path / "min", budget=30)
    assert not m.nondeterministic
    assert m.case["num_tokens"] == 1 and m.case["mqa_heads"] == 1, m.report
    assert "kernel raised ZeroDivisionError" in m.report


def test_a_compiler_error_has_a_class_of_its_own(tmp_path):
    # Not compile-aware: its share of exploring executions follows the wall
    # clock, so on a loaded machine 300 executions could stay on the first
    # case's compile key and never reach bf16-separate. Without it every case
    # is new, from the seed alone.
    result = qcheck.fuzz(fails_to_compile_separate, executions=300, findings=tmp_path / "f", progress=False,
                         compile_aware=False)
    assert list(result.groups) == ["kernel failed to compile (CompilationError)"], result.summary()


def run_cli(*args, cwd=HERE):
    env = adapters.child_env()
    return subprocess.run([sys.executable, "-m", "qcheck", *args], cwd=cwd, env=env, capture_output=True, text=True)


def test_replay_takes_a_domain_file_and_prints_the_device(tmp_path):
    case_with(num_tokens=17).save(tmp_path / "case.json")
    qcheck.Domain(max_tokens=16).save(tmp_path / "domain.json")
    r = run_cli("replay", str(tmp_path / "case.json"), "adapters:skips_tail_token", "--domain",
                str(tmp_path / "domain.json"))
    assert r.returncode == 2 and "num_tokens 17 (the domain allows up to 16)" in r.stdout, r
    (tmp_path / "bad.json").write_text('{"dims": {"rope_dim": {"max": 0}}}')
    r = run_cli("replay", str(tmp_path / "case.json"), "adapters:correct", "--domain", str(tmp_path / "bad.json"))
    assert r.returncode == 2 and "dims.rope_dim.max: 0 is not a whole number" in r.stderr, r
    result = qcheck.fuzz(skips_tail_token, executions=20, findings=tmp_path / "f", progress=False, device=None)
    line = (result.findings[0].path.with_suffix(".txt")).read_text().splitlines()[-1]
    assert line.startswith("replay: python -m qcheck replay ") and "--device" not in line
    qcheck.Domain(max_tokens=40).save(tmp_path / "d40.json")
    fuzzed = run_cli("fuzz", "adapters:skips_tail_token", "--executions", "40", "--findings", str(tmp_path / "g"),
                     "--domain", str(tmp_path / "d40.json"))
    assert fuzzed.returncode == 1, fuzzed.stderr
    lines = [p.read_text().splitlines()[-1] for p in (tmp_path / "g").glob("*.txt")]
    assert lines and all(f"--domain {tmp_path / 'd40.json'}" in line for line in lines), lines
    assert all(qcheck.Case.load(p)["num_tokens"] <= 40 for p in (tmp_path / "g").glob("*.json"))
    from qcheck.reports.result import replay_command
    assert replay_command("c.json", "m:f", "vllm-triton", "cuda:1") == \
        "python -m qcheck replay c.json m:f --profile vllm-triton --device cuda:1"


@pytest.mark.skipif(not CHECK_TOOL or not CASE_TOOL, reason="QCHECK_CHECK_TOOL / QCHECK_CASE_TOOL not set (ctest sets them)")
def test_qcheck_check_takes_a_domain_file(tmp_path):
    case_with(num_tokens=17).save(tmp_path / "case.json")
    assert subprocess.run([CASE_TOOL, "export", str(tmp_path / "case.json"), str(tmp_path / "x")]).returncode == 0
    qcheck.Domain(max_tokens=16).save(tmp_path / "domain.json")
    r = subprocess.run([CHECK_TOOL, str(tmp_path / "x"), "--domain", str(tmp_path / "domain.json")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "num_tokens 17 (the domain allows up to 16)" in r.stderr, r
    qcheck.Domain(max_tokens=17).save(tmp_path / "wide.json")
    r = subprocess.run([CHECK_TOOL, str(tmp_path / "x"), "--domain", str(tmp_path / "wide.json")],
                       capture_output=True, text=True)
    assert r.returncode == 1, r  # judged: the exported outputs still hold their poison


def test_the_pytest_plugin_regenerates_inside_and_skips_a_corpus_file_outside(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    case_with(num_tokens=17, query_path="fp8-packed", alias="none").save(corpus / "long.json")
    case_with(num_tokens=5).save(corpus / "short.json")
    test_file = tmp_path / "test_kernel.py"
    test_file.write_text(
        "import qcheck\nfrom adapters import correct\n"
        "domain = qcheck.Domain(max_tokens=8, paths='fp8-packed')\n"
        "@qcheck.kernel(domain=domain)\n"
        "def kernel(tensors):\n    assert domain.contains(tensors.case)\n    correct(tensors)\n"
        "def test_kernel(qcheck_case):\n    qcheck.assert_passes(qcheck_case, kernel)\n")
    env = adapters.child_env()
    out = subprocess.run([sys.executable, "-m", "pytest", "-v", "-rs", "-p", "no:cacheprovider", "-p",
                          "qcheck.pytest_plugin", f"--qcheck-corpus={corpus}", "--qcheck-cases=6", str(test_file)],
                         cwd=tmp_path, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout
    assert "test_kernel[long.json] SKIPPED" in out.stdout and "num_tokens 17 (the domain allows up to 8)" in out.stdout
    assert "test_kernel[short.json] SKIPPED" in out.stdout  # bf16-packed, outside paths
    assert out.stdout.count("PASSED") == 6, out.stdout
