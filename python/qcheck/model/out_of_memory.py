"""What a run records about memory, for the memory rules to act on
(qcheck.parallel.memory): whether an exception says memory ran out, the
bytes an allocation asked for, and what the kernel held during its call
(measuring, around each call of qcheck.run with memory=)."""

import re
from contextlib import contextmanager

_OOM_TYPES = ("OutOfMemoryError", "MemoryError", "_ArrayMemoryError")
_OOM_TEXT = re.compile(r"out of memory|cudaErrorMemoryAllocation|CUDA_ERROR_OUT_OF_MEMORY|Unable to allocate|"
                       r"STATUS_ALLOC_FAILED", re.I)  # (the last: cuBLAS's, cuDNN's)
_UNITS = {"B": 1, "bytes": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40, "PiB": 1 << 50}
_ASKED = re.compile(r"(?:Tried to allocate|Unable to allocate)\s+([0-9.]+)\s*(B|bytes|KiB|MiB|GiB|TiB|PiB)")


def is_out_of_memory(error):
    """Whether an exception says memory ran out (torch's, numpy's, a CUDA
    runtime's or driver's, Triton's launcher's)."""
    return (isinstance(error, MemoryError) or type(error).__name__ in _OOM_TYPES or
            bool(_OOM_TEXT.search(str(error).split("\n", 1)[0])))


def asked_bytes(text):
    """The bytes an allocation asked for, as torch ("Tried to allocate 2.00
    GiB") and numpy ("Unable to allocate 1.00 TiB") say; 0 where unsaid."""
    m = _ASKED.search(text or "")
    return int(float(m.group(1)) * _UNITS[m.group(2)]) if m else 0


def on_cuda(device):
    return device is not None and str(device).startswith("cuda")


@contextmanager
def measuring(device, into):
    """Around one call of the kernel: into["kernel_bytes"] becomes the most it
    held beyond what was allocated before (the largest over the calls), and
    into["raised_in_kernel"] True where it raised."""
    if on_cuda(device):
        import torch
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats(device)
        base = torch.cuda.memory_allocated(device)
        peak = lambda: torch.cuda.max_memory_allocated(device) - base  # noqa: E731
        stop = lambda: None  # noqa: E731
    else:
        import tracemalloc  # numpy reports its arrays to it
        started = not tracemalloc.is_tracing()
        if started:
            tracemalloc.start()
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        peak = lambda: tracemalloc.get_traced_memory()[1] - base  # noqa: E731
        stop = tracemalloc.stop if started else (lambda: None)
    try:
        yield
    except BaseException:
        into["raised_in_kernel"] = True
        raise
    finally:
        into["kernel_bytes"] = max(into.get("kernel_bytes", 0), peak())
        stop()
