"""Adapters for the fuzz, replay and plugin tests (numpy "kernels" that
write the oracle's outputs, and planted bugs on top of that)."""

import os
import signal
import time

import numpy as np

import qcheck


def correct(tensors):
    want = qcheck.expected(tensors.case)
    for name, info in tensors.info.items():
        if info.role == 1:
            tensors[name][...] = want[name]


def skips_tail_token(tensors):
    """A missing tail guard's twin: the last token of a partial block of 16 is left out."""
    correct(tensors)
    if tensors.case["num_tokens"] % 16 != 0:
        poison = 0xFF if tensors.poison == 0 else 0x5B
        last = tensors["index_q_fp8"][-1] if tensors.case["has_indexer"] else tensors["query_out"][-1]
        last[...] = poison if last.dtype == np.uint8 else poison * 0x0101


def raises_on_odd_heads(tensors):
    if tensors.case["mqa_heads"] % 2 == 1:
        raise ValueError("odd H is not supported")
    correct(tensors)


_calls = [0]


def races(tensors):
    """A race's twin: every other call flips a bit of the first output element."""
    correct(tensors)
    _calls[0] += 1
    if _calls[0] % 2 == 0:
        tensors["query_out"].reshape(-1)[:1] ^= 1


def divides_by_tail(tensors):
    """A wrapper's ZeroDivisionError on a partial last block (its message names T)."""
    correct(tensors)
    tail = tensors.case["num_tokens"] % 16
    if tail != 0:
        raise ZeroDivisionError(f"integer division by zero with {tensors.case['num_tokens']} tokens")


class CompilationError(Exception):
    """The kind of exception a kernel compiler (Triton) raises."""


def fails_to_compile_separate(tensors):
    if tensors.case["query_path"] == "bf16-separate":
        raise CompilationError("at 12:4: unsupported layout")
    correct(tensors)


def two_bugs(tensors):
    """A latent bug in most cases (the first weight's last bit, wherever the
    indexer runs) and a rarer one (the last token's first query element when
    T % 16 == 15)."""
    correct(tensors)
    case = tensors.case
    if case["has_indexer"]:
        _flip_last_bit(tensors["index_weights_out"], (0,) * tensors["index_weights_out"].ndim)
    if case["num_tokens"] % 16 == 15:
        _flip_last_bit(tensors["query_out"], (-1, 0, 0))


def _flip_last_bit(array, index):
    if array.size == 0:
        return
    bits = array.view(np.uint32) if array.dtype == np.float32 else array
    bits[index] ^= 1


COMPILE_SECONDS = 0.03
_compiled = set()


def compiles_per_key(tensors):
    """A JIT kernel's twin (no Triton, no hook): its first call on each
    compile key (Triton's default specialization, Case.compile_key) sleeps
    COMPILE_SECONDS, the "compile"; then it writes the oracle's outputs."""
    key = tensors.case.compile_key
    if key not in _compiled:
        _compiled.add(key)
        time.sleep(COMPILE_SECONDS)
    correct(tensors)


def _first_anywhere(marker):
    """True for the one call, over every process, that creates the file
    `marker` (O_EXCL: two workers cannot both be first)."""
    if not marker:
        return False
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        return True
    except FileExistsError:
        return False


def dies_once(tensors):
    """A worker's crash: the first call anywhere (the file QCHECK_TEST_DIE_ONCE
    names does not exist yet) ends its process with SIGKILL."""
    if _first_anywhere(os.environ.get("QCHECK_TEST_DIE_ONCE")):
        os.kill(os.getpid(), signal.SIGKILL)
    correct(tensors)


_started = time.monotonic()


def kills_its_actor_once(tensors):
    """A Ray worker's actor dying (a node's OOM killer, a lost node) beside a
    missing tail guard: after the worker has run 5 s, the first call anywhere
    (QCHECK_TEST_KILL_ACTOR_ONCE names a file not yet there) kills the
    worker's parent, its actor, with SIGKILL (the worker then gets SIGTERM)."""
    skips_tail_token(tensors)
    if time.monotonic() - _started > 5 and _first_anywhere(os.environ.get("QCHECK_TEST_KILL_ACTOR_ONCE")):
        os.kill(os.getppid(), signal.SIGKILL)
        time.sleep(30)


def child_env(**extra):
    """The environment of a child process (python -m qcheck, pytest) in these
    tests: this folder on its path for the adapters, and the package from the
    source tree unless the tests run against an installed qcheck
    (QCHECK_TESTS_INSTALLED=1: tools/wheel/test_wheel.sh)."""
    here = os.path.dirname(os.path.abspath(__file__))
    paths = [here] if os.environ.get("QCHECK_TESTS_INSTALLED") else [os.path.dirname(here), here]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(paths), **extra)


def cuda_error_once(tensors):
    """A GPU fault's twin on the CPU: the first call anywhere (QCHECK_TEST_CUDA_ERROR_ONCE names a file
    not yet there) raises as torch does after an illegal memory access."""
    if _first_anywhere(os.environ.get("QCHECK_TEST_CUDA_ERROR_ONCE")):
        raise RuntimeError("CUDA error: an illegal memory access was encountered")
    correct(tensors)


class OutOfMemoryError(RuntimeError):
    """torch.cuda.OutOfMemoryError's twin (torch's is a RuntimeError of that name)."""


def _oom(asked="20.00 MiB"):
    return OutOfMemoryError(f"CUDA out of memory. Tried to allocate {asked}. GPU 0 has a total capacity of "
                            "139.80 GiB of which 17.06 MiB is free. (a twin: no device was asked)")


def _alone_or_raise():
    """Holds the file QCHECK_TEST_OVERLAP names (flock) for the call's time;
    a call that finds another process holding it overlaps that one: it
    raises the out-of-memory error that two runs too many for the device
    would give. Returns the file's descriptor (close it to end the call)."""
    import fcntl
    fd = os.open(os.environ["QCHECK_TEST_OVERLAP"], os.O_CREAT | os.O_RDWR, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise _oom() from None
    time.sleep(0.004)  # (a run long enough for the other worker's to meet it)
    return fd


def oom_when_runs_overlap(tensors):
    """A correct kernel on a device that holds one run at a time: a run that
    overlaps another worker's raises torch's out-of-memory error."""
    fd = _alone_or_raise()
    try:
        correct(tensors)
    finally:
        os.close(fd)


def oom_when_runs_overlap_and_skips_tail_token(tensors):
    """The same device, and a real bug (skips_tail_token)."""
    fd = _alone_or_raise()
    try:
        skips_tail_token(tensors)
    finally:
        os.close(fd)


def oom_on_odd_heads(tensors):
    """A case the device cannot hold even alone (odd H), asking for 20 MiB
    at a time as a wrapper's outputs would."""
    if tensors.case["mqa_heads"] % 2 == 1:
        raise _oom()
    correct(tensors)


def allocates_terabytes_on_odd_heads(tensors):
    """A wrapper that computes its workspace's size wrong (odd H): it asks
    for 2 TiB, far more than its outputs need."""
    if tensors.case["mqa_heads"] % 2 == 1:
        raise MemoryError("Unable to allocate 2.00 TiB for an array with shape (1099511627776,) and data type "
                          "uint16")
    correct(tensors)


def oom_then_cuda_error_once(tensors):
    """The first call anywhere (QCHECK_TEST_OOM_ONCE names a file not yet
    there) raises an out-of-memory error, and this process's next call the
    CUDA error a context left broken by it gives: the worker stops, and its
    next round retries the case alone (where it passes)."""
    if _oom_state["next_raises"]:
        _oom_state["next_raises"] = False
        raise RuntimeError("CUDA error: an illegal memory access was encountered")
    if _first_anywhere(os.environ.get("QCHECK_TEST_OOM_ONCE")):
        _oom_state["next_raises"] = True
        raise _oom()
    correct(tensors)


_oom_state = {"next_raises": False}
