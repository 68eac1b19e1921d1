// A case of any op changed in one to three fields through the op's field
// metadata alone (core/op/op.h), for a structure-aware fuzzer: an integer
// steps by a little, doubles, halves, or becomes a small number, a power of
// two or its default; a boolean flips; an enumeration takes another choice;
// bits become an edge pattern (zeros, +-Inf, NaN, the smallest subnormal,
// the largest finite, one, 1e-6) or get one bit flipped; a u64 (a seed) is
// redrawn. Texts and edit lists stay. Every changed field takes a value
// other than its old one, so the result always differs from the input; it
// may be invalid (the op's validation says why), which a fuzz target
// refuses cheaply. Deterministic: the same case and seed give the same
// result.
#pragma once

#include <cstdint>

#include "core/op/any_case.h"

namespace qcheck {

AnyCase mutate_any_case(const AnyCase& c, uint64_t seed);

}  // namespace qcheck
