// Known answers for the norms (numerics/norm.h), worked outside the code:
// each value below is IEEE f32 arithmetic done step by step in numpy, with
// every reciprocal square root the nearest f32 to the 80-digit decimal
// value (Python's decimal). Each test shows one convention deciding bits:
// the order of the sum, the lanes it runs over, where the weight meets the
// row, the affine step's rounding, eps, and the rsqrt.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "numerics/float_bits.h"
#include "numerics/norm.h"
#include "numerics/rsqrt_approx.h"

namespace qcheck::spec {
namespace {

NormRules rules(ReductionOrder order, int lanes = 32, int64_t sum_width = 0) {
  NormRules r;
  r.reduction = Reduction{order, lanes};
  r.sum_width = sum_width;
  return r;
}

std::vector<uint32_t> bits(const std::vector<float>& v) {
  std::vector<uint32_t> out;
  for (float f : v) out.push_back(bits_of(f));
  return out;
}

TEST(NormKnownAnswers, RmsNormTheOrderOfTheSquaresDecides) {
  // Squares (2^24, 1, 1, 1): in order each 1 is a tie lost to 2^24; in
  // pairs (2^24 + 1 -> 2^24, 1 + 1 = 2) the sum is 2^24 + 2.
  const std::vector<float> x = {4096, 1, 1, 1}, w = {1, 1, 1, 1};
  std::vector<float> y(4);
  // Sequential: ms = 2^22, r = 2^-11 exactly, y0 = 2.
  EXPECT_EQ(bits_of(rms_norm_row(x.data(), w.data(), 4, 0.0f, RmsWeight::kF32, rules(ReductionOrder::kSequential),
                                 y.data())),
            0x3A000000u);
  EXPECT_EQ(bits(y), (std::vector<uint32_t>{0x40000000u, 0x3A000000u, 0x3A000000u, 0x3A000000u}));
  // Pairwise: ms = 2^22 + 0.5, r = 2^-11 (1 - 2^-24) (the f32 below 2^-11), y0 = 2 - 2^-23.
  EXPECT_EQ(bits_of(rms_norm_row(x.data(), w.data(), 4, 0.0f, RmsWeight::kF32, rules(ReductionOrder::kPairwise),
                                 y.data())),
            0x39FFFFFFu);
  EXPECT_EQ(bits(y), (std::vector<uint32_t>{0x3FFFFFFFu, 0x39FFFFFFu, 0x39FFFFFFu, 0x39FFFFFFu}));
  // Two strided lanes: (2^24 + 1, 1 + 1) -> (2^24, 2) -> 2^24 + 2, as pairwise.
  EXPECT_EQ(bits_of(rms_norm_row(x.data(), w.data(), 4, 0.0f, RmsWeight::kF32,
                                 rules(ReductionOrder::kStridedLanes, 2), y.data())),
            0x39FFFFFFu);
}

TEST(NormKnownAnswers, RmsNormTheLanesTheSumRunsOverDecide) {
  // n = 5, two blocked lanes. Over the row alone a lane holds 3 elements:
  // (2^24 + 1 + 1 -> 2^24, 1 + 1 = 2): S = 2^24 + 2. Over a block of 8 lanes
  // (the row and three zeros) a lane holds 4: (2^24 + 1 + 1 + 1 -> 2^24, 1):
  // 2^24 + 1, a tie to 2^24.
  const std::vector<float> x = {4096, 1, 1, 1, 1}, w = {1, 1, 1, 1, 1};
  std::vector<float> y(5);
  // ms = RN((2^24 + 2) / 5) = 0x4A4CCCCE, r = 0x3A0F1BBC.
  EXPECT_EQ(bits_of(rms_norm_row(x.data(), w.data(), 5, 0.0f, RmsWeight::kF32,
                                 rules(ReductionOrder::kBlockedLanes, 2), y.data())),
            0x3A0F1BBCu);
  // ms = RN(2^24 / 5) = 0x4A4CCCCD, r = 0x3A0F1BBD.
  EXPECT_EQ(bits_of(rms_norm_row(x.data(), w.data(), 5, 0.0f, RmsWeight::kF32,
                                 rules(ReductionOrder::kBlockedLanes, 2, 8), y.data())),
            0x3A0F1BBDu);
}

TEST(NormKnownAnswers, RmsNormWhereTheWeightMeetsTheRow) {
  // x = (1, 3): ms = 5, r = RN(5^-1/2) = 0x3EE4F92E; w = 1.5.
  const std::vector<float> x = {1, 3}, w = {1.5f, 1.5f};
  std::vector<float> y(2);
  EXPECT_EQ(bits_of(rms_norm_row(x.data(), w.data(), 2, 0.0f, RmsWeight::kF32, rules(ReductionOrder::kSequential),
                                 y.data())),
            0x3EE4F92Eu);
  // RN(RN(x r) 1.5): RN(3 r) = 0x3FABBAE2 keeps its 24 bits.
  EXPECT_EQ(bits(y), (std::vector<uint32_t>{0x3F2BBAE2u, 0x4000CC2Au}));
  // bf16 first: bf16(r) = 0x3EE5, bf16(RN(3 r)) = 0x3FAC; then times 1.5 exactly.
  rms_norm_row(x.data(), w.data(), 2, 0.0f, RmsWeight::kBf16BeforeWeight, rules(ReductionOrder::kSequential),
               y.data());
  EXPECT_EQ(bits(y), (std::vector<uint32_t>{0x3F2BC000u, 0x40010000u}));
}

TEST(NormKnownAnswers, LayerNormExactMeanAndVariance) {
  // (1, 2, 3, 4): mean 2.5, centred (-1.5, -0.5, 0.5, 1.5), variance 1.25,
  // rstd = RN(1.25^-1/2) = 0x3F64F92E; w = 1, b = 0: y = RN(centred rstd).
  const std::vector<float> x = {1, 2, 3, 4}, w = {1, 1, 1, 1}, b = {0, 0, 0, 0};
  std::vector<float> y(4);
  for (ReductionOrder order : {ReductionOrder::kSequential, ReductionOrder::kPairwise, ReductionOrder::kStridedLanes,
                               ReductionOrder::kBlockedLanes}) {
    const LayerNormStats s =
        layer_norm_row(x.data(), w.data(), b.data(), 4, 0.0f, LayerNormAffine::kFma, rules(order, 4), y.data());
    EXPECT_EQ(s.mean, 2.5f);
    EXPECT_EQ(s.variance, 1.25f);
    EXPECT_EQ(bits_of(s.rstd), 0x3F64F92Eu);
    EXPECT_EQ(bits(y), (std::vector<uint32_t>{0xBFABBAE2u, 0xBEE4F92Eu, 0x3EE4F92Eu, 0x3FABBAE2u}));
  }
  // eps = 1e-6f (0x358637BD): RN(1.25 + eps) = 0x3FA00008, rstd = 0x3F64F928.
  const LayerNormStats s = layer_norm_row(x.data(), w.data(), b.data(), 4, 1e-6f, LayerNormAffine::kFma,
                                          rules(ReductionOrder::kSequential), y.data());
  EXPECT_EQ(bits_of(s.rstd), 0x3F64F928u);
}

TEST(NormKnownAnswers, LayerNormTheAffineStepsRounding) {
  // p = RN(centred rstd) as above, w = 3, b = -RN(3 p): multiply-then-add
  // gives exactly 0; the fused step keeps 3 p - RN(3 p), worked exactly:
  // 2^-22, -2^-24, 2^-24, -2^-22.
  const std::vector<float> x = {1, 2, 3, 4}, w = {3, 3, 3, 3};
  const std::vector<float> b = {float_from_bits(0x4080CC2Au), float_from_bits(0x3FABBAE2u),
                                float_from_bits(0xBFABBAE2u), float_from_bits(0xC080CC2Au)};
  std::vector<float> y(4);
  layer_norm_row(x.data(), w.data(), b.data(), 4, 0.0f, LayerNormAffine::kMultiplyAdd,
                 rules(ReductionOrder::kSequential), y.data());
  EXPECT_EQ(bits(y), (std::vector<uint32_t>{0, 0, 0, 0}));
  layer_norm_row(x.data(), w.data(), b.data(), 4, 0.0f, LayerNormAffine::kFma, rules(ReductionOrder::kSequential),
                 y.data());
  EXPECT_EQ(bits(y), (std::vector<uint32_t>{0x34800000u, 0xB3800000u, 0x33800000u, 0xB4800000u}));
}

TEST(NormKnownAnswers, TheRsqrtConvention) {
  // v = 0x40DA4AB6 (6.82...): 1 / sqrtf(v) rounds twice to 0x3EC4081B, one ulp
  // above the nearest, 0x3EC4081A.
  const float v = float_from_bits(0x40DA4AB6u);
  NormRules r = rules(ReductionOrder::kSequential);
  EXPECT_EQ(bits_of(norm_rsqrt(v, r)), 0x3EC4081Au);
  r.rsqrt = RsqrtKind::kSqrtThenDivide;
  EXPECT_EQ(bits_of(norm_rsqrt(v, r)), 0x3EC4081Bu);
  // The hardware's, through a table: one -1 correction everywhere.
  const std::vector<uint8_t> table(kRsqrtApproxTableBytes, 0x55);  // every entry 1
  r.rsqrt = RsqrtKind::kApproxFtz;
  r.rsqrt_table = table.data();
  EXPECT_EQ(bits_of(norm_rsqrt(v, r)), 0x3EC40819u);
  // In a norm: x = (2, 2) has mean square 4, r = 0.5 less one ulp, y = 2 r.
  const std::vector<float> x = {2, 2}, w = {1, 1};
  std::vector<float> y(2);
  EXPECT_EQ(bits_of(rms_norm_row(x.data(), w.data(), 2, 0.0f, RmsWeight::kF32, r, y.data())), 0x3EFFFFFFu);
  EXPECT_EQ(bits(y), (std::vector<uint32_t>{0x3F7FFFFFu, 0x3F7FFFFFu}));
}

}  // namespace
}  // namespace qcheck::spec
