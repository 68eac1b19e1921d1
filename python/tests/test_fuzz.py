"""qcheck.fuzz, python -m qcheck and the pytest plugin, on numpy adapters."""

import json
import os
import subprocess
import sys
from pathlib import Path

import qcheck

import adapters
from adapters import correct, raises_on_odd_heads, skips_tail_token

HERE = Path(__file__).resolve().parent


def test_a_correct_kernel_gives_no_finding_and_keeps_cases_that_reach_new_bins(tmp_path):
    result = qcheck.fuzz(correct, executions=150, corpus=tmp_path / "corpus", findings=tmp_path / "findings",
                         progress=False)
    assert result.executions == 150 and not result.findings, result.summary()
    kept = list((tmp_path / "corpus").iterdir())
    assert 10 < len(kept) < 150  # only cases that reached a new bin
    assert len(result.bins) > 40
    assert result.exec_per_second > 0 and set(result.phases) == {"cases", "inputs", "transfers", "allocator",
                                                                    "kernel", "verdict"}
    again = qcheck.fuzz(correct, executions=20, corpus=tmp_path / "corpus", findings=tmp_path / "f2", progress=False)
    assert not again.findings


def test_a_planted_bug_is_found_saved_and_replays(tmp_path):
    result = qcheck.fuzz(skips_tail_token, executions=200, findings=tmp_path / "findings", progress=False)
    assert result.findings, result.summary()
    # (Where the last token's ql_nope front is aliased, the poison written there also reads as a
    # difference between the runs: every group has the unwritten class, some another one too.)
    assert all(any(c.endswith("/unwritten") for c in g.classes) for g in result.groups.values()), result.summary()
    finding = result.findings[0]
    text = (tmp_path / "findings" / f"{finding.case.digest}.txt").read_text()
    assert "replay: python -m qcheck replay" in text and "adapters:skips_tail_token" in text
    assert qcheck.Case.load(finding.path) == finding.case
    assert not qcheck.run(finding.case, skips_tail_token).passed
    assert qcheck.run(finding.case, correct).passed


def test_a_kernel_that_raises_is_a_finding(tmp_path):
    result = qcheck.fuzz(raises_on_odd_heads, executions=60, findings=tmp_path / "findings", progress=False)
    assert list(result.groups) == ["kernel raised ValueError"], result.summary()
    assert all("RUNTIME ERROR: kernel raised ValueError: odd H is not supported" in f.text for f in result.findings)
    assert all(f.case["mqa_heads"] % 2 == 1 for f in result.findings)


def run_cli(*args, cwd=HERE):
    env = adapters.child_env()
    return subprocess.run([sys.executable, "-m", "qcheck", *args], cwd=cwd, env=env, capture_output=True, text=True)


def test_the_command_line_replays_with_qcheck_replays_exit_codes(tmp_path):
    case = qcheck.Case.from_seed(3, "tiny")
    fields = case.fields
    fields["num_tokens"] = 17
    case = qcheck.Case.from_json(json.dumps(fields))
    case.save(tmp_path / "case.json")
    assert run_cli("replay", str(tmp_path / "case.json"), "adapters:correct").returncode == 0
    failed = run_cli("replay", str(tmp_path / "case.json"), "adapters:skips_tail_token")
    assert failed.returncode == 1 and "FAIL backend adapters:skips_tail_token" in failed.stdout, failed
    (tmp_path / "bad.json").write_text("{")
    assert run_cli("replay", str(tmp_path / "bad.json"), "adapters:correct").returncode == 2
    fields["mqa_heads"] = 3
    qcheck.Case.from_json(json.dumps(fields)).save(tmp_path / "odd.json")
    raised = run_cli("replay", str(tmp_path / "odd.json"), "adapters:raises_on_odd_heads")
    assert raised.returncode == 3 and "RUNTIME ERROR: kernel raised ValueError: odd H is not supported" in raised.stdout
    fuzzed = run_cli("fuzz", "adapters:correct", "--executions", "30", "--findings", str(tmp_path / "f"))
    assert fuzzed.returncode == 0 and "no findings" in fuzzed.stderr, fuzzed.stderr
    fuzzed = run_cli("fuzz", "adapters:correct", "--executions", "5", "--findings", str(tmp_path / "f"),
                     "--no-poison-allocator")
    assert fuzzed.returncode == 0 and "5 executions" in fuzzed.stderr, fuzzed.stderr


def test_the_pytest_plugin_parameterizes_over_corpus_files_and_generated_cases(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for seed in (1, 2):
        qcheck.Case.from_seed(seed, "tiny").save(corpus / f"c{seed}.json")
    test_file = tmp_path / "test_kernel.py"
    test_file.write_text("import qcheck\nfrom adapters import correct, skips_tail_token\n"
                         "pytest_plugins = ['qcheck.pytest_plugin']\n"
                         "def test_correct(qcheck_case):\n    qcheck.assert_passes(qcheck_case, correct)\n"
                         "def test_buggy(qcheck_case):\n    qcheck.assert_passes(qcheck_case, skips_tail_token)\n")
    env = adapters.child_env()
    pytest = [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", str(test_file)]
    # The options on the command line (the plugin loaded first), then from the environment.
    for extra, more_env in ((["-p", "qcheck.pytest_plugin", f"--qcheck-corpus={corpus}", "--qcheck-cases=5"], {}),
                            ([], {"QCHECK_CORPUS": str(corpus), "QCHECK_CASES": "5"})):
        out = subprocess.run(pytest + extra, cwd=tmp_path, env=dict(env, **more_env), capture_output=True, text=True)
        assert out.returncode == 1, out.stdout  # the buggy kernel fails some case
        for name in ("c1.json", "c2.json", "seed1", "seed5"):
            assert f"test_correct[{name}] PASSED" in out.stdout, out.stdout
        assert "python -m qcheck replay" in out.stdout and "adapters:skips_tail_token" in out.stdout, out.stdout
        assert "failed" in out.stdout.strip().splitlines()[-1], out.stdout  # 7 correct + the buggy cases that pass


def test_the_pytest_plugin_fuzzes_with_a_fixture_and_skips_cuda_tests_without_a_device(tmp_path):
    from qcheck.pytest_plugin import _cuda_missing
    test_file = tmp_path / "test_fuzz_kernel.py"
    test_file.write_text("import pytest\nfrom adapters import correct, skips_tail_token\n"
                         "def test_correct(qcheck_fuzz):\n    assert qcheck_fuzz(correct, cases=40).executions == 40\n"
                         "def test_default(qcheck_fuzz):\n    assert qcheck_fuzz(correct).executions == 100\n"
                         "def test_buggy(qcheck_fuzz):\n    qcheck_fuzz(skips_tail_token)\n"
                         "@pytest.mark.qcheck_cuda\ndef test_on_cuda():\n    pass\n")
    env = adapters.child_env(QCHECK_FUZZ_CASES="100")
    out = subprocess.run([sys.executable, "-m", "pytest", "-v", "-rs", "-p", "no:cacheprovider", "-p",
                          "qcheck.pytest_plugin", str(test_file)], cwd=tmp_path, env=env, capture_output=True,
                         text=True)
    assert "test_correct PASSED" in out.stdout and "test_buggy FAILED" in out.stdout, out.stdout
    assert "test_default PASSED" in out.stdout, out.stdout  # QCHECK_FUZZ_CASES
    assert "qcheck_fuzz: " in out.stdout and "replay: python -m qcheck replay" in out.stdout, out.stdout
    assert "adapters:skips_tail_token" in out.stdout, out.stdout
    why = _cuda_missing()
    if why is None:
        assert "test_on_cuda PASSED" in out.stdout, out.stdout
    else:
        assert "test_on_cuda SKIPPED" in out.stdout and f"qcheck_cuda: {why}" in out.stdout, out.stdout
