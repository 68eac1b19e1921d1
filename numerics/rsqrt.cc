#include "numerics/rsqrt.h"

#include <cmath>
#include <cstdint>

#include "numerics/float_bits.h"

namespace qcheck::spec {
namespace {

// Sign of m * m * x - 1, exactly, for an f32 x > 0 (finite) and a double m > 0
// with at most 25 significant bits (a midpoint between two f32): m = M * 2^em
// and x = X * 2^ex with integers M < 2^25 and X < 2^24, so m * m * x =
// M * M * X * 2^(2 em + ex) with M * M * X < 2^74, exact in 128 bits.
int compare_square_times(double m, float x) {
  int em = 0;
  const double fraction = std::frexp(m, &em);  // m = fraction * 2^em, fraction in [0.5, 1)
  const uint64_t M = static_cast<uint64_t>(std::ldexp(fraction, 25));  // exact: at most 25 bits
  em -= 25;
  const uint32_t bits = bits_of(x);
  const uint32_t exponent = (bits >> 23) & 0xFF;
  const uint64_t X = exponent == 0 ? (bits & 0x7FFFFF) : ((bits & 0x7FFFFF) | 0x800000);
  const int ex = exponent == 0 ? -149 : static_cast<int>(exponent) - 150;
  const unsigned __int128 product = static_cast<unsigned __int128>(M) * M * X;
  const int k = -(2 * em + ex);  // m * m * x compared with 1 = product compared with 2^k
  if (k < 0) return 1;           // product >= 1 > 2^k
  if (k >= 127) return -1;       // product < 2^74 < 2^k
  const unsigned __int128 one = static_cast<unsigned __int128>(1) << k;
  return product > one ? 1 : product < one ? -1 : 0;
}

}  // namespace

float rsqrt_rn(float x) {
  if (std::isnan(x)) return float_from_bits(0x7FC00000u);
  if (x == 0.0f) return std::signbit(x) ? -INFINITY : INFINITY;
  if (x < 0.0f) return float_from_bits(0x7FC00000u);
  if (std::isinf(x)) return 0.0f;
  return rsqrt_nearest_from(x, static_cast<float>(1.0 / std::sqrt(static_cast<double>(x))));
}

float rsqrt_nearest_from(float x, float start) {
  // The exact test of the midpoints either side: t = x^(-1/2) lies above the
  // midpoint m exactly when m * m * x < 1. (t is never a midpoint: that would
  // make x = 1 / m^2 with m of 25 significant bits, not an f32.)
  float r = start;
  for (int step = 0; step < 8; ++step) {
    const float below = std::nextafter(r, 0.0f), above = std::nextafter(r, INFINITY);
    const double low_mid = (static_cast<double>(below) + r) / 2, high_mid = (static_cast<double>(r) + above) / 2;
    if (compare_square_times(low_mid, x) > 0) {  // t < low_mid: r is too large
      r = below;
    } else if (compare_square_times(high_mid, x) < 0) {  // t > high_mid: r is too small
      r = above;
    } else {
      break;
    }
  }
  return r;
}

}  // namespace qcheck::spec
