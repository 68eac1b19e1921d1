#include "numerics/quotient.h"

#include <cmath>

#include "numerics/conversions.h"
#include "numerics/float_bits.h"

namespace qcheck::spec {

float quotient(float x, float d, Quotient rule) {
  if (rule == Quotient::kDivide) return x / d;
  const float reciprocal = 1.0f / d;
  return x * reciprocal;
}

namespace {

// `q` moved `steps` fp32 steps away from zero (steps > 0) or toward it
// (steps < 0), never past a zero of q's sign. Finite q only.
float step_magnitude(float q, int steps) {
  const uint32_t bits = bits_of(q);
  const uint32_t sign = bits & ~kF32AbsMask;
  int64_t magnitude = int64_t(bits & kF32AbsMask) + steps;
  if (magnitude < 0) magnitude = 0;
  if (magnitude > int64_t(kF32InfBits)) magnitude = kF32InfBits;
  return float_from_bits(sign | uint32_t(magnitude));
}

}  // namespace

float mqa_quotient(float x, float q_scale, Division rule) {
  const float q = x / q_scale;
  switch (rule) {
    case Division::kIeee:
    case Division::kDivFull: return q;
    case Division::kTimesReciprocal: return quotient(x, q_scale, Quotient::kTimesReciprocal);
    case Division::kIeeeMinus2Ulp:
    case Division::kIeeePlus2Ulp: {
      if (!std::isfinite(q) || (bits_of(q) & kF32AbsMask) == 0) return q;
      // Down in value is toward zero for a positive q, away for a negative one.
      const bool up = rule == Division::kIeeePlus2Ulp;
      const bool negative = std::signbit(q);
      return step_magnitude(q, up != negative ? 2 : -2);
    }
  }
  return q;
}

bool division_is_ieee(Division rule, float q_scale) {
  switch (rule) {
    case Division::kIeee: return true;
    case Division::kDivFull:
    case Division::kTimesReciprocal: {
      // A normal power of two whose reciprocal is normal too.
      const uint32_t bits = bits_of(q_scale);
      return (bits & 0x007FFFFFu) == 0 && bits >= 0x00800000u && bits < 0x7F000000u;
    }
    case Division::kIeeeMinus2Ulp:
    case Division::kIeeePlus2Ulp: return false;
  }
  return false;
}

uint8_t e4m3_of_quotient(float q, E4m3Overflow overflow) {
  return e4m3_from_f32(std::isnan(q) ? float_from_bits(0x7FFFFFFFu) : q, overflow);
}

}  // namespace qcheck::spec
