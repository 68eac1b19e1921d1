// The scalar spec as a RowOps table: each building block loops the
// per-element spec; the "rows" entries compose those building blocks, row by
// row, exactly as their definition in row_ops.h reads.
#include <cstring>

#include "numerics/conversions.h"
#include "numerics/quotient.h"
#include "numerics/rope.h"
#include "numerics/row_ops.h"
#include "numerics/ue8m0.h"

namespace qcheck {
namespace {

void f32_from_bf16_row(const uint16_t* in, float* out, size_t count) {
  for (size_t i = 0; i < count; ++i) out[i] = spec::f32_from_bf16(in[i]);
}

void bf16_from_f32_row(const float* in, uint16_t* out, size_t count, Bf16Nan nan_rule) {
  for (size_t i = 0; i < count; ++i) out[i] = spec::bf16_from_f32(in[i], nan_rule);
}

void quantize_row(const float* in, float divisor, uint8_t* out, size_t count,
                  E4m3Overflow overflow) {
  for (size_t i = 0; i < count; ++i) out[i] = spec::e4m3_from_f32(in[i] / divisor, overflow);
}

void rope_bf16_rows(const uint16_t* in, size_t in_stride, const float* cos, const float* sin,
                    size_t count, RopeStyle style, Contraction minus_terms, Contraction plus_terms,
                    Bf16Nan nan_rule, uint16_t* out, size_t out_stride, size_t rows) {
  float input[kMaxFusedRowLength], roped[kMaxFusedRowLength];
  for (size_t r = 0; r < rows; ++r) {
    f32_from_bf16_row(in + r * in_stride, input, count);
    spec::rope_row(input, cos, sin, count, style, minus_terms, plus_terms, roped);
    bf16_from_f32_row(roped, out + r * out_stride, count, nan_rule);
  }
}

void indexer_rows(const uint16_t* in, size_t in_stride, const float* cos, const float* sin,
                  size_t dim, size_t rope_dim, RopeStyle style, const Profile& p, uint8_t* out,
                  size_t out_stride, float* scales, size_t rows) {
  float input[kMaxFusedRowLength], row[kMaxFusedRowLength];
  uint16_t bf16_row[kMaxFusedRowLength];
  for (size_t r = 0; r < rows; ++r) {
    f32_from_bf16_row(in + r * in_stride, input, dim);
    // RoPE on the first rope_dim dims; the others pass through unchanged.
    spec::rope_row(input, cos, sin, rope_dim, style, p.indexer_minus, p.indexer_plus, row);
    std::memcpy(row + rope_dim, input + rope_dim, (dim - rope_dim) * sizeof(float));
    if (p.indexer_bf16_before_quant) {
      bf16_from_f32_row(row, bf16_row, dim, p.bf16_nan);
      f32_from_bf16_row(bf16_row, row, dim);
    }
    const float scale = spec::row_scale(row, dim, p);
    uint8_t* codes = out + r * out_stride;
    for (size_t i = 0; i < dim; ++i) {
      codes[i] = spec::e4m3_of_quotient(spec::quotient(row[i], scale, p.indexer_codes), p.e4m3_overflow);
    }
    scales[r] = scale;
  }
}

}  // namespace

bool simd_rows_cover(const Profile& p) {
  return p.amax_nan == AmaxNan::kIgnore && p.scale_quotient == ScaleQuotient::kDivide &&
         p.scale_ceiling != ScaleCeiling::kNone;
}

const RowOps& scalar_row_ops() {
  static const RowOps ops{"scalar",       f32_from_bf16_row, bf16_from_f32_row, quantize_row,
                          spec::row_amax, spec::rope_row,    rope_bf16_rows,    indexer_rows,
                          nullptr};
  return ops;
}

}  // namespace qcheck
