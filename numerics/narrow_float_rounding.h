// The rounding step shared by the encoders of the narrow float formats
// (e4m3fnuz.cc, e2m1.cc): a finite f32 magnitude rounded to nearest even onto
// a small binary format with subnormals. It returns the format's magnitude
// code, (exponent field << mantissa bits) | mantissa, with no upper bound: a
// code above the format's largest is an overflow, and each encoder applies its
// own overflow rule to it (saturate, or NaN). Signs, NaN, Inf and negative
// zero are the encoders' business too.
#pragma once

#include <cstdint>

namespace qcheck::spec {

// A narrow format as its rounding sees it.
struct NarrowFormat {
  int mantissa_bits;        // stored mantissa bits: 3 for e4m3fnuz, 1 for e2m1
  int min_normal_exponent;  // the smallest normal is 2^this: -7 for e4m3fnuz, 0 for e2m1
};

// abs: the bits of a finite |x| (at most 0x7F7FFFFF).
constexpr uint32_t round_to_nearest_even(uint32_t abs, NarrowFormat format) {
  const uint32_t exponent = abs >> 23;  // biased by 127
  const uint32_t min_normal_biased = static_cast<uint32_t>(127 + format.min_normal_exponent);
  const uint32_t mantissa_bits = static_cast<uint32_t>(format.mantissa_bits);
  if (exponent >= min_normal_biased) {
    // A normal result: keep the top mantissa_bits of the 23, rounding at the
    // first dropped bit, ties to the even kept part. A carry out of the kept
    // mantissa moves into the exponent, which is what rounding up into the
    // next binade (or past the largest value: an overflow) means. Then
    // rebias: the smallest normal, (min_normal_biased << mantissa_bits) in
    // these units, must become code 1 << mantissa_bits.
    const uint32_t dropped = 23u - mantissa_bits;
    const uint32_t kept_is_odd = (abs >> dropped) & 1u;
    const uint32_t rounded = abs + ((1u << (dropped - 1)) - 1u) + kept_is_odd;
    return (rounded >> dropped) - ((min_normal_biased - 1u) << mantissa_bits);
  }
  // A subnormal result: k units of 2^(min_normal_exponent - mantissa_bits),
  // k = significand * 2^(exponent - 150) / unit = significand >> shift, with
  // shift >= 24 - mantissa_bits here. k rounds to nearest even; k reaching
  // 2^mantissa_bits is the smallest normal, whose code is that same number.
  const uint32_t shift = min_normal_biased + 23u - mantissa_bits - exponent;
  // f32 zeros and subnormals, and anything below half a unit (with shift 25
  // the significand, < 2^24, is below half of 2^25; the tie goes to 0 too).
  if (exponent == 0 || shift >= 25) return 0;
  const uint32_t significand = (abs & 0x7FFFFFu) | 0x800000u;
  const uint32_t k_is_odd = (significand >> shift) & 1u;
  return (significand + ((1u << (shift - 1)) - 1u) + k_is_odd) >> shift;
}

}  // namespace qcheck::spec
