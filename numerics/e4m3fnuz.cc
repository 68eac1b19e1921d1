#include "numerics/e4m3fnuz.h"

#include <cmath>

#include "numerics/float_bits.h"
#include "numerics/narrow_float_rounding.h"

namespace qcheck::spec {
namespace {

constexpr NarrowFormat kE4m3Fnuz{/*mantissa_bits=*/3, /*min_normal_exponent=*/-7};

}  // namespace

uint8_t e4m3fnuz_from_f32(float value, E4m3FnuzOverflow overflow) {
  const uint32_t bits = bits_of(value);
  const uint32_t abs = bits & kF32AbsMask;
  const uint8_t sign = static_cast<uint8_t>((bits >> 24) & 0x80u);
  const uint8_t saturated = static_cast<uint8_t>(sign | kE4m3FnuzMaxCode);

  if (abs > kF32InfBits) return kE4m3FnuzNan;  // every NaN, whatever its sign
  if (abs == kF32InfBits) return overflow == E4m3FnuzOverflow::kSatFinite ? saturated : kE4m3FnuzNan;

  const uint32_t magnitude = round_to_nearest_even(abs, kE4m3Fnuz);
  // No negative zero: sign | 0 would be 0x80, the NaN.
  if (magnitude == 0) return 0x00;
  if (magnitude > kE4m3FnuzMaxCode) return overflow == E4m3FnuzOverflow::kNan ? kE4m3FnuzNan : saturated;
  return static_cast<uint8_t>(sign | magnitude);
}

float f32_from_e4m3fnuz(uint8_t code) {
  if (code == kE4m3FnuzNan) return float_from_bits(0xFFC00000u);
  const bool negative = (code & 0x80) != 0;
  const int exponent = (code >> 3) & 0xF;
  const int mantissa = code & 0x7;
  // Exponent field 0: the subnormals m * 2^(1 - 8) / 8; else (1 + m / 8) * 2^(E - 8).
  const float value = exponent == 0 ? std::ldexp(static_cast<float>(mantissa), -10)
                                    : std::ldexp(static_cast<float>(8 + mantissa), exponent - 11);
  return negative ? -value : value;
}

}  // namespace qcheck::spec
