// The row functions the composed oracle is built from. Two tables exist: the
// scalar spec (the definition) and the Highway SIMD version (dynamic
// dispatch, numerics/simd_rows.cc). Both must give the same bits for every
// input; tests/ checks that over every length and many alignments.
//
// The first five entries are the building blocks. The two "rows" entries
// are whole steps of one token (every head of the MQA rope, every head of the
// indexer): the scalar table defines them by composing its building blocks
// (numerics/scalar_row_ops.cc), the SIMD table fuses them into one pass per
// row with no call per building block.
#pragma once

#include <cstddef>
#include <cstdint>

#include "numerics/profile.h"
#include "numerics/types.h"

namespace qcheck {

// Longest row the "rows" entries take (their scratch lives on the stack):
// the indexer's D and the rope width R <= D are at most this. It is fused_q's
// DimLimits::kMaxIndexDim (ops/fused_q/args), written here as a number so the
// numerics need no op's header; ops/fused_q/oracle/fused_q_oracle.h asserts
// that the two agree.
constexpr size_t kMaxFusedRowLength = 512;

struct RowOps {
  const char* name;
  // out[i] = f32 of the bf16 in[i] (exact).
  void (*f32_from_bf16_row)(const uint16_t* in, float* out, size_t count);
  // out[i] = bf16_rne(in[i]) with the NaN rule.
  void (*bf16_from_f32_row)(const float* in, uint16_t* out, size_t count, Bf16Nan nan_rule);
  // out[i] = e4m3(RN(in[i] / divisor)) with the overflow rule (IEEE division;
  // a NaN keeps the sign the host's division gives it: the conversion's
  // building block. The oracle's rows pin NaN quotients, spec::e4m3_of_quotient).
  void (*quantize_row)(const float* in, float divisor, uint8_t* out, size_t count,
                       E4m3Overflow overflow);
  // max |in[i]| ignoring NaN lanes (0 when none).
  float (*amax_row)(const float* in, size_t count);
  // RoPE of one row (see numerics/rope.h for the definition).
  void (*rope_row)(const float* x, const float* cos, const float* sin, size_t count,
                   RopeStyle style, Contraction minus_terms, Contraction plus_terms, float* out);

  // For each row r < rows (bf16 in + r * in_stride, out + r * out_stride):
  //   out = bf16_from_f32_row(rope_row(f32_from_bf16_row(in), cos, sin, count,
  //                                    style, minus_terms, plus_terms), nan_rule)
  // The MQA q_pe rows of one token on the bf16 query paths (SEMANTICS.md,
  // task 1). count <= kMaxFusedRowLength.
  void (*rope_bf16_rows)(const uint16_t* in, size_t in_stride, const float* cos, const float* sin,
                         size_t count, RopeStyle style, Contraction minus_terms,
                         Contraction plus_terms, Bf16Nan nan_rule, uint16_t* out,
                         size_t out_stride, size_t rows);

  // For each row r < rows (bf16 in + r * in_stride, e4m3 out + r * out_stride),
  // the indexer row of SEMANTICS.md task 2 under `profile`:
  //   x        = f32_from_bf16_row(in, dim)
  //   x[0..R)  = rope_row(x[0..R), cos, sin, R = rope_dim, style, profile.indexer_minus, profile.indexer_plus)
  //   x        = f32 of bf16_from_f32_row(x) when profile.indexer_bf16_before_quant
  //   scale    = spec::row_scale(x, dim, profile)
  //   out[i]   = spec::e4m3_of_quotient(spec::quotient(x[i], scale, profile.indexer_codes),
  //                                     profile.e4m3_overflow);  scales[r] = scale
  // The SIMD table implements the profiles simd_rows_cover() accepts; the
  // oracle takes the scalar table for the others.
  // dims rope_dim..dim-1 pass through the RoPE unchanged. rope_dim <= dim <=
  // kMaxFusedRowLength, rope_dim even.
  void (*indexer_rows)(const uint16_t* in, size_t in_stride, const float* cos, const float* sin,
                       size_t dim, size_t rope_dim, RopeStyle style, const Profile& profile,
                       uint8_t* out, size_t out_stride, float* scales, size_t rows);

  // A table whose entries run one target's code directly, chosen as a call
  // through this table would be dispatched right now; the oracle asks once
  // per launch so that no row pays for the dispatch. nullptr where the
  // entries already run directly (the scalar table, one target's table).
  const RowOps* (*resolve)();
};

// True when the SIMD table's indexer_rows follows `profile`: the default
// amax NaN rule and scale quotient, and a power-of-two ceiling (then the
// code quotient rules agree).
bool simd_rows_cover(const Profile& profile);

// The scalar spec as a table.
const RowOps& scalar_row_ops();
// The Highway version, dispatched to the best target the CPU supports.
const RowOps& simd_row_ops();

// The table to run many rows with: `ops` resolved to one target's table
// (RowOps::resolve), or `ops` itself when it runs directly.
inline const RowOps& resolved(const RowOps& ops) { return ops.resolve != nullptr ? *ops.resolve() : ops; }

}  // namespace qcheck
