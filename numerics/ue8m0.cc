#include "numerics/ue8m0.h"

#include <cmath>

#include "numerics/float_bits.h"

namespace qcheck::spec {

float row_amax(const float* row, size_t count) {
  uint32_t amax_bits = 0;
  for (size_t i = 0; i < count; ++i) {
    const uint32_t abs = bits_of(row[i]) & kF32AbsMask;
    // Non-negative floats order like their bit patterns; NaN lanes are skipped.
    if (abs <= kF32InfBits && abs > amax_bits) amax_bits = abs;
  }
  return float_from_bits(amax_bits);
}

float ceil_pow2_exact(float s0) {
  const uint32_t bits = bits_of(s0);
  if (bits >= kF32InfBits) return s0;  // +Inf (or NaN, which no caller passes)
  // Adding 0x7FFFFF carries into the exponent exactly when the mantissa is
  // non-zero; masking then drops the mantissa.
  return float_from_bits((bits + 0x7FFFFFu) & kF32ExponentMask);
}

float ceil_pow2_log2f(float s0) {
  if (std::isinf(s0)) return s0;
  return std::exp2(std::ceil(std::log2(s0)));  // float overloads: log2f, ceilf, exp2f
}

namespace {

// max(value, floor) as the device's fmaxf computes it: every NaN, quiet or
// signalling, yields the floor (SEMANTICS.md: NaN -> 1e-4). std::fmax is not
// used because glibc's returns a quiet NaN for a signalling NaN operand
// (IEEE 754-2008 maxNum); found by the device sweep of tests/gpu/.
float max_with_floor(float value, float floor) {
  return std::isnan(value) || value < floor ? floor : value;
}

}  // namespace

namespace {

float scale_of_amax(float amax, ScaleCeiling ceiling, ScaleFloor floor, ScaleQuotient quotient, float fp8_max) {
  if (floor == ScaleFloor::kAmax1e4) amax = max_with_floor(amax, 1e-4f);
  if (floor == ScaleFloor::kAmax1e10) amax = max_with_floor(amax, 1e-10f);
  const float reciprocal = 1.0f / fp8_max;  // RN(1/448), RN(1/224): not exact
  float s0 = quotient == ScaleQuotient::kDivide ? amax / fp8_max : amax * reciprocal;
  if (floor == ScaleFloor::kScale1e4) s0 = max_with_floor(s0, 1e-4f);
  switch (ceiling) {
    case ScaleCeiling::kExactBits: return ceil_pow2_exact(s0);
    case ScaleCeiling::kLog2f: return ceil_pow2_log2f(s0);
    case ScaleCeiling::kNone: return s0;
  }
  return s0;
}

}  // namespace

float ue8m0_scale(float amax, ScaleCeiling ceiling, ScaleFloor floor, float fp8_max) {
  return scale_of_amax(amax, ceiling, floor, ScaleQuotient::kDivide, fp8_max);
}

float row_scale(const float* row, size_t count, const Profile& p, float fp8_max) {
  if (p.amax_nan == AmaxNan::kPropagate) {
    for (size_t i = 0; i < count; ++i) {
      if (std::isnan(row[i])) return float_from_bits(0x7FFFFFFFu);  // torch.clamp keeps the NaN
    }
  }
  return scale_of_amax(row_amax(row, count), p.scale_ceiling, p.scale_floor, p.scale_quotient, fp8_max);
}

uint8_t e8m0_byte(float scale) { return static_cast<uint8_t>(bits_of(scale) >> 23); }

}  // namespace qcheck::spec
