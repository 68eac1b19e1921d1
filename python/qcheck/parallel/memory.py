"""Memory the harness exhausts is not a bug of the kernel: qcheck.fuzz's
rules for out-of-memory errors (the C++ campaign keeps the same ones,
fuzz/buffers/device_mirror_cuda.cc).

  - Each run is admitted by the GPU ledger (qcheck.parallel.gpu_ledger) where
    QCHECK_GPU_LEDGER names one (the workers of a run get one), asking for
    the case's planned bytes times the margin below.
  - A memory failure is a run that raised torch's OutOfMemoryError, a
    MemoryError, or an error whose text says "out of memory",
    cudaErrorMemoryAllocation, CUDA_ERROR_OUT_OF_MEMORY or a library's
    STATUS_ALLOC_FAILED (from the kernel,
    or from qcheck's own allocation of the case); and a CUDA error in the
    same or the next execution after one (what the out-of-memory error left
    behind, not a fault of the kernel's).
  - It is retried alone before it is called anything: torch's cache
    emptied, then no other run on the device (the ledger's alone()), the
    kernel's allocations measured (torch.cuda.max_memory_allocated around
    each call; tracemalloc on numpy arrays).
      - It passes alone (or fails otherwise: a mismatch is the kernel's, as
        ever): counted, "memory pressure, retried alone: N"; not a finding.
      - It fails alone: a note "needs more memory than the device has
        (planned X bytes, device free Y)", its case in FINDINGS/memory/; not
        a finding. Unless the kernel allocated far more than its outputs
        need (ALLOC_FACTOR times their bytes and ALLOC_SLACK_BYTES more):
        then a finding of its own group, "kernel allocates far more than its
        outputs need", whose text gives both numbers.
      - A CUDA error on the retry: the context may be dead. The process
        stops; a worker hands the case to its next round (a fresh process),
        which retries it alone first; one process notes it.
"""

import time

from ..model import tensors as _tensors
from ..model.out_of_memory import asked_bytes, on_cuda
from ..model.verdict import Verdict, raised_verdict
from .gpu_ledger import RECORD_MIN_BYTES, Ledger, device_memory

# What one run of the Python door can hold on the device, in units of the
# case's planned bytes (its guarded allocations, libqcheck's plan): run A's
# and run B's tensors are both alive until the verdict ...
TENSOR_SETS = 2
# ... and qcheck.model.allocator's poisoned pool is twice the block, taken again
# where run B's block took part of the first one: up to 4 more.
POISON_POOLS = 4
# Without the poisoning, the outputs a wrapper allocates itself (the pool
# held them otherwise).
WRAPPER_OUTPUTS = 1
# Beyond the multiples: the wrapper's other allocations, Triton's launcher,
# a library's workspace, the caching allocator's rounding to its segments.
SLACK_BYTES = 256 << 20
# "Far more than its outputs need": a wrapper holds its outputs and a few
# intermediates their size, and a workspace; past 16 times its outputs and
# 1 GiB more, it computes a size wrong (an overflow, a shape it misread).
ALLOC_FACTOR = 16
ALLOC_SLACK_BYTES = 1 << 30
ALLOC_GROUP = "kernel allocates far more than its outputs need"


def planned_bytes(case):
    """The bytes of the case's guarded allocations (sentinels included), as
    libqcheck plans them: what the C++ side's plan_tensors(c).total_bytes() gives."""
    buffers, _, _ = _tensors.plan(case)
    return sum(b.bytes for b in buffers)


def output_bytes(case):
    buffers, _, _ = _tensors.plan(case)
    return sum(b.bytes for b in buffers if b.is_output)


def reservation(planned, poison_allocator=True):
    """The device bytes one run of a case of `planned` bytes may hold (the constants above)."""
    return planned * (TENSOR_SETS + (POISON_POOLS if poison_allocator else WRAPPER_OUTPUTS)) + SLACK_BYTES


class Outcome:
    """What MemoryRules.run gives the loop: verdict (None where the run is
    no verdict: a note), stop (why the process must stop: a CUDA error after
    an out-of-memory error), retried (it passed alone after one)."""

    def __init__(self, verdict=None, stop=None, retried=False):
        self.verdict, self.stop, self.retried = verdict, stop, retried


class MemoryRules:
    """The memory rules of one fuzz loop (the module's text): run() around
    each case; retried, notes ([{"path", "text"}]) and the ledger's waits
    for the summary."""

    def __init__(self, device, poison_allocator, findings_dir, replay):
        self.device, self.poison_allocator = device, poison_allocator
        self.findings_dir, self.replay = findings_dir, replay  # replay(path): the command that replays a case
        self.ledger = Ledger.from_env(device)
        self.retried, self.notes = 0, []
        self._oom_at = None  # the execution of the last out-of-memory error

    def figures(self):
        ledger = self.ledger
        return {"retried": self.retried, "notes": self.notes,
                "waited_seconds": ledger.waited_seconds if ledger else 0.0, "overdue": ledger.overdue if ledger else 0}

    def free_bytes(self):
        return (self.ledger.memory if self.ledger else device_memory(self.device))()[0]

    @staticmethod
    def _out_of_memory(verdict):
        return verdict is not None and verdict.exit_code == 3 and bool(verdict.json.get("out_of_memory"))

    @staticmethod
    def _cuda_error(verdict):
        return verdict is not None and verdict.exit_code == 3 and "CUDA" in verdict.json.get("reason", "")

    def _attempt(self, case, run_once, measure):
        try:
            return run_once(measure)
        except MemoryError as e:  # (qcheck's own host memory, outside the kernel's call)
            return raised_verdict(case, e)

    def _release_cache(self):
        if on_cuda(self.device):
            import torch
            from ..model.allocator import release_pools
            torch.cuda.synchronize()
            release_pools()  # the poisoned pool's segments too
            torch.cuda.empty_cache()

    def run(self, case, run_once, execution, alone_first=False):
        """Runs the case (run_once(measure) gives its verdict) by the rules.
        alone_first: the case a CUDA error after an out-of-memory error ended
        the last round on: retried alone at once."""
        planned = planned_bytes(case)
        if not alone_first:
            need = reservation(planned, self.poison_allocator)
            if self.ledger is None:
                verdict = self._attempt(case, run_once, None)
            else:
                with self.ledger.admit(need):
                    verdict = self._attempt(case, run_once, None)
                    if need >= RECORD_MIN_BYTES:
                        self._release_cache()  # (a large case's memory goes back before its reservation does)
            oom = self._out_of_memory(verdict)
            follows = (not oom and self._cuda_error(verdict) and self._oom_at is not None and
                       execution - self._oom_at <= 1)
            if oom:
                self._oom_at = execution
            if not oom and not follows:
                return Outcome(verdict)
            if follows:  # (the context may be dead: no retry in this process)
                return Outcome(stop="a CUDA error after an out-of-memory error: " + verdict.json.get("reason", ""))
        self._release_cache()
        measure = {}
        if self.ledger is None:
            again = self._attempt(case, run_once, measure)
        else:
            with self.ledger.alone():
                again = self._attempt(case, run_once, measure)
        self._release_cache()
        if not self._out_of_memory(again):
            if self._cuda_error(again) and not alone_first:
                return Outcome(stop="a CUDA error after an out-of-memory error: " + again.json.get("reason", ""))
            self.retried += 1
            return Outcome(again, retried=True)
        reason = again.json.get("reason", "")
        # (what the kernel held, and the allocation that failed, where it failed in the kernel's call)
        allocated = (measure.get("kernel_bytes", 0) + asked_bytes(reason)) if measure.get("raised_in_kernel") else 0
        outputs = output_bytes(case)
        if allocated > ALLOC_FACTOR * outputs + ALLOC_SLACK_BYTES:
            return Outcome(self._allocates_verdict(case, again, allocated, outputs, planned))
        free = self.free_bytes()
        self.note(case, f"needs more memory than the device has (planned {planned} bytes, device free "
                        f"{'unknown' if free is None else free}): {reason}")
        return Outcome()

    def _allocates_verdict(self, case, failed, allocated, outputs, planned):
        reason = (f"kernel allocates {allocated} bytes, its outputs need {outputs} (planned {planned} bytes; alone on "
                  f"the device): {failed.json.get('reason', '')}")
        report = dict(failed.json, reason=reason, allocated_bytes=allocated, output_bytes=outputs)
        text = "RUNTIME ERROR: " + reason + "\n" + "\n".join(failed.json.get("traceback", [])) + "\n"
        return Verdict(3, ALLOC_GROUP, text, report, [])

    def note(self, case, text):
        """A case that is no finding but wants a look (saved under FINDINGS/memory/)."""
        folder = self.findings_dir / "memory"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{case.digest}.json"
        case.save(path)
        (folder / f"{case.digest}.txt").write_text(f"MEMORY: {text}\n(not a finding)\nreplay: {self.replay(path)}\n")
        self.notes.append({"path": str(path), "text": text, "at": time.time()})
