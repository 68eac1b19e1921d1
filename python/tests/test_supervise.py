"""The workers' restart rules (qcheck.parallel.supervise), with shell commands for
workers: what the C++ campaign and the Python door's workers both follow."""

import subprocess
import sys
import time

import pytest

from qcheck.parallel import supervise
from qcheck.parallel.supervise import Ended, Supervisor


def run(tmp_path, commands, ended, deadline_seconds=30, max_findings=0):
    """Supervise one worker per command (a shell line; {round} is the round) until every worker is done."""
    def start(slot):
        return subprocess.Popen(["sh", "-c", commands[slot.index].replace("{round}", str(slot.round))])
    s = Supervisor(tmp_path, len(commands), time.monotonic() + deadline_seconds, start, ended, max_findings)
    end = time.monotonic() + deadline_seconds + 10
    while s.poll():
        assert time.monotonic() < end, "the supervisor did not finish"
        time.sleep(0.05)
    s.stop(grace=1)
    return s


def test_a_worker_whose_time_is_up_is_not_restarted(tmp_path):
    s = run(tmp_path, ["exit 0"], lambda slot, code, ran: None if code == 0 else Ended("?"))
    assert [slot.round for slot in s.slots] == [1] and s.restarts == []


def test_findings_restart_until_the_cap_and_cuda_errors_do_not_count(tmp_path):
    # Rounds 1-3 end in a CUDA error (an artifact, not counted), every later one in a counted finding.
    def ended(slot, code, ran):
        return Ended("a CUDA error", artifact=True) if slot.round <= 3 else Ended("finding", True, True)
    s = run(tmp_path, ["exit 1"], ended, max_findings=4)
    lines = [line for _, line in s.restarts]
    assert lines == ["a CUDA error"] * 3 + ["finding"] * 4 + ["stopped after 4 findings (max_findings = 4)"]
    assert (tmp_path / "w0.restarts").read_text().splitlines() == lines
    assert s.slots[0].round == 7


def test_a_worker_that_cannot_start_is_given_up_after_quick_failures(tmp_path, monkeypatch):
    monkeypatch.setattr(supervise, "PAUSES", (0.01, 0.02))
    s = run(tmp_path, ["exit 3", "sleep 1; exit 0"], lambda slot, code, ran: None if code == 0 else Ended("no artifact"))
    assert s.slots[0].round == supervise.QUICK_FAILURES and s.slots[1].round == 1
    assert s.restarts[-1] == (0, f"gave up after {supervise.QUICK_FAILURES} quick failures")
    assert sum(line == "no artifact" for _, line in s.restarts) == supervise.QUICK_FAILURES


def test_a_quick_failure_waits_before_its_restart(tmp_path):
    # Two quick failures without an artifact: each restart waits PAUSES[0] (1 s).
    began = time.monotonic()
    s = run(tmp_path, ["[ {round} -ge 3 ] || exit 3"], lambda slot, code, ran: None if code == 0 else Ended("x"))
    assert s.slots[0].round == 3 and time.monotonic() - began >= 2 * supervise.PAUSES[0]


def test_no_restart_past_the_deadline_and_stop_ends_every_worker(tmp_path):
    s = run(tmp_path, ["sleep 0.5; exit 1"], lambda slot, code, ran: Ended("finding", True, True), deadline_seconds=1)
    assert s.slots[0].round == 1  # it ended within the last 2 s before the deadline
    slow = Supervisor(tmp_path, 2, time.monotonic() + 60,
                      lambda slot: subprocess.Popen(["sleep", "60"]), lambda *a: Ended("?"))
    began = time.monotonic()
    slow.stop(grace=5)
    assert time.monotonic() - began < 5 and not slow.poll()
    assert all(slot.process.returncode == -15 for slot in slow.slots)
    assert (tmp_path / "stop").exists()


def test_the_script_runs_the_workers_it_is_given(tmp_path):
    # supervise.py libfuzzer RUN DEADLINE SEED0 MAX N FIRST: a Ray campaign's worker runs worker FIRST alone,
    # from its own command files, with its own seeds ({seed} = SEED0 + 1000 * round + index).
    run_dir, logs = tmp_path / "run", tmp_path / "logs"
    run_dir.mkdir()
    logs.mkdir()
    for i in range(3):
        (run_dir / f"w{i}.args").write_text(f"sh\n-c\necho worker {i} seed $0\n{{seed}}\n-artifact_prefix={tmp_path}/a.\n"
                                            f"{tmp_path}/corpus\n")
    code = subprocess.run([sys.executable, supervise.__file__, "libfuzzer", str(run_dir), str(time.time() + 30), "7", "0",
                           "1", "2"], timeout=60).returncode
    assert code == 0
    assert sorted(p.name for p in logs.iterdir()) == ["w2.r1.log"]
    assert (logs / "w2.r1.log").read_text() == "worker 2 seed 1009\n"
