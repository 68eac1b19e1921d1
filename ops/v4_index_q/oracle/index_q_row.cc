#include "ops/v4_index_q/oracle/index_q_row.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "numerics/conversions.h"
#include "numerics/e2m1.h"
#include "numerics/float_bits.h"
#include "numerics/quotient.h"
#include "numerics/rope.h"
#include "numerics/ue8m0.h"

namespace qcheck::v4_index_q {
namespace {

constexpr float kMxAmaxFloor = 0x1.8p-124f;  // 6 * 2^-126
constexpr float kReciprocal6 = 1.0f / 6.0f;  // RN(1/6): not exact

// The MXFP4 block scale's ue8m0 byte from the block's amax.
uint8_t mx_scale_byte(float amax, ScaleCeiling ceiling) {
  const float s0 = std::max(amax, kMxAmaxFloor) * kReciprocal6;  // >= 2^-126: RN(6 * 2^-126 * RN(1/6)) = 2^-126
  if (ceiling == ScaleCeiling::kExactBits) return spec::e8m0_byte(spec::ceil_pow2_exact(s0));  // +Inf: 0xFF
  // log2f's ceiling, the exponent clamped to [-127, 127]: only +Inf reaches 127.
  const float k = std::isinf(s0) ? 127.0f : std::min(127.0f, std::ceil(std::log2(s0)));
  return static_cast<uint8_t>(static_cast<int>(k) + 127);
}

// The scale of a ue8m0 byte: 2^(byte - 127); 0xFF is +Inf.
float scale_of_byte(uint8_t byte) {
  if (byte == 0xFF) return INFINITY;
  return std::ldexp(1.0f, static_cast<int>(byte) - 127);
}

}  // namespace

const char* name_of(QueryFormat format) { return format == QueryFormat::kFp8 ? "fp8" : "mxfp4"; }

IndexQOut index_q_row(const uint16_t* q, float weight, const float* cos, const float* sin, float softmax_scale,
                      float head_scale, const IndexQShape& shape, QueryFormat format, const IndexQRules& rules,
                      uint8_t* codes, uint8_t* block_scales) {
  const size_t dim = static_cast<size_t>(shape.dim), rope_dim = static_cast<size_t>(shape.rope_dim);
  const size_t rope_at = shape.rope_last ? dim - rope_dim : 0;
  std::vector<float> v(dim), rotated(rope_dim);
  for (size_t i = 0; i < dim; ++i) v[i] = spec::f32_from_bf16(q[i]);
  spec::rope_row(v.data() + rope_at, cos, sin, rope_dim, RopeStyle::kInterleaved, rules.rope_minus, rules.rope_plus,
                 rotated.data());
  for (size_t i = 0; i < rope_dim; ++i) {
    v[rope_at + i] = rules.bf16_after_rope ? spec::f32_from_bf16(spec::bf16_from_f32(rotated[i], Bf16Nan::k7FFF))
                                           : rotated[i];
  }
  // S = RN(sm * hs): the product of two f32 is exact in double.
  const float folded = static_cast<float>(static_cast<double>(softmax_scale) * head_scale);
  IndexQOut out;
  if (format == QueryFormat::kFp8) {
    Profile scale_rules;
    scale_rules.scale_ceiling = rules.fp8_ceiling;
    scale_rules.scale_quotient = rules.fp8_quotient;
    const float s = spec::row_scale(v.data(), dim, scale_rules);
    for (size_t i = 0; i < dim; ++i) codes[i] = spec::e4m3_of_quotient(v[i] / s, rules.overflow);  // exact
    out.fp8_scale = s;
    out.weight_out = rules.weights == WeightsFold::kScaleFirst ? weight * s * softmax_scale * head_scale
                                                               : weight * folded * s;
    return out;
  }
  for (size_t b = 0; b < dim / 32; ++b) {
    const float* block = v.data() + 32 * b;
    const uint8_t byte = mx_scale_byte(spec::row_amax(block, 32), rules.mx_ceiling);
    const float inv = 1.0f / scale_of_byte(byte);  // exact: a power of two (2^-127 a subnormal), or 0 for +Inf
    for (size_t k = 0; k < 16; ++k) {
      codes[16 * b + k] = spec::pack_e2m1_pair(spec::e2m1_from_f32(block[2 * k] * inv, rules.e2m1),
                                               spec::e2m1_from_f32(block[2 * k + 1] * inv, rules.e2m1));
    }
    block_scales[b] = byte;
  }
  out.weight_out = rules.weights == WeightsFold::kScaleFirst ? weight * softmax_scale * head_scale : weight * folded;
  return out;
}

}  // namespace qcheck::v4_index_q
