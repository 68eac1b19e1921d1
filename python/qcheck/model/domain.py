"""qcheck.Domain: the cases a kernel supports, stated the way kernels of this
family state them, and the decorator that attaches it (qcheck.kernel).

    domain = qcheck.Domain(paths=["bf16-packed"], rope="neox", weights_out_dtypes="bf16",
                           unit_inner_stride=True, rope_dim=64, index_dim=128,
                           power_of_two=("mqa_heads",), max_tokens=65535,
                           relations=["mqa_heads <= 4 * indexer_heads"])

    @qcheck.kernel(domain=domain, profile="vllm-triton")
    def my_adapter(tensors): ...

Every tool asks the same model, in libqcheck (fuzz/domain/domain.h): run,
check, against, fuzz (repairs each case, then counts what stays outside),
minimize (proposes nothing outside), python -m qcheck replay and the pytest
plugin. A case outside is exit 2 with the reason, never a finding.

Arguments (each optional; left out: any value):
  paths                 query paths: "fp8-packed", "bf16-packed", "bf16-separate"
  indexer               True: with the indexer only; False: without it only
  alias                 False: ql_nope apart only; "only": aliased into query_out only
  rope                  the indexer's RoPE styles: "neox", "interleaved"
  cache_dtypes          both caches ("f32", "bf16"); or mqa_cache_dtypes, indexer_cache_dtypes
  weights_dtypes, weights_out_dtypes
  contiguous            True (every tensor) or tensor names that must be contiguous
  unit_inner_stride     True or tensor names whose innermost stride must be 1 (of qcheck's
                        layouts only index_weights' column stride can be other than 1)
  num_tokens, mqa_heads, indexer_heads, index_dim, rope_dim, nope_dim, cache_rows:
                        an int, a list of ints, a range (its start, stop - 1 and, when the
                        start is a multiple of it, its step), or a dict of min, max, values,
                        power_of_two, multiple_of
  min_DIM, max_DIM      bounds (max_tokens, min_tokens: num_tokens)
  power_of_two          dimension names that must be powers of two
  multiple_of           {dim: k}
  relations             ["mqa_heads <= 4 * indexer_heads", "nope_dim % rope_dim == 0", ...]
"""

import ctypes
import json
from pathlib import Path

from . import _capi
from .case import Case

DIMS = ("num_tokens", "mqa_heads", "indexer_heads", "index_dim", "rope_dim", "nope_dim", "cache_rows")
TENSORS = ("q_pe", "ql_nope", "index_q", "index_weights", "mqa_cache", "indexer_cache", "query_out", "index_q_fp8",
           "index_weights_out")
_SHORT = {"tokens": "num_tokens"}


def _names(value):
    return [value] if isinstance(value, str) else list(value)


def _dim_rule(name, value):
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, bool):
        raise TypeError(f"qcheck.Domain: {name}={value!r}: give an int, a list, a range or a dict")
    if isinstance(value, int):
        return {"values": [value]}
    if isinstance(value, range):
        if len(value) == 0 or value.step < 1:
            raise ValueError(f"qcheck.Domain: {name}={value!r} is empty or runs downwards")
        rule = {"min": value.start, "max": value[-1]}
        if value.step > 1:
            if value.start % value.step != 0:
                return {"values": list(value)}
            rule["multiple_of"] = value.step
        return rule
    return {"values": [int(v) for v in value]}


class Domain:
    """A kernel's supported cases (the module's doc lists the arguments).
    outside(case) is None or the first reason the case is outside;
    contains(case) is True or False; fit(case) is a new case moved inside
    with the smallest changes. json is the canonical form (Domain.from_json,
    load and save read and write it; tools take it as --domain FILE)."""

    def __init__(self, paths=None, indexer=None, alias=None, rope=None, cache_dtypes=None, mqa_cache_dtypes=None,
                 indexer_cache_dtypes=None, weights_dtypes=None, weights_out_dtypes=None, contiguous=None,
                 unit_inner_stride=None, power_of_two=(), multiple_of=None, relations=(), **dims):
        spec = {}
        if paths is not None:
            spec["query_paths"] = _names(paths)
        if indexer is not None:
            spec["indexer"] = [bool(indexer)]
        if alias is not None:
            spec["alias"] = ["exact-front"] if alias == "only" else ["none", "exact-front"] if alias else ["none"]
        if rope is not None:
            spec["indexer_ropes"] = _names(rope)
        for key, value in (("mqa_cache_dtypes", mqa_cache_dtypes or cache_dtypes),
                           ("indexer_cache_dtypes", indexer_cache_dtypes or cache_dtypes),
                           ("weights_dtypes", weights_dtypes), ("weights_out_dtypes", weights_out_dtypes)):
            if value is not None:
                spec[key] = _names(value)
        for key, value in (("contiguous", contiguous), ("unit_inner_stride", unit_inner_stride)):
            if value is True:
                spec[key] = list(TENSORS)
            elif value:
                spec[key] = _names(value)
        rules = {}
        for key, value in dims.items():
            bound = key[:4] if key.startswith(("min_", "max_")) else None
            name = _SHORT.get(key[4:], key[4:]) if bound else key
            if name not in DIMS:
                raise TypeError(f"qcheck.Domain: unknown argument {key!r} (dimensions: {', '.join(DIMS)}; "
                                f"bounds min_DIM, max_DIM, max_tokens)")
            if bound:
                rules.setdefault(name, {})[bound[:3]] = int(value)
            else:
                rules.setdefault(name, {}).update(_dim_rule(name, value))
        for name in _names(power_of_two):
            rules.setdefault(name, {})["power_of_two"] = True
        for name, k in (multiple_of or {}).items():
            rules.setdefault(name, {})["multiple_of"] = int(k)
        if rules:
            spec["dims"] = rules
        if relations:
            spec["relations"] = _names(relations)
        self._handle = ctypes.c_void_p()
        self._parse(json.dumps(spec))

    def _parse(self, text):
        handle = ctypes.c_void_p()
        _capi.call("qcheck_domain_parse", text.encode(), ctypes.byref(handle))
        self._handle = handle

    def __del__(self):
        if getattr(self, "_handle", None) and self._handle.value:
            _capi.lib().qcheck_domain_free(self._handle)
            self._handle = ctypes.c_void_p()

    @classmethod
    def from_json(cls, text):
        """The JSON form (fuzz/domain/domain_json.h); a bad key raises QcheckError naming it."""
        domain = cls.__new__(cls)
        domain._handle = ctypes.c_void_p()
        domain._parse(text if isinstance(text, str) else json.dumps(text))
        return domain

    @classmethod
    def load(cls, path):
        return cls.from_json(Path(path).read_text())

    def save(self, path):
        Path(path).write_text(self.json + "\n")

    @property
    def json(self):
        return _capi.text("qcheck_domain_json", self._handle)

    def __repr__(self):
        return f"qcheck.Domain.from_json({self.json!r})"

    def __eq__(self, other):
        return isinstance(other, Domain) and self.json == other.json

    def outside(self, case):
        """None when the case is inside, else the first reason it is not."""
        try:
            _capi.call("qcheck_domain_check_case", self._handle, case._handle)
            return None
        except _capi.QcheckError as e:
            return str(e)

    def contains(self, case):
        return self.outside(case) is None

    def fit(self, case):
        """The case moved inside with the smallest changes (it may still be
        outside where rules contradict, or invalid: check both)."""
        out = ctypes.c_void_p()
        _capi.call("qcheck_domain_fit_case", self._handle, case._handle, ctypes.byref(out))
        return Case(out.value)


def kernel(domain=None, profile=None, op=None):
    """A decorator that declares what an adapter supports and the profile it
    implements: @qcheck.kernel(domain=qcheck.Domain(...), profile="vllm-triton").
    op: the op whose cases it runs (qcheck.ops(); None: fused_q), as
    @qcheck.kernel(op="fused_k") for a key-side kernel (qcheck.fuzz makes
    that op's cases; a Domain is fused_q's)."""
    if domain is not None and not isinstance(domain, Domain):
        raise TypeError("qcheck.kernel: domain must be a qcheck.Domain")

    def declare(function):
        function.domain = domain
        function.profile = profile
        function.op = op
        return function

    return declare


def domain_of(kernel_):
    """The kernel's declared qcheck.Domain, or None."""
    domain = getattr(kernel_, "domain", None)
    return domain if isinstance(domain, Domain) else None


def outside(kernel_, case):
    """None when the kernel takes the case, else why not: its declared
    domain, then a finer check of its own (a plugin's supports callback)."""
    domain = domain_of(kernel_)
    why = domain.outside(case) if domain is not None else None
    check = getattr(kernel_, "outside", None)
    if why is None and callable(check):
        why = check(case)
    return why


def fit(kernel_, case):
    """The case moved into the kernel's domain (unchanged when it declares none)."""
    domain = domain_of(kernel_)
    return domain.fit(case) if domain is not None else case
