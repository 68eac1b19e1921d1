"""qcheck.Case: one test case of an op (fused_q's by default, or fused_k's;
every knob as a field; its tensors and values are a pure function of it, so
a case file reproduces every byte)."""

import ctypes
import json
from pathlib import Path

from . import _capi
from .ops import DEFAULT_OP
from .ops import op as lookup


def encode(handle, form):
    """The bytes of the case behind a libqcheck handle (binary, or JSON with its NUL)."""
    needed = ctypes.c_size_t(0)
    message = ctypes.create_string_buffer(1024)
    _capi.lib().qcheck_case_encode(handle, form, None, 0, ctypes.byref(needed), message, len(message))
    out = ctypes.create_string_buffer(needed.value)
    _capi.call("qcheck_case_encode", handle, form, out, needed.value, ctypes.byref(needed))
    return out.raw[:needed.value]


class Case:
    """A case held by libqcheck. Make one with from_seed, load, from_json or
    from_bytes; save it, mutate it, turn it into tensors."""

    def __init__(self, handle):
        self._handle = ctypes.c_void_p(handle)

    def __del__(self):
        if getattr(self, "_handle", None) and self._handle.value:
            _capi.lib().qcheck_case_free(self._handle)
            self._handle = ctypes.c_void_p()

    # --- making cases -----------------------------------------------------------
    @classmethod
    def _made(cls, name, *args):
        out = ctypes.c_void_p()
        _capi.call(name, *args, ctypes.byref(out))
        return cls(out.value)

    @classmethod
    def from_seed(cls, seed, size="usual", op=DEFAULT_OP):
        """A valid case of `op` (qcheck.ops() lists them) from the
        structure-aware mutator's generator; size is "tiny", "usual",
        "default" or "limit" (the fuzz target's --case-size)."""
        lookup(op)  # ValueError naming the ops there are
        if op == DEFAULT_OP:
            return cls._made("qcheck_case_from_seed", ctypes.c_uint64(seed), size.encode())
        return cls._made("qcheck_case_from_seed_op", op.encode(), ctypes.c_uint64(seed), size.encode())

    @classmethod
    def limit_case(cls, seed, execution, index, size):
        """Under size "limit", the case at the hardware's limits that fuzz
        loop execution `execution` is due for (the loop's limit case number
        `index`), else None."""
        out = ctypes.c_void_p()
        _capi.call("qcheck_case_limit", ctypes.c_uint64(seed), ctypes.c_int64(execution), ctypes.c_int64(index),
                   size.encode(), ctypes.byref(out))
        return cls(out.value) if out.value else None

    @classmethod
    def from_bytes(cls, data):
        """The binary form (corpus files, libFuzzer artifacts) or JSON."""
        data = bytes(data)
        return cls._made("qcheck_case_decode", data, len(data))

    @classmethod
    def from_json(cls, text):
        return cls.from_bytes(text.encode() if isinstance(text, str) else text)

    @classmethod
    def load(cls, path):
        return cls.from_bytes(Path(path).read_bytes())

    def mutate(self, seed, size="usual"):
        """A changed copy (one to three fields), valid and within the size."""
        return Case._made("qcheck_case_mutate", self._handle, ctypes.c_uint64(seed), size.encode())

    def mutate_warm(self, seed, size="usual"):
        """A changed copy with the same compile_key: values, positions, scales
        and seed, and T, P and paddings within their classes (the
        compile-aware fuzz loop's mutation on a kernel's warm variants)."""
        return Case._made("qcheck_case_mutate_warm", self._handle, ctypes.c_uint64(seed), size.encode())

    def cross_over(self, other, seed, size="usual"):
        return Case._made("qcheck_case_cross_over", self._handle, other._handle, ctypes.c_uint64(seed),
                          size.encode())

    # --- reading and writing --------------------------------------------------------
    def validate(self):
        """Raises QcheckError (status 2) naming the field and the limit when invalid."""
        _capi.call("qcheck_case_validate", self._handle)

    def is_valid(self):
        try:
            self.validate()
            return True
        except _capi.QcheckError:
            return False

    def to_bytes(self):
        return encode(self._handle, _capi.FORM_BINARY)

    def to_json(self):
        return encode(self._handle, _capi.FORM_JSON).rstrip(b"\0").decode()

    def save(self, path):
        """JSON when the name ends in .json, else the binary form; written
        whole or not at all."""
        path = Path(path)
        data = self.to_json().encode() if path.suffix == ".json" else self.to_bytes()
        partial = path.with_name(path.name + ".partial")
        partial.write_bytes(data)
        partial.replace(path)

    @property
    def fields(self):
        """Every field by its JSON name (num_tokens, mqa_heads, query_path, q_scale, ...).
        Decoded once per case (a Case never changes); a copy each time."""
        if getattr(self, "_fields", None) is None:
            self._fields = json.loads(self.to_json())
        return dict(self._fields)

    @property
    def op(self):
        """The op this case is of ("fused_q", "fused_k"; its JSON form names
        it as "op" for every op but fused_q). What takes a fused_k case so
        far: making, saving and mutating it, its tensors, qcheck.check,
        qcheck.run and qcheck.expected (include/qcheck/qcheck.h); the rest
        refuses it with a QcheckError naming itself. Asked of the library once
        (a Case never changes): the fuzz loop asks per execution."""
        if getattr(self, "_op", None) is None:
            self._op = _capi.lib().qcheck_case_op(self._handle).decode()
        return self._op

    def __getitem__(self, name):
        return self.fields[name]

    @property
    def digest(self):
        """The 16 hex digits corpus files are named by."""
        return _capi.text("qcheck_case_digest", self._handle)

    @property
    def compile_key(self):
        """What a JIT compiler specializing as Triton does by default sees of
        this (valid) case: paths, flags, dtypes, dims with T and P as classes,
        the classes of the strides (1, multiple of 16, 64-bit, other) and the
        pointers' alignment (include/qcheck/qcheck.h)."""
        if getattr(self, "_compile_key", None) is None:
            self._compile_key = _capi.text("qcheck_case_compile_key", self._handle)
        return self._compile_key

    def __str__(self):
        return _capi.text("qcheck_case_describe", self._handle)

    def __repr__(self):
        return f"qcheck.Case({self})"

    def __eq__(self, other):
        return isinstance(other, Case) and self.to_bytes() == other.to_bytes()

    def __hash__(self):
        return hash(self.to_bytes())

    # --- tensors ---------------------------------------------------------------------
    def numpy_inputs(self, poison=0):
        """Every tensor as a numpy view into a guarded allocation of its own
        (outputs pre-poisoned, ql_nope aliased where the case says), with the
        case's strides: see qcheck.model.tensors."""
        from .tensors import make_tensors
        return make_tensors(self, poison, device=None)

    def torch_inputs(self, device="cuda", poison=0):
        """The same as torch tensors on `device` (bf16 as torch.bfloat16, e4m3
        as torch.float8_e4m3fn)."""
        from .tensors import make_tensors
        return make_tensors(self, poison, device=device)
