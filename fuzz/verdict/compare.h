// The byte-for-byte comparison behind a verdict. Every byte of every guarded
// buffer is checked: output elements bit for bit against the oracle, guard
// bytes (sentinels, view padding) untouched, inputs unchanged outside the
// declared alias; the two poison runs give unwritten and nondeterministic
// elements. Bits are compared as integers, never as floats.
#pragma once

#include <cstddef>
#include <functional>

#include "fuzz/buffers/tensors.h"
#include "fuzz/case/case.h"
#include "fuzz/verdict/element_bits.h"
#include "fuzz/verdict/report.h"

namespace qcheck {

// The part of tensor `g` that its code `dim` belongs to, as a report names it
// (see Signature): the op's own naming. Called only for mismatches.
using PartNamer = std::function<const char*(const TensorGeometry& g, int64_t dim)>;
PartNamer fused_q_parts(const Case& c);  // part_of below; `c` must outlive it
PartNamer whole_tensor_parts();          // "elements" everywhere

// expected: built with Poison::kA and filled by the oracle. got_a, got_b: the
// backend's results on sets built with Poison::kA and Poison::kB (each set's
// `poison` says which). All four come from the same case. One run alone is
// compared by passing the same set twice: every check but the two-run ones,
// and an output element that still holds its run's poison is reported
// unwritten (with two runs, a kernel that wrote the poison's very bits is
// told apart).
// A scatter output is compared row by row: rows its mask writes as outputs,
// the others as untouched (they must keep both runs' poison).
Report compare_runs(const PartNamer& parts, const TensorSet& expected, const TensorSet& got_a,
                    const TensorSet& got_b, size_t max_listed = 20);
Report compare_runs(const Case& c, const TensorSet& expected, const TensorSet& got_a,
                    const TensorSet& got_b, size_t max_listed = 20);

// Every byte of `second` against `first` (two runs of one backend on the
// same inputs and poison): each element or guard byte that differs is one
// mismatch of class `as`, listed as run `run`. The graph replay check.
Report compare_identical(const PartNamer& parts, const TensorSet& first, const TensorSet& second,
                         MismatchClass as, char run, size_t max_listed = 20);
Report compare_identical(const Case& c, const TensorSet& first, const TensorSet& second, MismatchClass as,
                         char run, size_t max_listed = 20);

// How many codes apart two values of one format are, in the format's numeric
// order (adjacent codes 1, +0 and -0 the same), or -1 when either is NaN:
// the ULP distance a report quotes.
int64_t code_distance(ElementType type, uint32_t a, uint32_t b);

// The value of one code's bits (e4m3 and bf16 widened exactly; NaN as NaN).
double element_value(ElementType type, uint32_t bits);

// The part of a tensor that element `dim` belongs to (see Signature).
const char* part_of(const Case& c, TensorId tensor, int64_t dim);

}  // namespace qcheck
