#include "numerics/conversions.h"

#include <cmath>

#include "numerics/float_bits.h"

namespace qcheck::spec {

float f32_stored(float value, F32Nan nan_rule) {
  if (nan_rule == F32Nan::kCanonical && is_nan_bits(bits_of(value))) return float_from_bits(0x7FFFFFFFu);
  return value;
}

uint8_t e4m3_from_f32(float value, E4m3Overflow overflow) {
  const uint32_t bits = bits_of(value);
  const uint8_t sign = static_cast<uint8_t>((bits >> 24) & 0x80u);
  const uint32_t abs = bits & kF32AbsMask;
  const bool saturate = overflow == E4m3Overflow::kSatFinite;
  const uint8_t overflow_code = saturate ? static_cast<uint8_t>(sign | 0x7E) : static_cast<uint8_t>(sign | 0x7F);

  if (abs > kF32InfBits) return saturate ? 0x7F : static_cast<uint8_t>(sign | 0x7F);  // NaN
  if (abs == kF32InfBits) return overflow_code;

  const uint32_t exponent = abs >> 23;  // biased by 127
  uint32_t magnitude;                   // the 7 low bits of the e4m3 code
  if (exponent >= 121) {
    // |x| >= 2^-6, the smallest normal e4m3: keep 3 of the 23 mantissa bits,
    // rounding at bit 20 to nearest even. A carry moves into the exponent,
    // which is what rounding up to the next binade means. Then rebias the
    // exponent from 127 to 7: subtract 120 << 3 from (exponent << 3 | mantissa).
    const uint32_t rounded = abs + 0x7FFFFu + ((abs >> 20) & 1u);
    magnitude = (rounded >> 20) - (120u << 3);
  } else {
    // |x| < 2^-6: e4m3 subnormals are k * 2^-9 (k = 0..7; k = 8 is 2^-6,
    // whose code 0x08 is the smallest normal, so the carry is right too).
    // k = significand * 2^(exponent - 150 + 9), rounded to nearest even.
    const uint32_t shift = 141u - exponent;  // >= 21
    if (exponent == 0 || shift >= 25) return sign;  // below 2^-10 (ties at 2^-10 go to 0)
    const uint32_t significand = (abs & 0x7FFFFFu) | 0x800000u;
    const uint32_t half = 1u << (shift - 1);
    const uint32_t odd = (significand >> shift) & 1u;
    magnitude = (significand + half - 1u + odd) >> shift;
  }
  if (magnitude > 0x7E) return overflow_code;  // rounded above 448
  return static_cast<uint8_t>(sign | magnitude);
}

float f32_from_e4m3(uint8_t code) {
  const bool negative = (code & 0x80) != 0;
  const uint32_t magnitude = code & 0x7Fu;
  if (magnitude == 0x7F) return float_from_bits(negative ? 0xFFC00000u : 0x7FC00000u);
  const int exponent = static_cast<int>(magnitude >> 3);
  const int mantissa = static_cast<int>(magnitude & 7u);
  const float value = exponent == 0 ? std::ldexp(static_cast<float>(mantissa), -9)
                                    : std::ldexp(static_cast<float>(8 + mantissa), exponent - 10);
  return negative ? -value : value;
}

}  // namespace qcheck::spec
