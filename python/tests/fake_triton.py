"""A stand-in for Triton in the compile-aware tests (Triton is not needed
here): a JIT function that specializes its arguments by Triton 3.6's default
rules and, on each new specialization, "compiles" and calls
triton.knobs.runtime.jit_post_compile_hook with the keyword arguments Triton
passes it (key, repr, fn with .name, compile with signature, constants and
configs), so qcheck.fuzzing.compile sees it as it sees Triton. The arguments are
numpy arrays (a pointer: its dtype and 16-byte alignment), ints (1, divisible
by 16, 32 or 64 bits) and the values of constexpr parameters."""

import sys
import types


def install(monkeypatch):
    """A module `triton` with knobs.runtime.jit_post_compile_hook (None), as Triton 3.4 and later have."""
    runtime = types.SimpleNamespace(jit_post_compile_hook=None)
    monkeypatch.setitem(sys.modules, "triton", types.SimpleNamespace(knobs=types.SimpleNamespace(runtime=runtime)))
    return runtime


def next_power_of_2(n):
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


class JitFunctionInfo:
    """What Triton passes as the hook's fn: module, name, jit_function."""

    def __init__(self, module, name, jit_function):
        self.module, self.name, self.jit_function = module, name, jit_function


class FakeJit:
    """A JIT function named `name` with parameters `params`, those in
    `constexprs` tl.constexpr. run(**arguments) compiles (once per
    specialization) and returns the specialization; compiled lists them."""

    def __init__(self, name, params, constexprs=()):
        self.name, self.params, self.constexprs = name, list(params), set(constexprs)
        self.compiled = []
        self._cache = set()

    def _specialize(self, name, value):
        if name in self.constexprs or value is None:
            return "constexpr", value
        if isinstance(value, bool):
            return "u1", None
        if isinstance(value, int):
            if value == 1:
                return "constexpr", 1
            return ("i32" if -2**31 <= value < 2**31 else "i64"), ("D" if value % 16 == 0 else None)
        if isinstance(value, float):
            return "fp32", None
        return "*" + value.dtype.name, ("D" if value.ctypes.data % 16 == 0 else None)

    def run(self, **arguments):
        spec = [self._specialize(p, arguments[p]) for p in self.params]
        key = str(spec)
        if key not in self._cache:
            self._cache.add(key)
            self.compiled.append(key)
            hook = sys.modules["triton"].knobs.runtime.jit_post_compile_hook
            if hook is not None:
                signature = {p: kind for p, (kind, _) in zip(self.params, spec)}
                constants = {(i,): arguments[p] for i, (p, (kind, _)) in enumerate(zip(self.params, spec))
                             if kind == "constexpr"}
                attributes = {(i,): [["tt.divisibility", 16]] for i, (_, a) in enumerate(spec) if a == "D"}
                hook(key=key, repr=f"{self.name}[...]", fn=JitFunctionInfo(__name__, self.name, self),
                     compile={"key": key, "signature": signature, "constants": constants, "configs": [attributes],
                              "num_warps": 4, "is_warmup": False},
                     is_manual_warmup=False, already_compiled=False)
        return key
