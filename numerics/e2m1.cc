#include "numerics/e2m1.h"

#include <cmath>

#include "numerics/float_bits.h"
#include "numerics/narrow_float_rounding.h"

namespace qcheck::spec {
namespace {

constexpr NarrowFormat kE2m1{/*mantissa_bits=*/1, /*min_normal_exponent=*/0};

// PTX cvt.rn.satfinite.e2m1x2.f32 per element, as SEMANTICS-K.md states it
// (e2m1s), with the NaN placeholder of e2m1.h.
uint8_t e2m1_cvt_rn(float value, bool clear_negative_zero) {
  const uint32_t bits = bits_of(value);
  const uint32_t abs = bits & kF32AbsMask;
  if (abs > kF32InfBits) return kE2m1NanPlaceholder;
  // satfinite: anything that rounds above 6 (|x| >= 7, the tie between 6 and
  // the 8 the format lacks, goes up to 8), and +-Inf, becomes +-6.
  uint32_t magnitude = abs == kF32InfBits ? kE2m1MaxCode : round_to_nearest_even(abs, kE2m1);
  if (magnitude > kE2m1MaxCode) magnitude = kE2m1MaxCode;
  if (magnitude == 0 && clear_negative_zero) return 0x0;
  const uint32_t sign = (bits >> 28) & 0x8u;
  return static_cast<uint8_t>(sign | magnitude);
}

// SGLang's quant_fp4_e2m1, as SEMANTICS-K.md section 3.5 describes it (from
// MNR:26-38, which we have not read ourselves): |x| clamped to 6; the code is
// the number of the thresholds {0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5} that the
// clamped |x| strictly exceeds, so a value on a threshold takes the smaller
// code (ties toward zero: 0.75 -> 0.5, 1.75 -> 1.5, 3.5 -> 3, where round to
// nearest even gives 1, 2, 4; at 0.25, 1.25, 2.5 and 5 both agree); the sign
// bit only when the code is not zero (no -0); NaN -> 6.
// Where the description leaves a choice, this follows its stated outcomes:
// - the clamp is a device fminf(fabsf(x), 6), which returns 6 for a NaN (a
//   compare-and-select clamp would keep the NaN, exceed no threshold and give
//   0): SEMANTICS-K.md says NaN -> 6. Every NaN, signalling ones included,
//   since PTX min.f32 returns the other operand for any NaN; the host's
//   fminf (glibc, IEEE 754-2008 minNum) returns a NaN for a signalling one,
//   so the spec spells the clamp out instead of calling it;
// - the sign is the comparison x < 0 (SEMANTICS-K.md: "NaN < 0 is false"),
//   not the sign bit, so a NaN with its sign bit set gives 0x7, not 0xF;
//   -Inf gives 0xF.
uint8_t e2m1_sglang_thresholds(float value) {
  static constexpr float kThresholds[] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f};
  const float magnitude = std::fabs(value);
  const bool is_nan = (bits_of(value) & kF32AbsMask) > kF32InfBits;
  const float clamped = is_nan || magnitude > kE2m1Max ? kE2m1Max : magnitude;
  uint8_t code = 0;
  for (float threshold : kThresholds) code = static_cast<uint8_t>(code + (clamped > threshold ? 1 : 0));
  if (code != 0 && value < 0.0f) code = static_cast<uint8_t>(code | 0x8);
  return code;
}

}  // namespace

uint8_t e2m1_from_f32(float value, E2m1Rounding rounding) {
  switch (rounding) {
    case E2m1Rounding::kCvtRn: return e2m1_cvt_rn(value, /*clear_negative_zero=*/false);
    case E2m1Rounding::kCvtRnNoNegZero: return e2m1_cvt_rn(value, /*clear_negative_zero=*/true);
    case E2m1Rounding::kSglangThresholds: return e2m1_sglang_thresholds(value);
  }
  return kE2m1NanPlaceholder;  // not reached: every rule is handled above
}

float f32_from_e2m1(uint8_t code) {
  const bool negative = (code & 0x8) != 0;
  const int exponent = (code >> 1) & 0x3;
  const int mantissa = code & 0x1;
  // Exponent field 0: the subnormal m * 2^(1 - 1) / 2; else (1 + m / 2) * 2^(E - 1).
  const float value = exponent == 0 ? 0.5f * static_cast<float>(mantissa)
                                    : std::ldexp(static_cast<float>(2 + mantissa), exponent - 2);
  return negative ? -value : value;
}

}  // namespace qcheck::spec
