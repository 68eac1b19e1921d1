// The correctly rounded reciprocal square root (numerics/rsqrt.h): known
// answers worked out with 80-digit decimal arithmetic (Python's decimal:
// 1 / sqrt(x), then the nearest f32 by distance), the special values, the
// exact power-of-four scaling correct rounding implies, a sampled sweep
// against the x87's 64-bit-mantissa value, and the rounding step from
// starts a few ulps off.
#include "numerics/rsqrt.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "core/random/prng.h"
#include "numerics/float_bits.h"

namespace qcheck::spec {
namespace {

uint32_t rsqrt_bits(uint32_t x) { return bits_of(rsqrt_rn(float_from_bits(x))); }

TEST(RsqrtRn, KnownAnswers) {
  struct Answer {
    uint32_t x, want;
  };
  const Answer answers[] = {
      {0x3F800000, 0x3F800000},  // 1 -> 1
      {0x40800000, 0x3F000000},  // 4 -> 0.5
      {0x3E800000, 0x40000000},  // 0.25 -> 2
      {0x40000000, 0x3F3504F3},  // 2 -> 0.70710678118... -> 0.707106769
      {0x40400000, 0x3F13CD3A},  // 3
      {0x40A00000, 0x3EE4F92E},  // 5
      {0x3F000000, 0x3FB504F3},  // 0.5
      {0x00000001, 0x64B504F3},  // 2^-149, the smallest subnormal -> 2^74.5
      {0x00000002, 0x64800000},  // 2^-148 -> 2^74
      {0x007FFFFF, 0x5F000001},  // the largest subnormal
      {0x00800000, 0x5F000000},  // 2^-126 -> 2^63
      {0x7F7FFFFF, 0x1F800000},  // the largest finite
      {0x3F800001, 0x3F7FFFFF},  // 1 + 2^-23 -> 1 - 2^-24
      {0x3FFFFFFF, 0x3F3504F4},  // 2 - 2^-23
      {0x4E6E6B28, 0x3804A2B3},  // 1e9
      {0x2F800000, 0x47800000},  // 2^-32 -> 2^16
      {0x3DCCCCCD, 0x404A62C2},  // 0.1f
      {0x358637BD, 0x447A0000},  // 1e-6f -> 1000
      {0x447A0000, 0x3D0186E2},  // 1000
  };
  for (const Answer& a : answers) EXPECT_EQ(rsqrt_bits(a.x), a.want) << std::hex << "x = 0x" << a.x;
}

TEST(RsqrtRn, SpecialValues) {
  EXPECT_EQ(rsqrt_bits(0x00000000), 0x7F800000u);  // +0 -> +Inf
  EXPECT_EQ(rsqrt_bits(0x80000000), 0xFF800000u);  // -0 -> -Inf
  EXPECT_EQ(rsqrt_bits(0x7F800000), 0x00000000u);  // +Inf -> +0
  EXPECT_EQ(rsqrt_bits(0xFF800000), 0x7FC00000u);  // -Inf -> NaN
  EXPECT_EQ(rsqrt_bits(0xBF800000), 0x7FC00000u);  // -1 -> NaN
  EXPECT_EQ(rsqrt_bits(0x80000001), 0x7FC00000u);  // a negative subnormal -> NaN
  EXPECT_EQ(rsqrt_bits(0x7FC00001), 0x7FC00000u);  // NaN -> the quiet NaN
}

// Correct rounding commutes with exact scaling: rsqrt(4x) = rsqrt(x) / 2 for
// every normal x with a normal 4x.
TEST(RsqrtRn, FourTimesTheInputIsHalfTheResult) {
  Xoshiro256 rng(0x72737172ull);
  for (int i = 0; i < 200000; ++i) {
    const uint32_t mantissa = static_cast<uint32_t>(rng.below(1u << 23));
    const uint32_t exponent = 1 + static_cast<uint32_t>(rng.below(252));
    const float x = float_from_bits((exponent << 23) | mantissa);
    ASSERT_EQ(bits_of(rsqrt_rn(4.0f * x)), bits_of(rsqrt_rn(x) / 2.0f)) << "x = " << x;
  }
}

// Against 1 / sqrt in long double (64-bit mantissa: within an ulp of 2^-63 of
// the exact value): the result is at least as near as either neighbour. Also
// counts where the double path alone, (float)(1.0 / sqrt(double)), is wrong:
// the reason for the exact test of the midpoints.
TEST(RsqrtRn, NoNeighbourIsNearerOverASampledSweep) {
  Xoshiro256 rng(0x6E656967ull);
  int double_path_wrong = 0;
  for (int i = 0; i < 1 << 20; ++i) {
    const uint32_t bits = 1 + static_cast<uint32_t>(rng.below(0x7F7FFFFFu));
    const float x = float_from_bits(bits);
    const float r = rsqrt_rn(x);
    const long double t = 1.0L / std::sqrt(static_cast<long double>(x));
    const long double here = std::fabs(static_cast<long double>(r) - t);
    const long double below = std::fabs(static_cast<long double>(std::nextafter(r, 0.0f)) - t);
    const long double above = std::fabs(static_cast<long double>(std::nextafter(r, INFINITY)) - t);
    ASSERT_LE(here, below) << std::hex << "x = 0x" << bits;
    ASSERT_LE(here, above) << std::hex << "x = 0x" << bits;
    double_path_wrong += static_cast<float>(1.0 / std::sqrt(static_cast<double>(x))) != r;
  }
  std::printf("(float)(1 / sqrt(double)) differs from the correctly rounded value on %d of %d inputs\n",
              double_path_wrong, 1 << 20);
}

// The rounding step moves a start a few ulps off to the same result (the
// double path never needs it: see rsqrt.h).
TEST(RsqrtRn, TheRoundingStepFindsTheNearestFromAFewUlpsOff) {
  Xoshiro256 rng(0x73746570ull);
  for (int i = 0; i < 100000; ++i) {
    const float x = float_from_bits(1 + static_cast<uint32_t>(rng.below(0x7F7FFFFFu)));
    const uint32_t want = bits_of(rsqrt_rn(x));
    for (int off : {-4, -3, -1, 1, 2, 4}) {
      const float start = float_from_bits(static_cast<uint32_t>(static_cast<int64_t>(want) + off));
      ASSERT_EQ(bits_of(rsqrt_nearest_from(x, start)), want) << "x = " << x << ", start " << off << " ulps off";
    }
  }
}

}  // namespace
}  // namespace qcheck::spec
