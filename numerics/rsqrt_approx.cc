#include "numerics/rsqrt_approx.h"

#include "numerics/float_bits.h"
#include "numerics/rsqrt.h"

namespace qcheck::spec {

float rsqrt_approx_with(const uint8_t* table, float x, bool ftz) {
  uint32_t bits = bits_of(x);
  const bool negative = (bits >> 31) != 0;
  const uint32_t exponent = (bits >> 23) & 0xFF, mantissa = bits & 0x7FFFFF;
  if (exponent == 0xFF) {  // +-Inf, NaN
    return float_from_bits(mantissa == 0 && !negative ? 0u : 0x7FFFFFFFu);
  }
  if (exponent == 0 && (mantissa == 0 || ftz)) return float_from_bits(negative ? 0xFF800000u : 0x7F800000u);
  if (negative) return float_from_bits(0x7FFFFFFFu);
  uint32_t scale_back = 0;  // a subnormal's result exponent, lowered by 12
  if (exponent == 0) {
    bits = bits_of(x * 16777216.0f);  // exact: x * 2^24 is normal
    scale_back = 12u << 23;
  }
  const uint32_t i = rsqrt_approx_index(bits);
  const uint32_t correction = (table[i >> 2] >> (2 * (i & 3))) & 3u;
  return float_from_bits(bits_of(rsqrt_rn(float_from_bits(bits))) + correction - 2 + scale_back);
}

}  // namespace qcheck::spec
