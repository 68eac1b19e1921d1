"""Compile-aware fuzzing: knowing when an execution compiled, and keeping
most executions on variants the kernel has compiled already.

A Triton kernel compiles one variant per specialization of its arguments
(tl.constexpr values, pointer dtypes and alignment, each int's equality to 1
and divisibility by 16). Production kernels of the fused_q family make the
head counts and head dims constexpr, so nearly every new case compiles (tens
of ms to a second) and a plain fuzz loop spends 98 % of its time compiling
(../shared/GPU.md). The loop in qcheck.fuzz therefore:

  - keys each case by what the compiler sees: the kernel's own
    `compile_key(case)` where it gives one, else Case.compile_key (the
    specialization Triton applies by default, computed in libqcheck);
  - knows when an execution compiled: Triton's post-compile hook once it
    has fired in the run (Triton is loaded and the kernel compiles through
    it), otherwise the kernel's time against the median of the executions
    that did not compile;
  - spends a bounded share of its time (explore_share, default 20 %) on
    cases with keys not yet compiled in this process, chosen among a few
    candidates by the semantic bins they would add, and the rest on warm
    mutations (Case.mutate_warm: values, positions, scales, T and paddings
    within their classes) of cases whose key is warm.
"""

import statistics
import sys
from collections import deque

EXPLORE_CANDIDATES = 4  # cases generated per exploring execution; the one adding most bins runs
PARENTS_PER_KEY = 16  # cases kept per warm key as parents of warm mutations
COMPILE_FLOOR_SECONDS = 0.02  # a kernel time this far above the warm median counts as a compile


class CompileWatch:
    """Counts the compiles of Triton kernels in this process through
    triton.knobs.runtime.jit_post_compile_hook (Triton 3.4 and later) or
    JITFunction.compiled_hook (earlier), chained to any hook already set.
    Installed once Triton is imported (refresh() looks again: an adapter may
    import it on its first call); close() restores the previous hook.
    count is None while no hook is installed: timing decides then."""

    def __init__(self):
        self.count, self.source, self._restore = None, None, None
        self.refresh()

    def refresh(self):
        if self.source is not None or "triton" not in sys.modules:
            return
        triton = sys.modules["triton"]
        runtime = getattr(getattr(triton, "knobs", None), "runtime", None)
        if runtime is not None and hasattr(runtime, "jit_post_compile_hook"):
            owner, name = runtime, "jit_post_compile_hook"
        else:
            try:
                from triton.runtime.jit import JITFunction
            except ImportError:
                return
            if not hasattr(JITFunction, "compiled_hook"):
                return
            owner, name = JITFunction, "compiled_hook"
        previous = getattr(owner, name)

        def hook(*args, **kwargs):
            self.count += 1
            return previous(*args, **kwargs) if previous is not None else None

        setattr(owner, name, hook)
        self.count, self.source = 0, f"{getattr(owner, '__name__', 'triton.knobs.runtime')}.{name}"
        self._restore = lambda: setattr(owner, name, previous)

    def close(self):
        if self._restore is not None:
            self._restore()
            self._restore = None


class CompileSchedule:
    """The compile-aware choice of the next case and its accounting.

    warm: keys this process has run (a variant compiled, or found in the
    kernel's cache). explore_now(elapsed) says whether the next execution
    may take a new key; record() counts what it cost."""

    def __init__(self, kernel, explore_share=0.2, aware=True):
        self.key_of = getattr(kernel, "compile_key", None) or (lambda case: case.compile_key)
        self.explore_share, self.aware = explore_share, aware
        self.watch = CompileWatch()
        self.warm = set()
        self.parents = {}  # warm key -> recent cases with it
        self.parent_keys = []
        self.kernel_times = deque(maxlen=101)  # kernel seconds of executions that did not compile
        self.explore_seconds = 0.0
        self.compiles = 0
        self.compile_seconds = 0.0
        self.warm_executions = 0
        self.warm_compiles = 0

    def explore_now(self, elapsed):
        return not self.aware or not self.parent_keys or self.explore_seconds <= self.explore_share * elapsed

    def add_parent(self, case, key):
        cases = self.parents.get(key)
        if cases is None:
            cases = self.parents[key] = []
            self.parent_keys.append(key)
        cases.append(case)
        if len(cases) > PARENTS_PER_KEY:
            del cases[0]

    def warm_parent(self, rng):
        return rng.choice(self.parents[rng.choice(self.parent_keys)])

    def before(self):
        """The hook's count before an execution (None without a hook)."""
        self.watch.refresh()
        return self.watch.count

    def compiled(self, count_before, kernel_seconds):
        # The hook decides once it has fired in this run: Triton may be loaded
        # (by another test, a library) while the kernel compiles otherwise.
        if count_before is not None and self.watch.count > 0:
            return self.watch.count > count_before
        if len(self.kernel_times) < 3:
            return kernel_seconds > COMPILE_FLOOR_SECONDS
        median = statistics.median(self.kernel_times)
        return kernel_seconds > max(3 * median, median + COMPILE_FLOOR_SECONDS)

    def record(self, case, key, count_before, kernel_seconds, seconds):
        """After an execution of `case` (key `key`) whose kernel phase took
        kernel_seconds of its `seconds` in all."""
        was_warm = key in self.warm
        compiled = self.compiled(count_before, kernel_seconds)
        if compiled:
            self.compiles += 1
            median = statistics.median(self.kernel_times) if self.kernel_times else 0.0
            self.compile_seconds += max(0.0, kernel_seconds - median)
        else:
            self.kernel_times.append(kernel_seconds)
        if was_warm:
            self.warm_executions += 1
            self.warm_compiles += compiled
        else:
            self.explore_seconds += seconds
            self.warm.add(key)
        self.add_parent(case, key)
        return compiled

    def figures(self):
        return {"compiles": self.compiles, "compile_seconds": self.compile_seconds,
                "warm_executions": self.warm_executions, "warm_compiles": self.warm_compiles,
                "explore_seconds": self.explore_seconds,
                "source": self.watch.source if self.watch.count else "timing",
                "aware": self.aware, "explore_share": self.explore_share}

    def close(self):
        self.watch.close()


ADDITIVE_FIGURES = ("compiles", "compile_seconds", "warm_executions", "warm_compiles", "explore_seconds")


def add_figures(into, other):
    """Adds a worker's figures() to `into` (the workers' merged figures)."""
    if not into:
        into.update(other)
    else:
        for k in ADDITIVE_FIGURES:
            into[k] += other[k]
