"""Known bugs and finding groups (qcheck.Known, qcheck.fuzz(known=...),
python -m qcheck fuzz/replay --known): a latent bug set aside lets the next
one through; groups are where the outputs differ."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import qcheck

import adapters
from adapters import two_bugs

HERE = Path(__file__).resolve().parent


def test_a_known_bug_lets_the_second_one_through(tmp_path):
    buried = qcheck.fuzz(two_bugs, executions=600, max_findings=5, findings=tmp_path / "a", progress=False)
    assert buried.stopped == "5 findings" and "index_weights_out/weights" in buried.groups, buried.summary()
    assert not buried.known
    known = [qcheck.Known("index_weights_out/*", note="the first weight's last bit")]
    result = qcheck.fuzz(two_bugs, executions=600, max_findings=5, findings=tmp_path / "b", progress=False,
                         known=known)
    assert result.known[0].count > result.executions // 4, result.summary()
    assert result.findings and all(f.group.startswith("query_out/") for f in result.findings), result.summary()
    assert all(f.case["num_tokens"] % 16 == 15 for f in result.findings)
    # The known bug's cases are saved once: one file beside each new finding's.
    saved = {p.stem for p in (tmp_path / "b").glob("*.json")}
    assert saved == {f.case.digest for f in result.findings} | {result.known[0].first.case.digest}
    assert "KNOWN:" in result.summary() and "the first weight's last bit" in result.summary()


def test_one_bug_is_one_group_whatever_class_its_elements_show(tmp_path):
    result = qcheck.fuzz(two_bugs, executions=600, max_findings=400, findings=tmp_path / "f", progress=False)
    weights = result.groups["index_weights_out/weights"]
    assert len(weights.classes) >= 2, weights.classes  # e.g. off-by-one and expected-number-got-nan
    assert all(c.startswith("index_weights_out/weights/") for c in weights.classes)
    both = [g for g in result.groups if "+" in g]
    assert both == ["index_weights_out/weights + query_out/rope"] or \
        all(g.startswith("index_weights_out/weights + query_out/") for g in both), result.summary()


def test_a_known_entry_can_hold_only_on_a_domain(tmp_path):
    # Known only from T = 100 on: the tiny cases' weights findings stay new.
    known = [qcheck.Known("index_weights_out/*", domain=qcheck.Domain(min_tokens=100))]
    result = qcheck.fuzz(two_bugs, executions=100, max_findings=50, findings=tmp_path / "f", progress=False,
                         known=known)
    assert "index_weights_out/weights" in result.groups and not result.known, result.summary()


def test_the_known_file_and_the_command_line(tmp_path):
    path = tmp_path / "known.json"
    path.write_text(json.dumps({"known": [{"signature": "index_weights_out/*", "note": "stride"}]}))
    (tmp_path / "bad.json").write_text(json.dumps({"known": [{"signature": "x", "why": 1}]}))
    with pytest.raises(qcheck.QcheckError, match=r"known\[0\]\.why: unknown key"):
        qcheck.fuzz(two_bugs, executions=1, known=str(tmp_path / "bad.json"), progress=False)
    result = qcheck.fuzz(two_bugs, executions=600, max_findings=2, findings=tmp_path / "f", progress=False,
                         known=str(path))
    finding = result.findings[0]
    replay = (finding.path.with_suffix(".txt")).read_text().splitlines()[-1]
    assert replay.endswith(f"--known {path}"), replay
    env = adapters.child_env()
    cli = [sys.executable, "-m", "qcheck", "replay", str(finding.path), "adapters:two_bugs", "--known", str(path)]
    out = subprocess.run(cli, cwd=HERE, env=env, capture_output=True, text=True)
    assert out.returncode == 1 and "NEW (not a known bug): query_out/" in out.stdout, out
    first_known = result.known[0].first.path
    out = subprocess.run(cli[:4] + [str(first_known)] + cli[5:], cwd=HERE, env=env, capture_output=True, text=True)
    assert out.returncode == 1 and "KNOWN: index_weights_out/weights is covered by known entry 0" in out.stdout, out
    out = subprocess.run(cli[:-1] + [str(tmp_path / "bad.json")], cwd=HERE, env=env, capture_output=True, text=True)
    assert out.returncode == 2 and "known[0].why" in out.stderr, out
