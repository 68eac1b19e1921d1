// The scalar spec as a RowOps table: each entry loops the per-element spec.
#include "reference/conversions.h"
#include "reference/rope.h"
#include "reference/row_ops.h"
#include "reference/ue8m0.h"

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

}  // namespace

const RowOps& scalar_row_ops() {
  static const RowOps ops{"scalar",     f32_from_bf16_row, bf16_from_f32_row,
                          quantize_row, spec::row_amax,    spec::rope_row};
  return ops;
}

}  // namespace qcheck
