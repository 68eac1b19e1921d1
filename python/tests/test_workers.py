"""qcheck.parallel.workers on CPU kernels: several processes, one corpus, findings
merged once, a worker that dies restarted with its case saved; and the MPS
rules (qcheck.parallel.mps) against a stand-in for nvidia-cuda-mps-control."""

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import qcheck
from qcheck.parallel.mps import Daemons

import adapters

HERE = Path(__file__).resolve().parent


def test_two_workers_share_one_corpus_and_merge_their_findings(tmp_path):
    result = qcheck.fuzz(adapters.skips_tail_token, workers=2, minutes=0.08, case_size="tiny",
                         corpus=tmp_path / "corpus", findings=tmp_path / "findings", progress=False,
                         max_findings=100000)
    print(result.summary())
    assert result.workers == 2 and not result.restarts
    assert sorted(result.worker_executions) == [0, 1] and all(n > 0 for n in result.worker_executions.values())
    assert result.executions == sum(result.worker_executions.values())
    assert result.findings and all(any(c.endswith("/unwritten") for c in g.classes) for g in result.groups.values())
    # One finding per case: the findings folder holds each case once, and so does the result.
    saved = sorted(p.name for p in (tmp_path / "findings").glob("*.json"))
    assert sorted(f.path.name for f in result.findings) == saved
    assert sum(g.count for g in result.groups.values()) >= len(result.findings)
    assert len(list((tmp_path / "corpus").glob("*.json"))) > 10
    # The workers took in each other's corpus entries as they ran.
    assert result.corpus_loaded > 0


def test_a_worker_that_dies_is_restarted_and_its_case_saved(tmp_path, monkeypatch):
    monkeypatch.setenv("QCHECK_TEST_DIE_ONCE", str(tmp_path / "died"))
    result = qcheck.fuzz(adapters.dies_once, workers=2, minutes=0.12, case_size="tiny",
                         findings=tmp_path / "findings", progress=False)
    print(result.summary())
    assert (tmp_path / "died").exists()
    assert [why for _, why in result.restarts] == ["killed by signal 9"]
    died = [f for f in result.findings if f.signature.startswith("worker died")]
    assert len(died) == 1 and died[0].path.exists()
    text = died[0].path.with_suffix(".txt").read_text()
    assert "died (killed by signal 9)" in text and "replay: python -m qcheck replay" in text
    assert qcheck.run(died[0].case, adapters.correct).passed  # the case itself is fine: the worker died
    assert result.executions > 20  # the run went on


def test_the_command_line_runs_workers(tmp_path):
    env = adapters.child_env()
    done = subprocess.run([sys.executable, "-m", "qcheck", "fuzz", "adapters:correct", "--workers", "2",
                           "--executions", "40", "--findings", str(tmp_path / "f")], cwd=tmp_path, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "workers: 2, none restarted" in done.stderr and "no findings" in done.stderr


def interrupted(args, after, **popen):
    """Runs `args` with SIGINT at its default (a background job ignores it), sends SIGINT after
    `after` seconds: (exit status, seconds from SIGINT to the end, stderr)."""
    with open(popen["cwd"] / "stderr.txt", "wb") as err:
        p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=err,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL), **popen)
        time.sleep(after)
        p.send_signal(signal.SIGINT)
        sent = time.monotonic()
        code = p.wait(timeout=120)
    return code, time.monotonic() - sent, (popen["cwd"] / "stderr.txt").read_text()


def test_ctrl_c_stops_the_workers_and_prints_the_summary(tmp_path):
    code, took, err = interrupted([sys.executable, "-m", "qcheck", "fuzz", "adapters:skips_tail_token", "--workers",
                                   "2", "--minutes", "5", "--max-findings", "100000", "--findings",
                                   str(tmp_path / "f")], 6, cwd=tmp_path, env=adapters.child_env())
    assert code == 1 and took < 60, err  # findings: exit 1, as a run that ended on time
    assert "Traceback" not in err, err
    assert "stopped: interrupted (SIGINT) after " in err and "workers: 2, none restarted" in err, err
    assert re.search(r"qcheck.fuzz: [1-9]\d* executions", err) and "FINDINGS: " in err, err


def test_sigterm_stops_the_workers_as_ctrl_c_does(tmp_path):
    # (a timeout's or a CI job's SIGTERM: before, the parent alone ended and its workers ran on)
    args = [sys.executable, "-m", "qcheck", "fuzz", "adapters:correct", "--workers", "2", "--minutes", "5",
            "--findings", str(tmp_path / "f")]
    with open(tmp_path / "stderr.txt", "wb") as err:
        p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=err, cwd=tmp_path, env=adapters.child_env())
        time.sleep(6)
        p.send_signal(signal.SIGTERM)
        code = p.wait(timeout=120)
    text = (tmp_path / "stderr.txt").read_text()
    assert code == 0 and "stopped: interrupted (SIGTERM) after " in text and "Traceback" not in text, text
    assert re.search(r"qcheck.fuzz: [1-9]\d* executions", text), text
    left = subprocess.run(["pgrep", "-f", f"--findings {tmp_path / 'f'}"], capture_output=True, text=True).stdout
    assert not left.strip(), f"workers left running: {left}"


def test_ctrl_c_ends_one_process_with_its_summary_too(tmp_path):
    code, took, err = interrupted([sys.executable, "-m", "qcheck", "fuzz", "adapters:correct", "--minutes", "5",
                                   "--findings", str(tmp_path / "f")], 4, cwd=tmp_path, env=adapters.child_env())
    assert code == 0 and took < 30 and "Traceback" not in err, err
    assert "stopped: interrupted (SIGINT)" in err and re.search(r"qcheck.fuzz: [1-9]\d* executions", err), err


def test_a_kernel_without_a_name_cannot_have_workers(tmp_path):
    try:
        qcheck.fuzz(lambda t: adapters.correct(t), workers=2, executions=4, findings=tmp_path / "f",
                    progress=False)
    except ValueError as e:
        assert "import by name" in str(e)
    else:
        raise AssertionError("a lambda was given to workers")


def fake_control(tmp_path):
    """A stand-in for nvidia-cuda-mps-control that logs how it was called."""
    log = tmp_path / "control.log"
    script = tmp_path / "nvidia-cuda-mps-control"
    script.write_text("#!/bin/sh\n"
                      f"echo \"$* pipe=$CUDA_MPS_PIPE_DIRECTORY log=$CUDA_MPS_LOG_DIRECTORY "
                      f"gpu=$CUDA_VISIBLE_DEVICES stdin=$(cat -)\" >> {log}\n")
    script.chmod(0o755)
    return str(script), log


def test_mps_daemons_get_private_folders_and_are_stopped(tmp_path):
    control, log = fake_control(tmp_path)
    d = Daemons(tmp_path / "mps", ["3"], "auto", control=control, running=lambda: None)
    assert d.own == ["3"] and "pipes under" in d.note
    set_, unset = d.environment("3")
    assert set_ == {"CUDA_MPS_PIPE_DIRECTORY": str(tmp_path / "mps/gpu3/pipe"),
                    "CUDA_MPS_LOG_DIRECTORY": str(tmp_path / "mps/gpu3/log")} and unset == ["CUDA_VISIBLE_DEVICES"]
    assert (tmp_path / "mps/gpu3/pipe").is_dir()
    d.stop()
    lines = log.read_text().splitlines()
    assert lines[0].startswith(f"-d pipe={tmp_path}/mps/gpu3/pipe log={tmp_path}/mps/gpu3/log gpu=3")
    assert lines[1].startswith(f" pipe={tmp_path}/mps/gpu3/pipe") and lines[1].endswith("stdin=quit")


def test_mps_is_left_alone_where_a_daemon_runs_or_it_is_missing_or_off(tmp_path):
    control, log = fake_control(tmp_path)
    existing = Daemons(tmp_path / "a", ["0"], "auto", control=control, running=lambda: 4242)
    assert existing.own == [] and existing.existing and "pid 4242" in existing.note
    assert existing.environment("0") == ({}, [])
    missing = Daemons(tmp_path / "b", ["0"], "auto", control="", running=lambda: None)
    assert missing.own == [] and "not installed" in missing.note
    off = Daemons(tmp_path / "c", ["0"], "off", control=control, running=lambda: None)
    assert off.own == [] and "MPS off" in off.note
    assert not log.exists()  # nothing was started


def test_the_campaign_reads_the_same_rules(tmp_path):
    control, _ = fake_control(tmp_path)
    env = dict(os.environ, PATH=f"{tmp_path}:{os.environ['PATH']}")
    mps_py = HERE.parent / "qcheck" / "parallel" / "mps.py"
    out = subprocess.run([sys.executable, str(mps_py), "start", str(tmp_path / "mps"), "off", "0"], env=env,
                         capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("own_mps=() existing_mps=0 mps_note="), out


def test_a_worker_whose_cuda_context_died_is_restarted_after_saving_its_case(tmp_path, monkeypatch):
    monkeypatch.setenv("QCHECK_TEST_CUDA_ERROR_ONCE", str(tmp_path / "faulted"))
    result = qcheck.fuzz(adapters.cuda_error_once, workers=2, minutes=0.1, case_size="tiny",
                         findings=tmp_path / "findings", progress=False)
    print(result.summary())
    assert [why for _, why in result.restarts] == ["a CUDA error"]
    assert list(result.groups) == ["kernel raised RuntimeError"] and len(result.findings) == 1
    assert "CUDA error: an illegal memory access" in result.findings[0].path.with_suffix(".txt").read_text()
    assert result.executions > 20 and sorted(result.worker_executions) == [0, 1]  # the run went on
