// Scalar spec of the rotary embedding of one row (SEMANTICS.md, tasks 1-2).
// With h = count / 2 and c_i = cos[i], s_i = sin[i]:
//   interleaved (GPT-J): pairs (2i, 2i+1):  r_2i   = x_2i * c_i - x_2i+1 * s_i
//                                           r_2i+1 = x_2i+1 * c_i + x_2i * s_i
//   NeoX: j < h:   r_j = x_j * c_j     - x_(j+h) * s_j
//         j >= h:  r_j = x_j * c_(j-h) + x_(j-h) * s_(j-h)
// (NeoX's partner is j +- h, not j XOR 1.) Every term is a*c + b*s with the
// sign folded into b; the Contraction says which product is fused.
// `minus_terms` applies to the terms with the minus sign (r1: even j, or
// j < h), `plus_terms` to the others (r2).
#pragma once

#include <cstddef>

#include "numerics/profile.h"
#include "numerics/types.h"

namespace qcheck::spec {

// a*c + b*s under a contraction pattern, with explicit std::fma (this file
// is built with -ffp-contract=off so the compiler adds no fusion of its own).
// A NaN result is the canonical 0x7FFFFFFF: the payload a host keeps is not
// pinned by IEEE 754 and differs between compilers' operand orders.
float rope_term(float a, float c, float b, float s, Contraction contraction);

// out[0..count) = RoPE of x[0..count); cos and sin hold count / 2 values each.
// out may not alias x.
void rope_row(const float* x, const float* cos, const float* sin, size_t count, RopeStyle style,
              Contraction minus_terms, Contraction plus_terms, float* out);

}  // namespace qcheck::spec
