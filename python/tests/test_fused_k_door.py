"""fused_k through the Python door: its cases (from a seed, in both forms,
named by the same digest as the seed corpus), its tensors as views into the
one arena, and the verdict on kernels written here: the top-k fill in numpy
(correct, and with the bugs such a fill has), a replay of the oracle's
bytes, and what the door does not take yet, refused by name."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import qcheck
from qcheck.model.known import signatures_of

CORPUS = Path(__file__).resolve().parents[2] / "corpus" / "fused_k"


def topk_case(**fields):
    """A launch with only the top-k fill: T rows of K int32, row padding."""
    named = {"op": "fused_k", "index_k": False, "kv": False, "q_norm": False, "topk_fill": True,
             "num_tokens": 17, "topk_width": 100, "topk_row_padding": 3}
    named.update(fields)
    return qcheck.Case.from_json(json.dumps(named))


def fill_topk(tensors):
    tensors["topk"][...] = -1


def test_fused_k_is_listed_and_its_cases_are_its_own():
    assert list(qcheck.ops()) == ["fused_q", "fused_k"]
    op = qcheck.ops()["fused_k"]
    assert op.profiles == ["qcheck"]
    for seed in range(20):
        case = qcheck.Case.from_seed(seed, size="tiny", op="fused_k")
        assert case.op == "fused_k"
        case.validate()
        fields = case.fields
        assert fields["op"] == "fused_k" and fields["schema"] == 1
        assert [f["name"] for f in op.fields] == [k for k in fields if k not in ("op", "schema")]
        assert qcheck.Case.from_bytes(case.to_bytes()) == case
        assert qcheck.Case.from_json(case.to_json()) == case
        mutated = case.mutate(seed, size="tiny")
        assert mutated.op == "fused_k" and mutated != case
        mutated.validate()
    assert qcheck.Case.from_seed(4, size="tiny", op="fused_q").op == "fused_q"
    with pytest.raises(qcheck.QcheckError, match="num_tokens"):
        qcheck.Case.from_json('{"op": "fused_k", "num_tokens": "many"}')
    odd = qcheck.Case.from_json('{"op": "fused_k", "num_tokens": -1}')  # read, then refused naming the field
    with pytest.raises(qcheck.QcheckError, match="num_tokens = -1 is outside"):
        odd.validate()
    with pytest.raises(qcheck.QcheckError, match="num_tokens = -1 is outside"):
        odd.numpy_inputs()


def test_the_seed_corpus_files_are_named_by_the_cases_digest():
    files = sorted(p for p in CORPUS.iterdir() if p.is_file())
    assert len(files) >= 100
    for path in files:
        case = qcheck.Case.load(path)
        assert case.op == "fused_k"
        assert case.digest == path.name
        assert case.to_bytes() == path.read_bytes()


def test_the_tensors_are_views_into_one_arena_with_the_vocabularys_dtypes():
    case = qcheck.Case.from_seed(11, size="usual", op="fused_k")
    tensors = case.numpy_inputs()
    assert len(tensors.raw) == 1
    listed = {t["name"]: t for t in qcheck.ops()["fused_k"].tensors}
    numpy_name = {"f32": "float32", "bf16": "uint16", "int64": "int64", "int32": "int32", "uint8": "uint8"}
    for name, array in tensors.items():
        assert name in listed
        assert array.dtype.name in {numpy_name[d] for d in listed[name]["dtypes"]}, name
        assert np.shares_memory(array, tensors.raw[0]), name
    assert tensors.q_scale is None  # fused_q's scalars only


def test_a_numpy_topk_fill_passes_and_its_bugs_are_named():
    case = topk_case()
    verdict = qcheck.run(case, fill_topk)
    assert verdict.passed, verdict.text
    assert verdict.text.startswith("PASS: fused_k, fill_topk, under profile qcheck")
    assert verdict.json["judged_under"] == "qcheck"

    def rows_but_the_last(tensors):
        tensors["topk"][:-1] = -1

    def into_the_padding(tensors):
        fill_topk(tensors)
        base = tensors["topk"]
        np.ndarray((base.shape[0], base.strides[0] // 4), np.int32, buffer=tensors.raw[0],
                   offset=tensors.info["topk"].offset_bytes)[...] = -1

    def wrong_value(tensors):
        tensors["topk"][...] = 0

    def past_the_end(tensors):  # 8 bytes into the gap after the buffer's 17 rows of 103
        fill_topk(tensors)
        end = tensors.info["topk"].offset_bytes + 17 * 103 * 4
        tensors.raw[0][end + 8:end + 12] = 0xFF

    unwritten = qcheck.run(case, rows_but_the_last)
    assert unwritten.exit_code == 1 and unwritten.signature == "topk/topk/unwritten", unwritten.text
    # 100 int32 of the last row, in both runs; every signature listed for grouping (qcheck.known)
    assert unwritten.json["counts"] == [{"tensor": "topk", "part": "topk", "class": "unwritten", "count": 800}]
    assert signatures_of(unwritten) == ["topk/topk/unwritten"]
    padding = qcheck.run(case, into_the_padding)
    assert padding.exit_code == 1 and padding.signature == "topk/topk/differs", padding.text
    assert qcheck.run(case, wrong_value).signature == "topk/topk/differs"
    stray = qcheck.run(case, past_the_end)
    assert stray.exit_code == 1 and stray.signature == "guard/after_topk/guard-written", stray.text


def test_a_kernel_that_writes_the_oracles_bytes_passes_and_one_that_writes_more_fails():
    for seed in range(12):
        case = qcheck.Case.from_seed(seed, size="tiny", op="fused_k")
        want = qcheck.expected(case).raw[0]
        tensors = case.numpy_inputs()
        written = np.nonzero(tensors.raw[0] != want)[0]  # the bytes the oracle changed in run A
        tensors.raw[0][written] = want[written]
        # Run A alone (a byte the oracle wrote with poison A's value already holds it).
        verdict = qcheck.check(case, tensors)
        assert verdict.passed, verdict.text
        assert "in run A\n" in verdict.text

        def everything(t):  # bytes no rule names too: in run B they must keep poison B
            t.raw[0][...] = want

        both = qcheck.run(case, everything)
        assert both.exit_code == 1 and both.signature.endswith("/guard-written"), both.text


def test_what_the_door_does_not_take_for_fused_k_is_refused_by_name():
    case = qcheck.Case.from_seed(2, size="tiny", op="fused_k")
    with pytest.raises(qcheck.QcheckError, match="qcheck_case_mutate_warm does not take fused_k cases"):
        case.mutate_warm(1)
    with pytest.raises(qcheck.QcheckError, match="qcheck_case_cross_over does not take fused_k cases"):
        case.cross_over(qcheck.Case.from_seed(3, size="tiny"), 1)
    why = qcheck.Domain().outside(case)  # a domain is fused_q's so far: the case is outside, and says why
    assert "qcheck_domain_check_case does not take fused_k cases" in why
    with pytest.raises(qcheck.QcheckError, match="fused_k's oracle judges under \"qcheck\" only"):
        qcheck.check(case, case.numpy_inputs(), profile="vllm-triton")
    made = qcheck.model.case.Case._made
    with pytest.raises(qcheck.QcheckError, match="op = \"index_k\" is not one of fused_q, fused_k"):
        made("qcheck_case_from_seed_op", b"index_k", 1, b"tiny")
    with pytest.raises(qcheck.QcheckError, match="size = \"huge\" must be tiny, usual, default or limit"):
        made("qcheck_case_from_seed_op", b"fused_k", 1, b"huge")
    assert made("qcheck_case_from_seed_op", b"fused_q", 4, b"tiny") == qcheck.Case.from_seed(4, size="tiny")


def test_the_pytest_plugin_generates_fused_k_cases_with_qcheck_op(tmp_path):
    """A key-side kernel's test file: only the cases whose launch is the top-k
    fill alone are its to run (its own check; qcheck.Domain is fused_q's)."""
    test_file = tmp_path / "test_topk.py"
    test_file.write_text(
        "import pytest\nimport qcheck\n"
        "def fill(t):\n    t['topk'][...] = -1\n"
        "def fill_but_last(t):\n    t['topk'][:-1] = -1\n"
        "def only_topk(case):\n"
        "    if case.op != 'fused_k' or case['index_k'] or case['kv'] or case['q_norm'] or not case['topk_fill']:\n"
        "        pytest.skip('not a top-k fill alone')\n"
        "def test_fill(qcheck_case):\n    only_topk(qcheck_case)\n    qcheck.assert_passes(qcheck_case, fill)\n"
        "def test_fill_but_last(qcheck_case):\n    only_topk(qcheck_case)\n"
        "    qcheck.assert_passes(qcheck_case, fill_but_last)\n")
    env = dict(os.environ, QCHECK_OP="fused_k", QCHECK_CASES="400")
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-p",
                          "qcheck.pytest_plugin", str(test_file)], cwd=tmp_path, env=env, capture_output=True,
                         text=True)
    lines = out.stdout
    assert out.returncode == 1, lines
    counts = {word: int(n) for n, word in re.findall(r"(\d+) (passed|failed|skipped)", lines.strip().splitlines()[-1])}
    assert counts["failed"] >= 1 and counts["passed"] >= counts["failed"], lines  # (a T=0 case passes both)
    assert counts["passed"] + counts["failed"] + counts["skipped"] == 800, lines
    assert "topk/topk/unwritten" in lines and "python -m qcheck replay" in lines, lines


def _topk_alone(case):
    """A top-k fill kernel's check of its own (qcheck.Domain is fused_q's)."""
    if case["index_k"] or case["kv"] or case["q_norm"] or not case["topk_fill"]:
        return "not a top-k fill alone"
    return None


def test_qcheck_fuzz_runs_a_kernel_declared_for_fused_k_and_groups_its_bug(tmp_path):
    @qcheck.kernel(op="fused_k")
    def fill(tensors):
        tensors["topk"][...] = -1

    @qcheck.kernel(op="fused_k")
    def fill_but_last(tensors):
        tensors["topk"][:-1] = -1

    fill.outside = fill_but_last.outside = _topk_alone
    clean = qcheck.fuzz(fill, executions=40, workers=1, findings=tmp_path / "clean", progress=False)
    assert clean.op == "fused_k" and clean.executions == 40 and not clean.findings, clean.summary()
    assert "topk_fill=true" in clean.bins and any(b.startswith("topk_width=") for b in clean.bins)
    assert "semantic bins of the fields; op fused_k" in clean.summary()
    found = qcheck.fuzz(fill_but_last, executions=40, workers=1, findings=tmp_path / "found", progress=False,
                        max_findings=5)
    assert found.findings, found.summary()
    assert list(found.groups) == ["topk/topk"], found.groups
    first = found.findings[0]
    assert first.signature == "topk/topk/unwritten"
    saved = qcheck.Case.load(first.path)
    assert saved.op == "fused_k" and _topk_alone(saved) is None
    assert not qcheck.run(saved, fill_but_last).passed and qcheck.run(saved, fill).passed
