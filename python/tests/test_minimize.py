"""qcheck.minimize: libqcheck's minimizer over a Python kernel."""

import json
import os
import subprocess
import sys
from pathlib import Path

import qcheck

import adapters
from adapters import races, skips_tail_token

HERE = Path(__file__).resolve().parent


def tail_case():
    fields = qcheck.Case.from_seed(2, "usual").fields
    fields["num_tokens"] = 41
    return qcheck.Case.from_json(json.dumps(fields))


def test_a_planted_bug_shrinks_to_the_smallest_case_and_a_regression_test(tmp_path):
    case = tail_case()
    m = qcheck.minimize(case, skips_tail_token, out=tmp_path / "min", budget=30)
    assert m.case["num_tokens"] == 1 and m.case["mqa_heads"] == 1 and not m.case["has_indexer"]
    assert not qcheck.run(m.case, skips_tail_token).passed
    for name in ("minimized.json", "minimized.case", "report.txt", "test_regression.py", "replay.txt"):
        assert (tmp_path / "min" / name).is_file(), name
    assert qcheck.Case.load(tmp_path / "min" / "minimized.case") == m.case
    assert "failure kept by every step: mismatch " in m.report and "verdicts (oracle calls)" in m.report
    assert "python -m qcheck replay" in (tmp_path / "min" / "replay.txt").read_text()
    # The regression test runs, and fails as long as the bug is there.
    env = adapters.child_env()
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          str(tmp_path / "min" / "test_regression.py")], cwd=tmp_path, env=env,
                         capture_output=True, text=True)
    assert out.returncode == 1 and "1 failed" in out.stdout, out.stdout + out.stderr
    fixed = (tmp_path / "min" / "test_regression.py").read_text().replace("skips_tail_token", "correct")
    (tmp_path / "min" / "test_fixed.py").write_text(fixed)
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          str(tmp_path / "min" / "test_fixed.py")], cwd=tmp_path, env=env,
                         capture_output=True, text=True)
    assert out.returncode == 0 and "1 passed" in out.stdout, out.stdout + out.stderr


def test_a_race_is_reported_and_not_shrunk(tmp_path):
    m = qcheck.minimize(tail_case(), races, out=tmp_path / "race")
    assert m.nondeterministic and "NONDETERMINISTIC" in m.report
    assert not (tmp_path / "race" / "minimized.json").exists()
