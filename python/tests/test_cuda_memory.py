"""qcheck.parallel.memory's rules with a real device's out-of-memory errors (skipped
without torch and CUDA; the GPU gate runs them on the H200): another process
that holds nearly all the device's memory through the GPU ledger makes a
kernel's allocation fail, and the retry alone waits for it and passes; one
that holds it outside the ledger leaves the retry failing, a note with the
bytes; a kernel that asks for twice the device is a finding of its own. The
same two with the C++ fuzz target (the bundle's bin/fused_q_fuzzer) on a
limit case of 4.5 GB: the device mirror's retry alone passes, or the case is
a memory note and the target goes on (no abort)."""

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import qcheck
from qcheck.model.tensors import plan as plan_tensors
from qcheck.model.verdict import run
from qcheck.parallel.memory import ALLOC_GROUP, MemoryRules

import adapters

torch = pytest.importorskip("torch", reason="torch is not installed: the CUDA memory tests need it")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device visible to torch", allow_module_level=True)

LEAVE = 512 << 20  # what the hog leaves free: room for the case, not for the kernel's 1 GiB
HOG = textwrap.dedent("""
    import fcntl, sys, time, torch
    from qcheck.parallel.gpu_ledger import Ledger, device_key, device_memory
    folder, hold, marker, through_ledger = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
    leave, until_alone = int(sys.argv[5]), sys.argv[6] == "1"
    def a_run_alone_waits(ledger):
        # (a run alone holds the turnstile exclusively: the ledger's own shared try fails)
        if not ledger._try_lock("turnstile", fcntl.LOCK_SH):
            return True
        ledger._unlock("turnstile")
        return False
    def hog(ledger=None):
        free, _ = torch.cuda.mem_get_info()
        held = torch.empty(free - leave, dtype=torch.uint8, device="cuda")
        torch.cuda.synchronize()
        open(marker, "w").write("in")
        if until_alone:
            end = time.monotonic() + hold
            while time.monotonic() < end and not a_run_alone_waits(ledger):
                time.sleep(0.05)
            time.sleep(1.0)  # (a wait the retry's time shows)
        else:
            time.sleep(hold)
        del held
        torch.cuda.empty_cache()  # (back to the device before the ledger lets the retry in)
    if through_ledger:
        ledger = Ledger(folder, device_key("cuda"), device_memory("cuda"))
        with ledger.admit(1000):
            hog(ledger)
    else:
        hog()
""")


def asking(nbytes):
    """A correct kernel whose wrapper first allocates `nbytes` of scratch on the device."""
    def kernel(tensors):
        scratch = torch.empty(nbytes, dtype=torch.uint8, device=tensors["query_out"].device)
        del scratch
        want = qcheck.expected(tensors.case)
        for name, info in tensors.info.items():
            if info.role == 1:
                host = np.ascontiguousarray(want[name])
                host = host.view(np.int16) if host.dtype == np.uint16 else host
                tensors[name].copy_(torch.from_numpy(host).view(tensors[name].dtype))
    return kernel


def start_hog(tmp_path, hold, through_ledger, leave=LEAVE, until_alone=False):
    """A process holding all but `leave` bytes of the device for `hold` seconds,
    or, with until_alone, until a run alone waits for it (at most `hold`)."""
    torch.empty(1, device="cuda")  # (this process's context first: the hog leaves `leave` beside it)
    marker = tmp_path / "hog.in"
    hog = subprocess.Popen([sys.executable, "-c", HOG, str(tmp_path / "ledger"), str(hold), str(marker),
                            "1" if through_ledger else "0", str(leave), "1" if until_alone else "0"],
                           env=adapters.child_env())
    end = time.monotonic() + 60
    while not marker.exists():
        assert hog.poll() is None and time.monotonic() < end, "the hog did not take the device's memory"
        time.sleep(0.05)
    return hog


def rules(tmp_path, monkeypatch):
    monkeypatch.setenv("QCHECK_GPU_LEDGER", str(tmp_path / "ledger"))
    return MemoryRules("cuda", False, tmp_path / "findings", lambda path: f"replay {path}")


def test_an_out_of_memory_error_beside_a_run_of_the_ledger_passes_alone(tmp_path, monkeypatch):
    memory = rules(tmp_path, monkeypatch)
    case = qcheck.Case.from_seed(1, "tiny")
    hog = start_hog(tmp_path, 3.0, through_ledger=True)
    try:
        kernel = asking(1 << 30)
        outcome = memory.run(case, lambda measure: run(case, kernel, "cuda", memory=measure, poison_allocator=False), 0)
    finally:
        hog.wait(timeout=60)
    assert outcome.retried and outcome.verdict is not None and outcome.verdict.passed, outcome.verdict
    assert memory.retried == 1 and not memory.notes
    assert memory.ledger.waited_seconds > 1  # it waited for the hog's run to end


def test_an_out_of_memory_error_that_stays_alone_is_a_note(tmp_path, monkeypatch):
    memory = rules(tmp_path, monkeypatch)
    case = qcheck.Case.from_seed(1, "tiny")
    hog = start_hog(tmp_path, 30.0, through_ledger=False)  # (outside the ledger: the retry alone cannot wait for it)
    try:
        kernel = asking(1 << 30)
        outcome = memory.run(case, lambda measure: run(case, kernel, "cuda", memory=measure, poison_allocator=False), 0)
    finally:
        hog.kill()
        hog.wait()
    assert outcome.verdict is None and outcome.stop is None and memory.retried == 0
    (note,) = memory.notes
    planned = sum(b.bytes for b in plan_tensors(case)[0])
    assert note["text"].startswith(f"needs more memory than the device has (planned {planned} bytes, device free "), note
    assert "OutOfMemoryError" in note["text"] and "Tried to allocate " in note["text"], note


def test_a_kernel_that_asks_for_twice_the_device_is_a_finding(tmp_path, monkeypatch):
    memory = rules(tmp_path, monkeypatch)
    case = qcheck.Case.from_seed(1, "tiny")
    total = torch.cuda.mem_get_info()[1]
    kernel = asking(2 * total)
    outcome = memory.run(case, lambda measure: run(case, kernel, "cuda", memory=measure, poison_allocator=False), 0)
    assert outcome.verdict is not None and outcome.verdict.signature == ALLOC_GROUP, outcome.verdict
    outputs = sum(b.bytes for b in plan_tensors(case)[0] if b.is_output)
    assert f"its outputs need {outputs} " in outcome.verdict.text and "kernel allocates " in outcome.verdict.text


def fuzzer():
    """The C++ fuzz target beside this package (a GPU bundle's DIR/bin), or QCHECK_FUZZ_BIN's."""
    folder = Path(os.environ.get("QCHECK_FUZZ_BIN") or Path(qcheck.__file__).resolve().parents[2] / "bin")
    path = folder / "fused_q_fuzzer"
    if not path.exists():
        pytest.skip(f"no fused_q_fuzzer in {folder} (a GPU bundle's bin/, or QCHECK_FUZZ_BIN)")
    return path


def run_target(tmp_path, monkeypatch, through_ledger, hold):
    """fused_q_fuzzer on a 4.5 GB limit case while a hog leaves 2 GiB of the device: (exit, output, status).
    Through the ledger the hog holds until the target's retry alone waits for it (the target's start,
    inputs and oracle before its first run take seconds of their own)."""
    target = fuzzer()
    case = next(c for c in (qcheck.Case.limit_case(k, 64, k, "limit") for k in range(16))
                if sum(b.bytes for b in plan_tensors(c)[0]) > 4 << 30)
    case.save(tmp_path / "limit.json")
    hog = start_hog(tmp_path, hold, through_ledger, leave=2 << 30, until_alone=through_ledger)
    try:
        env = dict(os.environ, QCHECK_GPU_LEDGER=str(tmp_path / "ledger"), QCHECK_STATUS_FILE=str(tmp_path / "status"))
        done = subprocess.run([str(target), "--backend=cuda-blocked", "--case-size=limit", "-len_control=0", "-rss_limit_mb=0",
                               "-malloc_limit_mb=0", str(tmp_path / "limit.json")], env=env, capture_output=True,
                              text=True, timeout=300)
    finally:
        hog.kill()
        hog.wait()
    status = dict(line.split(" ", 1) for line in (tmp_path / "status").read_text().splitlines())
    return done.returncode, done.stdout + done.stderr, status


def test_the_cpp_target_retries_its_out_of_memory_run_alone(tmp_path, monkeypatch):
    code, out, status = run_target(tmp_path, monkeypatch, through_ledger=True, hold=120.0)
    assert code == 0 and "qcheck fused_q finding" not in out, out[-3000:]
    assert status["memory_retried"] == "1" and status["memory_notes"] == "0", status


def test_the_cpp_target_notes_a_case_that_fails_alone(tmp_path, monkeypatch):
    code, out, status = run_target(tmp_path, monkeypatch, through_ledger=False, hold=120.0)
    assert code == 0 and "qcheck fused_q finding" not in out, out[-3000:]
    assert "==== qcheck fused_q memory note (not a finding): needs more memory than the device has (planned " in out, \
        out[-3000:]
    assert status["memory_notes"] == "1" and status["memory_retried"] == "0", status
