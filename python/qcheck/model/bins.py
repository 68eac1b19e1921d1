"""A case's semantic bins (libqcheck's: shape classes, T % 16, paths, dtypes,
layouts, alias, value recipes, special values, UE8M0 exponent buckets, the
verdict's class): what the fuzz loop keeps a case for, what the summary and
the HTML report count."""

import ctypes
import functools

from . import _capi
from .case import Case


@functools.lru_cache(maxsize=None)
def bin_count():
    count = ctypes.c_size_t(0)
    _capi.call("qcheck_case_bins", Case.from_seed(0, "tiny")._handle, None, None, 0, ctypes.byref(count))
    return count.value


def case_bins(case, profile=None):
    """fused_q's: the indices of the bins its case reaches (bin_name names
    them). Another op's: the names of the bins its fields reach
    (core/op/any_bins.h: "FIELD=CHOICE", "FIELD=4..7", ...)."""
    if case.op != "fused_q":
        names = _capi.text("qcheck_case_bin_names", case._handle)
        return set(names.split("\n")) if names else set()
    count = ctypes.c_size_t(0)
    bins = ctypes.create_string_buffer(bin_count())
    _capi.call("qcheck_case_bins", case._handle, None if profile is None else profile.encode(), bins, len(bins),
               ctypes.byref(count))
    return {i for i, b in enumerate(bins.raw) if b}


def bin_name(index):
    return _capi.text("qcheck_bin_name", index)
