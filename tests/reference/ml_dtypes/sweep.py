#!/usr/bin/env python3
"""numerics/e4m3fnuz and numerics/e2m1 against ml_dtypes, over every f32 bit pattern.

ml_dtypes (pinned in requirements.txt beside this file) implements float8_e4m3fnuz and
float4_e2m1fn on its own; our conversions come from libqcheck_narrow_exports (narrow_float_exports.cc)
through ctypes. Every one of the 2^32 inputs is checked under every rule, in chunks of 2^22 patterns
spread over worker processes. Where a rule of ours differs from ml_dtypes' by design, the inputs where
the two agree are compared with ml_dtypes and the others with the rule as stated:

  e4m3fnuz overflow-nan        ml_dtypes' own rule: equal everywhere.
  e4m3fnuz satfinite           ml_dtypes(clamp(x, -240, 240)): where |x| >= 248 (the first value that
                               rounds above 240) and x is not NaN, ml_dtypes gives the NaN 0x80 and the
                               rule +-240, ml_dtypes' code of +-240; elsewhere equal.
  e4m3fnuz satfinite-inf-nan   the same, but +-Inf -> 0x80.
  e2m1 cvt-rn                  ml_dtypes saturates and keeps -0 as cvt.rn does; equal but for NaN,
                               where ml_dtypes gives 0x8 or 0x0 and the rule the placeholder 0x7.
  e2m1 cvt-rn-no-neg-zero      cvt-rn with 0x8 -> 0x0.
  e2m1 sglang-thresholds       cvt-rn-no-neg-zero, but the three ties where round-to-nearest-even goes
                               up, |x| = 0.75, 1.75, 3.5, take the code below (0.5, 1.5, 3).

ml_dtypes' side of each rule (which inputs it sends to 0x80) is checked too, so a change in ml_dtypes
shows up as a failure, not as inputs silently left out. Also checked: the decoders on every code, and
the pair packer on every pair of nibbles.

    sweep.py --library PATH [--workers N] [--patterns START:STOP]

Exit 0 when everything matches, 1 on a mismatch or when ml_dtypes is not the pinned version or not
importable (run_sweep.sh skips, exit 77, only when ml_dtypes cannot be installed).
"""
import argparse
import concurrent.futures
import ctypes
import pathlib
import re
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent

try:
    import ml_dtypes
except ImportError as error:  # installed (run_sweep.sh saw to that) but not importable: a failure
    print(f"FAIL: ml_dtypes is installed but does not import with numpy {np.__version__}: {error}")
    sys.exit(1)

CHUNK = 1 << 22

# From the formats' definitions (numerics/e4m3fnuz.h, numerics/e2m1.h).
F32_ABS_MASK = 0x7FFFFFFF
F32_INF = 0x7F800000
F32_248 = 0x43780000  # 248: halfway between 240 (mantissa odd) and 256, so it and all above round past 240
FNUZ_NAN = 0x80
E2M1_NAN_PLACEHOLDER = 0x7
# |x| -> the code SGLang's thresholds give where round to nearest even gives the code above.
SGLANG_TIES = {0x3F400000: 0x1, 0x3FE00000: 0x3, 0x40600000: 0x5}  # 0.75 -> 0.5, 1.75 -> 1.5, 3.5 -> 3

FNUZ_RULES = ("satfinite", "satfinite-inf-nan", "overflow-nan")
E2M1_RULES = ("cvt-rn", "cvt-rn-no-neg-zero", "sglang-thresholds")
KEPT = 8  # mismatches kept per check for the message


def pinned_version():
    text = (HERE / "requirements.txt").read_text()
    match = re.search(r"^ml_dtypes==(\S+)", text, re.MULTILINE)
    if not match:
        sys.exit("FAIL: requirements.txt pins no ml_dtypes version")
    return match.group(1)


def load_library(path):
    lib = ctypes.CDLL(str(path))
    lib.qcheck_narrow_abi_version.restype = ctypes.c_int
    if lib.qcheck_narrow_abi_version() != 1:
        sys.exit(f"FAIL: {path} has ABI version {lib.qcheck_narrow_abi_version()}, this script knows 1")
    for name in ("qcheck_narrow_e4m3fnuz_rule_name", "qcheck_narrow_e2m1_rule_name"):
        getattr(lib, name).restype = ctypes.c_char_p
        getattr(lib, name).argtypes = [ctypes.c_int]
    pointer = ctypes.c_void_p
    for name in ("qcheck_narrow_e4m3fnuz_from_f32", "qcheck_narrow_e2m1_from_f32"):
        getattr(lib, name).argtypes = [pointer, pointer, ctypes.c_size_t, ctypes.c_int]
    for name in ("qcheck_narrow_f32_from_e4m3fnuz", "qcheck_narrow_f32_from_e2m1", "qcheck_narrow_pack_e2m1_pairs"):
        getattr(lib, name).argtypes = [pointer, pointer, ctypes.c_size_t]
    return lib


def check_rule_names(lib):
    """Our rule integers must mean the rules this script expects (numerics/types.h name_of)."""
    for function, names in ((lib.qcheck_narrow_e4m3fnuz_rule_name, FNUZ_RULES),
                            (lib.qcheck_narrow_e2m1_rule_name, E2M1_RULES)):
        actual = []
        index = 0
        while (name := function(index)) is not None:
            actual.append(name.decode())
            index += 1
        if tuple(actual) != names:
            sys.exit(f"FAIL: the library's rules are {actual}, this script checks {list(names)}")


class Tally:
    """Mismatches of one check: a count and the first few (input bits, expected, ours)."""

    def __init__(self):
        self.count = 0
        self.first = []

    def add(self, patterns, expected, actual):
        wrong = np.flatnonzero(expected != actual)
        if wrong.size == 0:
            return
        self.count += int(wrong.size)
        for i in wrong[:KEPT]:
            self.first.append((int(patterns[i]), int(expected[i]), int(actual[i])))
        self.first = sorted(self.first)[:KEPT]

    def merge(self, other):
        self.count += other.count
        self.first = sorted(self.first + other.first)[:KEPT]


_worker = {}


def _start_worker(library):
    _worker["lib"] = load_library(library)
    _worker["base"] = np.arange(CHUNK, dtype=np.uint32)


def check_chunk(start, count):
    """Checks patterns [start, start + count); returns ({check: Tally}, {what: how many inputs})."""
    lib = _worker["lib"]
    patterns = np.add(_worker["base"][:count], np.uint32(start))
    x = patterns.view(np.float32)
    abs_bits = patterns & np.uint32(F32_ABS_MASK)
    nan = abs_bits > F32_INF
    inf = abs_bits == F32_INF
    sign = (patterns >> np.uint32(31)).astype(np.uint8)  # 1 for a set sign bit
    tallies = {}
    counts = {"nan": int(nan.sum()), "fnuz overflow": 0, "sglang ties": 0}

    def ours(function, rule):
        out = np.empty(count, dtype=np.uint8)
        function(x.ctypes.data, out.ctypes.data, count, rule)
        return out

    def compare(check, expected, actual):
        tally = tallies.setdefault(check, Tally())
        tally.add(patterns, expected, actual)

    with np.errstate(all="ignore"):
        ml_fnuz = x.astype(ml_dtypes.float8_e4m3fnuz).view(np.uint8)
        ml_e2m1 = x.astype(ml_dtypes.float4_e2m1fn).view(np.uint8)

    # e4m3fnuz. ml_dtypes' rule: NaN and everything that rounds above 240 -> 0x80, nothing else.
    overflow = (abs_bits >= np.uint32(F32_248)) & ~nan
    counts["fnuz overflow"] = int(overflow.sum())
    compare("ml_dtypes e4m3fnuz gives 0x80 exactly for NaN and |x| >= 248",
            (nan | overflow).astype(np.uint8), (ml_fnuz == FNUZ_NAN).astype(np.uint8))
    saturated = np.where(sign == 1, np.uint8(0xFF), np.uint8(0x7F))  # ml_dtypes' +-240 (checked in main)
    expected_satfinite = np.where(overflow, saturated, ml_fnuz)
    compare("e4m3fnuz overflow-nan", ml_fnuz, ours(lib.qcheck_narrow_e4m3fnuz_from_f32, 2))
    compare("e4m3fnuz satfinite", expected_satfinite, ours(lib.qcheck_narrow_e4m3fnuz_from_f32, 0))
    compare("e4m3fnuz satfinite-inf-nan", np.where(inf, np.uint8(FNUZ_NAN), expected_satfinite),
            ours(lib.qcheck_narrow_e4m3fnuz_from_f32, 1))

    # e2m1. ml_dtypes rounds to nearest even, saturates and keeps -0; its NaN is not ours.
    expected_cvt_rn = np.where(nan, np.uint8(E2M1_NAN_PLACEHOLDER), ml_e2m1)
    expected_no_neg_zero = np.where(expected_cvt_rn == 0x8, np.uint8(0x0), expected_cvt_rn)
    expected_sglang = expected_no_neg_zero.copy()
    for tie_bits, code in SGLANG_TIES.items():
        at_tie = abs_bits == np.uint32(tie_bits)
        counts["sglang ties"] += int(at_tie.sum())
        expected_sglang[at_tie] = code | (sign[at_tie] << 3)
    compare("e2m1 cvt-rn", expected_cvt_rn, ours(lib.qcheck_narrow_e2m1_from_f32, 0))
    compare("e2m1 cvt-rn-no-neg-zero", expected_no_neg_zero, ours(lib.qcheck_narrow_e2m1_from_f32, 1))
    compare("e2m1 sglang-thresholds", expected_sglang, ours(lib.qcheck_narrow_e2m1_from_f32, 2))
    return tallies, counts


def decoder_mismatches(name, decode, ml_type, count, code_format):
    """One line per code 0..count-1 whose f32 bits from `decode` differ from ml_dtypes' (NaN included)."""
    codes = np.arange(count, dtype=np.uint8)
    ours = np.empty(count, dtype=np.float32)
    decode(codes.ctypes.data, ours.ctypes.data, count)
    theirs = codes.view(ml_type).astype(np.float32)
    return [f"f32 <- {name} {code:{code_format}}: ours {ours.view(np.uint32)[code]:#010x}, "
            f"ml_dtypes {theirs.view(np.uint32)[code]:#010x}"
            for code in np.flatnonzero(ours.view(np.uint32) != theirs.view(np.uint32))]


def check_codes(lib):
    """Decoders on every code (bits equal to ml_dtypes', NaN included) and the packer on every pair."""
    failures = decoder_mismatches("e4m3fnuz", lib.qcheck_narrow_f32_from_e4m3fnuz, ml_dtypes.float8_e4m3fnuz, 256,
                                  "#04x")
    failures += decoder_mismatches("e2m1", lib.qcheck_narrow_f32_from_e2m1, ml_dtypes.float4_e2m1fn, 16, "#x")
    nibbles = np.arange(16, dtype=np.uint8)
    # ml_dtypes' codes of +-240, which the satfinite expectations use.
    plus_minus_240 = np.array([240.0, -240.0], dtype=np.float32).astype(ml_dtypes.float8_e4m3fnuz).view(np.uint8)
    if plus_minus_240.tolist() != [0x7F, 0xFF]:
        failures.append(f"ml_dtypes codes +-240 as {plus_minus_240.tolist()}, expected [0x7F, 0xFF]")
    # Every (even, odd) pair of nibbles: byte = even | odd << 4.
    even, odd = np.meshgrid(nibbles, nibbles, indexing="ij")
    pairs = np.stack([even.ravel(), odd.ravel()], axis=1).astype(np.uint8).ravel()
    packed = np.empty(256, dtype=np.uint8)
    lib.qcheck_narrow_pack_e2m1_pairs(pairs.ctypes.data, packed.ctypes.data, 256)
    expected = (even.ravel() | (odd.ravel() << 4)).astype(np.uint8)
    for k in np.flatnonzero(packed != expected):
        failures.append(f"pack_e2m1_pair({even.ravel()[k]:#x}, {odd.ravel()[k]:#x}) = {packed[k]:#04x}, "
                        f"expected {expected[k]:#04x}")
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--library", required=True, help="libqcheck_narrow_exports.so")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2: CI's 2 cores)")
    parser.add_argument("--patterns", default="0:100000000",
                        help="hex range START:STOP of f32 patterns (default all 2^32), for trying things out")
    args = parser.parse_args()
    start, stop = (int(part, 16) for part in args.patterns.split(":"))

    pinned = pinned_version()
    if ml_dtypes.__version__ != pinned:
        print(f"FAIL: ml_dtypes {ml_dtypes.__version__} imported, requirements.txt pins {pinned}")
        return 1
    lib = load_library(args.library)
    check_rule_names(lib)
    print(f"[qcheck] ml_dtypes {ml_dtypes.__version__}, numpy {np.__version__}; patterns "
          f"{start:#x}..{stop:#x} in chunks of 2^22 on {args.workers} processes", flush=True)

    failures = check_codes(lib)
    began = time.monotonic()
    tallies, counts = {}, {}
    with concurrent.futures.ProcessPoolExecutor(args.workers, initializer=_start_worker,
                                                initargs=(args.library,)) as pool:
        jobs = [pool.submit(check_chunk, lo, min(CHUNK, stop - lo)) for lo in range(start, stop, CHUNK)]
        for job in jobs:
            chunk_tallies, chunk_counts = job.result()
            for check, tally in chunk_tallies.items():
                tallies.setdefault(check, Tally()).merge(tally)
            for what, how_many in chunk_counts.items():
                counts[what] = counts.get(what, 0) + how_many
    seconds = time.monotonic() - began

    print(f"[qcheck] {stop - start} patterns in {seconds:.1f} s: {counts['nan']} NaN, "
          f"{counts['fnuz overflow']} above 240 in e4m3fnuz, {counts['sglang ties']} SGLang ties")
    for check, tally in tallies.items():
        print(f"[qcheck]   {check}: {tally.count} mismatches")
        if tally.count:
            failures.append(f"{check}: {tally.count} mismatches; first (input, expected, ours):\n" + "\n".join(
                f"    {pattern:#010x} ({np.uint32(pattern).view(np.float32)!r}): {want:#04x} vs {got:#04x}"
                for pattern, want, got in tally.first))
    if start == 0 and stop == 1 << 32 and (counts["nan"] != 2 * (2**23 - 1) or counts["sglang ties"] != 6):
        failures.append(f"the sweep saw {counts['nan']} NaN and {counts['sglang ties']} ties: not every pattern")
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
