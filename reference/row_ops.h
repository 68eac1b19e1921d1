// The row functions the composed oracle is built from. Two tables exist: the
// scalar spec (the definition) and the Highway SIMD version (dynamic
// dispatch, reference/simd_rows.cc). Both must give the same bits for every
// input; tests/ checks that over every length and many alignments.
#pragma once

#include <cstddef>
#include <cstdint>

#include "reference/fused_q_args.h"
#include "reference/profile.h"

namespace qcheck {

struct RowOps {
  const char* name;
  // out[i] = f32 of the bf16 in[i] (exact).
  void (*f32_from_bf16_row)(const uint16_t* in, float* out, size_t count);
  // out[i] = bf16_rne(in[i]) with the NaN rule.
  void (*bf16_from_f32_row)(const float* in, uint16_t* out, size_t count, Bf16Nan nan_rule);
  // out[i] = e4m3(RN(in[i] / divisor)) with the overflow rule (IEEE division).
  void (*quantize_row)(const float* in, float divisor, uint8_t* out, size_t count,
                       E4m3Overflow overflow);
  // max |in[i]| ignoring NaN lanes (0 when none).
  float (*amax_row)(const float* in, size_t count);
  // RoPE of one row (see reference/rope.h for the definition).
  void (*rope_row)(const float* x, const float* cos, const float* sin, size_t count,
                   RopeStyle style, Contraction minus_terms, Contraction plus_terms, float* out);
};

// The scalar spec as a table.
const RowOps& scalar_row_ops();
// The Highway version, dispatched to the best target the CPU supports.
const RowOps& simd_row_ops();

}  // namespace qcheck
