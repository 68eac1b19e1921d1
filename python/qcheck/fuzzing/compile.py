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
    within their classes) of cases whose key is warm;
  - learns the key from what compiled: a kernel's wrapper may pass what
    qcheck's tensors do not show (torch.empty_like of a strided input has
    dense strides; a block size from the row count of a flattened view), so
    an execution on a key taken as warm may still compile. The hook names
    each compile's specialization (every argument's type, constexpr value
    and divisibility); a key on which an execution taken as warm compiled is
    scheduled from then on by the case's geometry (every field but the data:
    values, positions, scales, seed), which decides everything a wrapper
    passes, and the summary names the argument that differed (predicted: the
    key's earlier variant, or where the key had compiled none, as when the
    wrapper skipped the launch, the nearest variant compiled; compiled: this
    one).
"""

import json
import statistics
import sys
from collections import deque, namedtuple

EXPLORE_CANDIDATES = 4  # cases generated per exploring execution; the one adding most bins runs
PARENTS_PER_KEY = 16  # cases kept per warm key as parents of warm mutations
COMPILE_FLOOR_SECONDS = 0.02  # a kernel time this far above the warm median counts as a compile
GEOMETRY_TRIES = 8  # warm mutations tried for one that keeps the parent's geometry, before a new seed alone
# A case's data: what a kernel reads from its tensors, never what a wrapper passes as a shape or a stride.
DATA_FIELDS = frozenset(("positions", "values", "q_scale", "softmax_scale", "head_scale", "seed", "edits", "profile"))

# The key of a case whose predicted key proved too coarse: the predicted key and the case's geometry.
GeometryKey = namedtuple("GeometryKey", "predicted geometry")


def geometry(case):
    """Every field of `case` but its data (DATA_FIELDS), as one text."""
    return json.dumps({k: v for k, v in case.fields.items() if k not in DATA_FIELDS}, sort_keys=True)


def with_new_seed(case, seed):
    """A copy of `case` with new values from `seed`, all else the same."""
    from ..model.case import Case
    return Case.from_json(json.dumps(dict(case.fields, seed=seed & (2**64 - 1))))


def _argument_class(kind, attributes):
    text = str(kind)
    for name, value in attributes:
        if name == "tt.divisibility":
            text += f" aligned to {value}" if text.startswith("*") else f" divisible by {value}"
        else:
            text += f" {name}={value}"
    return text


def specialization(payload):
    """(kernel, ((argument, class), ...)): what one compile specialized, read
    from the keyword arguments Triton passes its post-compile hook: fn (its
    .name), compile = {signature: {argument: type, "constexpr" for a
    constexpr or an int equal to 1}, constants: {(index,): value}, configs:
    [{(index,): [["tt.divisibility", 16]]}]}. A payload of another form
    gives the one pseudo-argument ("key", its key)."""
    fn = payload.get("fn")
    kernel = str(getattr(fn, "name", None) or getattr(fn, "__name__", None) or "kernel")
    compiled = payload.get("compile")
    signature = compiled.get("signature") if isinstance(compiled, dict) else None
    try:
        constants = compiled.get("constants") or {}
        configs = compiled.get("configs") or [{}]
        attributes = configs[0] if isinstance(configs[0], dict) else {}
        spec = []
        for i, (argument, kind) in enumerate(signature.items()):
            if kind == "constexpr":
                spec.append((str(argument), f"={constants.get((i,), constants.get(argument, '?'))}"))
            else:
                spec.append((str(argument), _argument_class(kind, attributes.get((i,), ()))))
        return kernel, tuple(spec)
    except (AttributeError, TypeError, ValueError):
        return kernel, (("key", str(payload.get("key"))),)


def differences(before, after):
    """(argument, class before, class after) of each argument whose class differs between two specializations."""
    b, a = dict(before), dict(after)
    return ([(arg, b.get(arg, "absent"), cls) for arg, cls in a.items() if b.get(arg) != cls] +
            [(arg, cls, "absent") for arg, cls in b.items() if arg not in a])


class CompileWatch:
    """Counts the compiles of Triton kernels in this process through
    triton.knobs.runtime.jit_post_compile_hook (Triton 3.4 and later) or
    JITFunction.compiled_hook (earlier), chained to any hook already set.
    Installed once Triton is imported (refresh() looks again: an adapter may
    import it on its first call); close() restores the previous hook.
    count is None while no hook is installed: timing decides then. reports:
    specialization() of each compile since the caller last cleared it."""

    def __init__(self):
        self.count, self.source, self._restore = None, None, None
        self.reports = []
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
            try:
                self.reports.append(specialization(kwargs))
            except Exception:  # a hook of ours must never fail the kernel's launch
                self.reports.append(("kernel", (("key", "unreadable"),)))
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
    may take a new key; record() counts what it cost and learns from a
    compile on a key taken as warm (the module's text)."""

    def __init__(self, kernel, explore_share=0.2, aware=True):
        # (an op without compile keys yet, fused_k: every case its own key, and the schedule not aware)
        self.predict = getattr(kernel, "compile_key", None) or (
            lambda case: case.compile_key if case.op == "fused_q" else case.digest)
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
        self.variants = {}  # predicted key -> [(kernel, specialization)] compiled on it
        self.kernel_variants = set()  # every (kernel, specialization) compiled
        self.missed = {}  # predicted key -> compiles on it while it was warm
        self.by_geometry = set()  # predicted keys scheduled by the case's geometry
        self.learned = {}  # what a compile on a warm key showed, in words -> [keys, an example]
        self.geometry_compiles = 0  # compiles on a warm geometry key: the kernel specializes on data

    def key_of(self, case):
        """The key the schedule files `case` under: its predicted key, or
        with the geometry where that key proved too coarse."""
        key = self.predict(case)
        return GeometryKey(key, geometry(case)) if key in self.by_geometry else key

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

    def warm_child(self, rng, seed, case_size):
        """A warm mutation of a case with a warm key: Case.mutate_warm keeps
        the predicted key; under a geometry key, one that keeps the
        parent's geometry too (else the parent with a new seed)."""
        key = rng.choice(self.parent_keys)
        parent = rng.choice(self.parents[key])
        if not isinstance(key, GeometryKey):
            return parent.mutate_warm(seed, case_size)
        for i in range(GEOMETRY_TRIES):
            child = parent.mutate_warm((seed + i) & (2**64 - 1), case_size)
            if geometry(child) == key.geometry:
                return child
        return with_new_seed(parent, seed)

    def before(self):
        """The hook's count before an execution (None without a hook)."""
        self.watch.refresh()
        self.watch.reports.clear()
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
        reports = list(self.watch.reports)
        if compiled:
            self.compiles += 1
            median = statistics.median(self.kernel_times) if self.kernel_times else 0.0
            self.compile_seconds += max(0.0, kernel_seconds - median)
        else:
            self.kernel_times.append(kernel_seconds)
        predicted = key.predicted if isinstance(key, GeometryKey) else key
        if was_warm:
            self.warm_executions += 1
            self.warm_compiles += compiled
            if compiled and isinstance(key, GeometryKey):
                self.geometry_compiles += 1
            elif compiled:
                self._learn(predicted, reports)
        else:
            self.explore_seconds += seconds
        known = self.variants.setdefault(predicted, [])
        known += [r for r in reports if r not in known]
        self.kernel_variants.update(reports)
        key = self.key_of(case)  # (a geometry key where this execution showed the predicted one too coarse)
        self.warm.add(key)
        self.add_parent(case, key)
        return compiled

    def _learn(self, predicted, reports):
        """A compile on the warm key `predicted`: the key is scheduled by
        geometry from now on, and what the compile showed is counted."""
        self.missed[predicted] = self.missed.get(predicted, 0) + 1
        self.by_geometry.add(predicted)
        if predicted in self.parents:  # its parents mutate across geometries: no longer warm parents
            del self.parents[predicted]
            self.parent_keys.remove(predicted)
        for text, example in self._explain(predicted, reports):
            entry = self.learned.setdefault(text, [0, example])
            entry[0] += 1

    def _explain(self, predicted, reports):
        """(what differed, an example of the classes) per compile of a miss on
        `predicted`: the arguments whose class differs from the key's earlier
        variant; where the key had none, the nearest variant compiled only as
        the example (it may be another key's)."""
        if not reports:
            return [("no specialization reported (compiles told by timing)", "")]
        out = []
        for kernel, spec in reports:
            earlier = [s for k, s in self.variants.get(predicted, []) if k == kernel]
            pool = earlier or [s for k, s in self.kernel_variants if k == kernel and s != spec]
            diff = min((differences(s, spec) for s in pool), key=len, default=[])
            before = "predicted" if earlier else "there"
            example = ", ".join(f"{a} {before} {b}, compiled {c}" for a, b, c in diff[:3])
            if not earlier:
                out.append((f"{kernel}: nothing compiled on the key before (a launch skipped, as at T = 0, or its "
                            "variant compiled on another key)", example and "the nearest variant compiled: " + example))
            elif diff:
                more = f" (+{len(diff) - 3} more)" if len(diff) > 3 else ""
                out.append((f"{kernel} argument {', '.join(a for a, _, _ in diff[:3])}{more} differed from the key's "
                            "earlier variant", example))
            else:
                out.append((f"{kernel}: the key's variant compiled again (other options, or another device)", ""))
        return out

    def figures(self):
        return {"compiles": self.compiles, "compile_seconds": self.compile_seconds,
                "warm_executions": self.warm_executions, "warm_compiles": self.warm_compiles,
                "explore_seconds": self.explore_seconds, "keys_missed": len(self.missed),
                "keys_by_geometry": len(self.by_geometry), "geometry_compiles": self.geometry_compiles,
                "learned": {text: list(entry) for text, entry in self.learned.items()},
                "source": self.watch.source if self.watch.count else "timing",
                "aware": self.aware, "explore_share": self.explore_share}

    def close(self):
        self.watch.close()
