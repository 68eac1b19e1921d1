// Known answers for the rules the named profiles add (numerics/profile.h):
// the quotients, div.full's 2-ulp bounds, the plain scale, the NaN that
// propagates through amax, the pinned NaN of a quotient. Expected bits were
// computed with numpy float32 arithmetic (IEEE, round to nearest even), not
// with this project's code.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "numerics/conversions.h"
#include "numerics/float_bits.h"
#include "numerics/profile.h"
#include "numerics/quotient.h"
#include "numerics/ue8m0.h"

namespace qcheck {
namespace {

std::string hex(float value) {
  char text[16];
  std::snprintf(text, sizeof(text), "0x%08X", bits_of(value));
  return text;
}

Profile named(const char* name) {
  Profile p;
  EXPECT_TRUE(find_profile(name, &p)) << name;
  return p;
}

TEST(ProfileRules, QuotientByDivisionOrByTheReciprocal) {
  // 0.1 / 0.37 = 0x3E8A60DD; 0.1 * RN(1/0.37) = 0x3E8A60DE (numpy).
  EXPECT_EQ(hex(spec::quotient(0.1f, 0.37f, Quotient::kDivide)), "0x3E8A60DD");
  EXPECT_EQ(hex(spec::quotient(0.1f, 0.37f, Quotient::kTimesReciprocal)), "0x3E8A60DE");
  EXPECT_EQ(hex(spec::mqa_quotient(0.1f, 0.37f, Division::kTimesReciprocal)), "0x3E8A60DE");
  EXPECT_EQ(hex(spec::mqa_quotient(0.1f, 0.37f, Division::kIeee)), "0x3E8A60DD");
  EXPECT_EQ(hex(spec::mqa_quotient(0.1f, 0.37f, Division::kDivFull)), "0x3E8A60DD");  // the centre
  // A power-of-two divisor: the reciprocal is exact, the rules agree.
  EXPECT_TRUE(spec::division_is_ieee(Division::kTimesReciprocal, 0.5f));
  EXPECT_TRUE(spec::division_is_ieee(Division::kDivFull, 1.0f));
  EXPECT_FALSE(spec::division_is_ieee(Division::kDivFull, 0.37f));
  EXPECT_FALSE(spec::division_is_ieee(Division::kIeeePlus2Ulp, 1.0f));
}

TEST(ProfileRules, DivFullBoundsAreTwoStepsEitherWayNeverAcrossZero) {
  // 1 / 0.37 = 0x402CF915.
  EXPECT_EQ(hex(spec::mqa_quotient(1.0f, 0.37f, Division::kIeeeMinus2Ulp)), "0x402CF913");
  EXPECT_EQ(hex(spec::mqa_quotient(1.0f, 0.37f, Division::kIeeePlus2Ulp)), "0x402CF917");
  // Negative: down in value is away from zero.
  EXPECT_EQ(hex(spec::mqa_quotient(-1.0f, 0.37f, Division::kIeeeMinus2Ulp)), "0xC02CF917");
  EXPECT_EQ(hex(spec::mqa_quotient(-1.0f, 0.37f, Division::kIeeePlus2Ulp)), "0xC02CF913");
  // Zeros, Inf and NaN stay; a tiny quotient stops at the zero of its sign.
  EXPECT_EQ(hex(spec::mqa_quotient(0.0f, 0.37f, Division::kIeeeMinus2Ulp)), "0x00000000");
  EXPECT_EQ(hex(spec::mqa_quotient(-0.0f, 0.37f, Division::kIeeePlus2Ulp)), "0x80000000");
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(hex(spec::mqa_quotient(inf, 0.37f, Division::kIeeePlus2Ulp)), "0x7F800000");
  const float denorm = float_from_bits(0x00000001u);
  EXPECT_EQ(hex(spec::mqa_quotient(denorm, 1.5f, Division::kIeeeMinus2Ulp)), "0x00000000");
  EXPECT_EQ(hex(spec::mqa_quotient(-denorm, 1.5f, Division::kIeeePlus2Ulp)), "0x80000000");
}

TEST(ProfileRules, PlainScaleIsNotAPowerOfTwo) {
  const Profile p = named("plain-scale");
  const float row[2] = {1.0f, -0.5f};
  // max(1, 1e-4) / 448 = 0x3B124925; its reciprocal 0x43DFFFFF; 0.75 times
  // it 0x43A7FFFF where 0.75 / scale is 0x43A80000.
  const float scale = spec::row_scale(row, 2, p);
  EXPECT_EQ(hex(scale), "0x3B124925");
  EXPECT_EQ(hex(spec::quotient(0.75f, scale, p.indexer_codes)), "0x43A7FFFF");
  EXPECT_EQ(hex(spec::quotient(0.75f, scale, Quotient::kDivide)), "0x43A80000");
  // Under this project's profile the same row's scale is 2^-8.
  EXPECT_EQ(hex(spec::row_scale(row, 2, qcheck_profile())), "0x3B800000");
}

TEST(ProfileRules, TorchEagerAmaxPropagatesNan) {
  const float row[3] = {1.0f, float_from_bits(0xFFC00000u), 2.0f};
  EXPECT_TRUE(std::isnan(spec::row_scale(row, 3, named("torch-eager"))));
  // maxnum elsewhere: the NaN is ignored, amax 2 -> 2/448 -> 2^-7.
  EXPECT_EQ(hex(spec::row_scale(row, 3, qcheck_profile())), "0x3C000000");
  // An all-NaN row under maxnum: the 1e-4 floor gives 2^-22.
  const float nans[2] = {float_from_bits(0x7FC00000u), float_from_bits(0xFF800001u)};
  EXPECT_EQ(hex(spec::row_scale(nans, 2, qcheck_profile())), "0x34800000");
}

TEST(ProfileRules, TheNanOfAQuotientIsTheDevicesCanonicalNan) {
  const float negative_nan = float_from_bits(0xFFC00000u);
  // The conversion keeps the sign under the non-saturating rule ...
  EXPECT_EQ(spec::e4m3_from_f32(negative_nan, E4m3Overflow::kNan), 0xFF);
  // ... a quotient on the GPU is the canonical positive NaN first.
  EXPECT_EQ(spec::e4m3_of_quotient(negative_nan, E4m3Overflow::kNan), 0x7F);
  EXPECT_EQ(spec::e4m3_of_quotient(negative_nan, E4m3Overflow::kSatFinite), 0x7F);
  // Overflow keeps its sign under the non-saturating rule.
  EXPECT_EQ(spec::e4m3_of_quotient(-480.0f, E4m3Overflow::kNan), 0xFF);
  EXPECT_EQ(spec::e4m3_of_quotient(-480.0f, E4m3Overflow::kSatFinite), 0xFE);
}

// exact-reciprocal's s0 = RN(amax * RN(1/448)) differs from RN(amax / 448)
// by at most an ulp (RN(1/448) is within half an ulp of 1/448), so the two
// bit ceilings can differ only where one s0 is a power of two, that is for
// amax within a few ulps of 448 * 2^k. Over every such amax of every binade
// they agree: the profile's scale equals the default's, and only its
// weights and MQA division tell it apart. (The log2f ceiling is another
// matter: the band of SEMANTICS.md.)
TEST(ProfileRules, TheReciprocalOf448NeverMovesTheBitCeiling) {
  const Profile reciprocal = named("exact-reciprocal");
  int64_t checked = 0;
  for (int k = -150; k <= 127; ++k) {
    const float centre = std::ldexp(448.0f, k);
    if (!std::isfinite(centre) || centre == 0.0f) continue;
    for (int step = -64; step <= 64; ++step) {
      const int64_t bits = int64_t(bits_of(centre)) + step;
      if (bits <= 0 || bits >= int64_t(kF32InfBits)) continue;
      const float amax = float_from_bits(uint32_t(bits));
      EXPECT_EQ(hex(spec::row_scale(&amax, 1, reciprocal)), hex(spec::row_scale(&amax, 1, qcheck_profile())))
          << "amax " << hex(amax);
      ++checked;
    }
  }
  EXPECT_GT(checked, 30000);
}

TEST(ProfileRules, NamesAndTheAnyFmaSuffix) {
  Profile p;
  EXPECT_TRUE(find_profile("vllm-triton+any-fma", &p));
  EXPECT_TRUE(p.any_contraction);
  EXPECT_EQ(p.name, "vllm-triton+any-fma");
  EXPECT_EQ(p.mqa_division, Division::kDivFull);
  EXPECT_FALSE(find_profile("+any-fma", &p));
  EXPECT_FALSE(find_profile("auto", &p));  // the judge's word, not a profile
  EXPECT_FALSE(find_profile("qcheck+any-fma+any-fma", &p));
  EXPECT_EQ(profile_names().size(), 6u);
}

}  // namespace
}  // namespace qcheck
