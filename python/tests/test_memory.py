"""Memory the harness exhausts is not a bug of the kernel (qcheck.parallel.memory) and
the GPU ledger behind it (qcheck.parallel.gpu_ledger), on numpy kernels: an
out-of-memory error that two runs at once cause is retried alone and passes,
one that stays alone is a note with its bytes, a kernel that asks for far
more than its outputs need is a finding of its own, a real bug in the same
run is still found; the ledger's exclusivity, turns and stale records."""

import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import qcheck
from qcheck.model.tensors import plan as plan_tensors
from qcheck.model.out_of_memory import asked_bytes, is_out_of_memory
from qcheck.parallel import gpu_ledger
from qcheck.parallel.gpu_ledger import Ledger, Record, admitted, read_records
from qcheck.parallel.memory import ALLOC_GROUP

import adapters

HERE = Path(__file__).resolve().parent
GB = 10 ** 9


# --- the fuzz loop's rules ---------------------------------------------------------------------


def test_out_of_memory_from_runs_that_overlap_is_retried_alone_and_no_finding(tmp_path, monkeypatch):
    monkeypatch.setenv("QCHECK_TEST_OVERLAP", str(tmp_path / "device"))
    result = qcheck.fuzz(adapters.oom_when_runs_overlap, workers=2, minutes=0.1, case_size="tiny",
                         findings=tmp_path / "findings", progress=False)
    print(result.summary())
    assert not result.findings and not result.restarts, result.summary()
    assert result.memory["retried"] > 0 and not result.memory["notes"], result.memory
    assert "memory pressure, retried alone: " in result.summary() and "no findings" in result.summary()
    assert result.executions > 20 and sorted(result.worker_executions) == [0, 1]


def test_a_real_bug_in_the_same_run_is_still_found(tmp_path, monkeypatch):
    monkeypatch.setenv("QCHECK_TEST_OVERLAP", str(tmp_path / "device"))
    result = qcheck.fuzz(adapters.oom_when_runs_overlap_and_skips_tail_token, workers=2, minutes=0.1,
                         case_size="tiny", findings=tmp_path / "findings", progress=False, max_findings=100000)
    print(result.summary())
    assert result.findings and result.memory["retried"] > 0, result.summary()
    assert not any("OutOfMemoryError" in g for g in result.groups), result.summary()
    assert all(any(c.endswith("/unwritten") for c in g.classes) for g in result.groups.values()), result.summary()


def test_out_of_memory_even_alone_is_a_note_with_the_bytes(tmp_path, monkeypatch):
    monkeypatch.setenv("QCHECK_FAKE_DEVICE_FREE_BYTES", "123456789")
    result = qcheck.fuzz(adapters.oom_on_odd_heads, workers=2, minutes=0.08, case_size="tiny",
                         findings=tmp_path / "findings", progress=False)
    print(result.summary())
    assert not result.findings and not result.restarts, result.summary()
    notes = result.memory["notes"]
    assert notes and result.memory["retried"] == 0
    for note in notes:
        case = qcheck.Case.load(note["path"])
        assert case["mqa_heads"] % 2 == 1
        planned = sum(b.bytes for b in plan_tensors(case)[0])
        assert note["text"].startswith(f"needs more memory than the device has (planned {planned} bytes, device "
                                       "free 123456789): kernel raised OutOfMemoryError"), note
        saved = Path(note["path"]).with_suffix(".txt").read_text()
        assert "(not a finding)" in saved and "replay: python -m qcheck replay " in saved
    assert "cases need more memory than the device has (not findings" in result.summary()
    assert not list((tmp_path / "findings").glob("*.json"))  # the findings folder holds no finding


def test_a_kernel_that_allocates_far_more_than_its_outputs_need_is_a_finding(tmp_path):
    result = qcheck.fuzz(adapters.allocates_terabytes_on_odd_heads, executions=40, case_size="tiny",
                         findings=tmp_path / "findings", progress=False)
    assert list(result.groups) == [ALLOC_GROUP], result.summary()
    finding = result.findings[0]
    outputs = sum(b.bytes for b in plan_tensors(finding.case)[0] if b.is_output)
    # 2 TiB asked for (the failed allocation), and the little the kernel held before it
    allocated = int(re.search(r"kernel allocates (\d+) bytes", finding.text).group(1))
    assert 2 << 40 <= allocated < (2 << 40) + (1 << 20), finding.text
    assert f"its outputs need {outputs} " in finding.text, finding.text
    assert not result.memory["notes"]


def test_a_cuda_error_after_an_out_of_memory_error_is_retried_alone_in_the_next_round(tmp_path, monkeypatch):
    monkeypatch.setenv("QCHECK_TEST_OOM_ONCE", str(tmp_path / "oom"))
    result = qcheck.fuzz(adapters.oom_then_cuda_error_once, workers=2, minutes=0.1, case_size="tiny",
                         findings=tmp_path / "findings", progress=False)
    print(result.summary())
    assert (tmp_path / "oom").exists()
    assert not result.findings, result.summary()
    assert [why.split(" (")[0] for _, why in result.restarts] == ["a CUDA error after an out-of-memory error"]
    assert result.memory["retried"] == 1 and not result.memory["notes"], result.memory


def test_a_cuda_error_without_one_is_still_a_finding(tmp_path, monkeypatch):
    # (tests/test_workers.py has the run; here the classification the rules rest on)
    assert not is_out_of_memory(RuntimeError("CUDA error: an illegal memory access was encountered"))
    assert is_out_of_memory(adapters.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB"))
    assert is_out_of_memory(RuntimeError("Triton Error [CUDA]: out of memory"))
    assert is_out_of_memory(RuntimeError("cudaMalloc failed: cudaErrorMemoryAllocation"))
    assert is_out_of_memory(MemoryError())
    assert asked_bytes("CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0") == 2 << 30
    assert asked_bytes("Unable to allocate 1.50 MiB for an array") == 3 << 19
    assert asked_bytes("CUDA error: unknown") == 0


# --- the ledger ----------------------------------------------------------------------------------


def rec(pid, nbytes, kind="shared", state="running", since=0.0):
    return Record(pid, 0, nbytes, kind, state, since)


def test_admission_rules():
    mine = rec(1, 10 * GB, state="waiting", since=5.0)
    # Alone, or beside nothing running: in, whatever the size.
    assert admitted(mine, [], 1 * GB, 100 * GB, 4)
    assert admitted(mine, [rec(2, 50 * GB, "large", "waiting", 1.0)], 1 * GB, 100 * GB, 4)
    # Shared: the others' running bytes and the headroom (3 workers' unrecorded runs) come off the free bytes.
    headroom = 3 * gpu_ledger.RECORD_MIN_BYTES
    assert admitted(mine, [rec(2, 20 * GB)], 30 * GB + headroom, 100 * GB, 4)
    assert not admitted(mine, [rec(2, 20 * GB)], 30 * GB + headroom - 1, 100 * GB, 4)
    # A waiting limit case keeps its place: a shared one may not take the memory it waits for.
    waiting_large = rec(3, 40 * GB, "large", "waiting", 1.0)
    assert not admitted(mine, [rec(2, 20 * GB), waiting_large], 69 * GB, 100 * GB, 4)
    assert admitted(mine, [rec(2, 20 * GB), waiting_large], 70 * GB + headroom, 100 * GB, 4)
    # Limit cases take turns: not beside another one running, not before an earlier one waiting.
    big = rec(1, 30 * GB, "large", "waiting", since=5.0)
    assert not admitted(big, [rec(2, 30 * GB, "large", "running")], 1000 * GB, 1000 * GB, 4)
    assert not admitted(big, [rec(2, 1 * GB), rec(3, 30 * GB, "large", "waiting", 4.0)], 1000 * GB, 1000 * GB, 4)
    assert admitted(big, [rec(2, 1 * GB), rec(3, 30 * GB, "large", "waiting", 6.0)], 1000 * GB, 1000 * GB, 4)
    # Free bytes unknown (the numpy path): only the turns apply.
    assert admitted(mine, [rec(2, 10 ** 15)], None, None, 4)


# One record as both sides write it: fuzz/admission/gpu_ledger_test.cc parses the same line.
SHARED_LINE = "4242 987654 5368709120 large running 1700000000.500000\n"


def test_the_record_format_the_cpp_side_shares():
    (r,) = read_records("# pid start bytes kind state since\n" + SHARED_LINE + "not a record\n")
    assert (r.pid, r.start, r.bytes, r.kind, r.state, r.since) == (4242, 987654, 5368709120, "large", "running",
                                                                  1700000000.5)
    assert r.line() == SHARED_LINE


def dead_pid():
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_records_of_processes_that_are_gone_are_dropped(tmp_path):
    pid = dead_pid()
    (tmp_path / "host.ledger").write_text(f"{pid} 1 {10 ** 15} large running 1.0\n")
    ledger = Ledger(tmp_path, "host", memory=lambda: (100 * GB, 100 * GB), workers=2, max_wait=5)
    start = time.monotonic()
    with ledger.admit(60 * GB):  # a limit case (over 100 GB / 4): the dead one's would block it
        text = (tmp_path / "host.ledger").read_text()
        assert str(pid) not in text and f"{os.getpid()} " in text and " large running " in text, text
    assert time.monotonic() - start < 2
    assert f"{os.getpid()} " not in (tmp_path / "host.ledger").read_text()
    ledger.close()


CHILD = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from qcheck.parallel.gpu_ledger import Ledger
    folder, mode, hold, marker = sys.argv[1], sys.argv[2], float(sys.argv[3]), Path(sys.argv[4])
    ledger = Ledger(folder, "host", memory=lambda: (100 * 10 ** 9, 100 * 10 ** 9), workers=2)
    with (ledger.alone() if mode == "alone" else ledger.admit(int(float(mode)))):
        marker.write_text(str(time.time()))
        time.sleep(hold)
    marker.with_suffix(".out").write_text(str(time.time()))
""")


def child(tmp_path, mode, hold, name):
    marker = tmp_path / f"{name}.in"
    p = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path / "ledger"), mode, str(hold), str(marker)],
                         env=adapters.child_env())
    return p, marker


def wait_for(path, seconds=20):
    end = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < end, f"{path} never appeared"
        time.sleep(0.01)
    return float(path.read_text())


def test_a_run_alone_waits_for_the_runs_in_flight_and_lets_none_in(tmp_path):
    ledger = Ledger(tmp_path / "ledger", "host", memory=lambda: (100 * GB, 100 * GB), workers=2)
    first, first_in = child(tmp_path, "1000", 1.0, "first")  # a small run in flight for 1 s
    first_at = wait_for(first_in)
    with ledger.alone():
        alone_at = time.time()
        second, second_in = child(tmp_path, "1000", 0.0, "second")
        time.sleep(0.8)
        assert not second_in.exists(), "a run started while one ran alone"
        left_at = time.time()
    assert alone_at >= first_at + 1.0 - 0.05, "the run alone began beside a run in flight"
    assert wait_for(second_in) >= left_at - 0.05
    for p in (first, second):
        assert p.wait(timeout=30) == 0
    ledger.close()


def test_limit_cases_take_turns(tmp_path):
    ledger = Ledger(tmp_path / "ledger", "host", memory=lambda: (100 * GB, 100 * GB), workers=2)
    first, first_in = child(tmp_path, str(40 * GB), 2.0, "first")  # over 100 GB / 4: a limit case, for 2 s
    first_at = wait_for(first_in)
    assert ledger.large(40 * GB) and not ledger.large(10 * GB)
    with ledger.admit(10 * GB):  # a shared one runs beside it (60 GB left)
        assert time.time() < first_at + 2.0, "a shared run waited for a limit case that left it room"
    with ledger.admit(40 * GB):  # a second limit case waits for the first to end
        assert time.time() >= first_at + 2.0 - 0.05, "two limit cases ran at once"
    assert first.wait(timeout=30) == 0
    ledger.close()


def test_a_long_wait_shows_and_is_bounded(tmp_path):
    ledger = Ledger(tmp_path / "ledger", "host", memory=lambda: (100 * GB, 100 * GB), workers=2, max_wait=1.5)
    seen = []
    ledger.on_wait = seen.append
    first, first_in = child(tmp_path, "alone", 4.0, "first")
    wait_for(first_in)
    start = time.monotonic()
    with ledger.admit(1000):
        took = time.monotonic() - start
        assert not (tmp_path / "first.out").exists()  # it ran anyway, past the bound
    assert 1.4 < took < 3.5 and ledger.overdue == 1, took
    assert any(s and s.startswith("waiting 1 s for GPU memory: another worker's out-of-memory retry") for s in seen), seen
    assert seen[-1] is None  # (the status is cleared once the wait ends)
    assert first.wait(timeout=30) == 0
    ledger.close()


def test_a_wait_given_up_holds_nothing(tmp_path):
    ledger = Ledger(tmp_path / "ledger", "host", memory=lambda: (100 * GB, 100 * GB), workers=2)
    first, first_in = child(tmp_path, "alone", 1.0, "first")
    wait_for(first_in)
    ledger.give_up = lambda: True  # (the run's time is up)
    for request in (lambda: ledger.admit(1000), lambda: ledger.admit(60 * GB), ledger.alone):
        try:
            with request():
                raise AssertionError("admitted beside a run alone")
        except gpu_ledger.Abandoned:
            pass
    assert first.wait(timeout=30) == 0
    records = tmp_path / "ledger" / "host.ledger"
    assert not records.exists() or f"{os.getpid()} " not in records.read_text()
    ledger.give_up = None
    second, second_in = child(tmp_path, "alone", 0.0, "second")  # nothing of ours is left held
    wait_for(second_in, seconds=5)
    assert second.wait(timeout=30) == 0
    ledger.close()


def test_the_fake_device_free_bytes_hook_is_checked(monkeypatch):
    monkeypatch.setenv("QCHECK_FAKE_DEVICE_FREE_BYTES", "lots")
    try:
        gpu_ledger.device_memory(None)
    except ValueError as e:
        assert "QCHECK_FAKE_DEVICE_FREE_BYTES='lots'" in str(e)
    else:
        raise AssertionError("a bad QCHECK_FAKE_DEVICE_FREE_BYTES was taken")
    monkeypatch.setenv("QCHECK_FAKE_DEVICE_FREE_BYTES", "77")
    assert gpu_ledger.device_memory("cuda:0")() == (77, 77)
