// Known answers for the UE8M0 row scale (SEMANTICS.md "Numeric building
// blocks"), each derived by hand in its comment, for the default rule and the
// three variants; plus amax (NaN ignored) on the spec and every SIMD target.
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "numerics/conversions.h"
#include "numerics/float_bits.h"
#include "numerics/simd_rows.h"
#include "numerics/ue8m0.h"
#include "tests/reference/f32_sweep.h"
#include "tests/reference/target_fixture.h"

namespace qcheck::test {
namespace {

std::string scale_bits(float amax, ScaleCeiling ceiling, ScaleFloor floor) {
  return hex(bits_of(spec::ue8m0_scale(amax, ceiling, floor)), 8);
}

const float kInf = float_from_bits(kF32InfBits);

TEST(Ue8m0KnownAnswers, DefaultRule) {
  const ScaleCeiling exact = ScaleCeiling::kExactBits;
  const ScaleFloor floor = ScaleFloor::kAmax1e4;
  // amax 0 -> floor 1e-4; 1e-4 / 448 ~ 2.23e-7 lies between 2^-23 ~ 1.19e-7
  // and 2^-22 ~ 2.38e-7, so the ceiling is 2^-22 (biased exponent 105 = 0x69).
  EXPECT_EQ(scale_bits(0.0f, exact, floor), "0x34800000");
  // 448 / 448 = 1 exactly: a power of two is its own ceiling.
  EXPECT_EQ(scale_bits(448.0f, exact, floor), "0x3F800000");
  // 448 (1 + 2^-23) / 448 = 1 + 2^-23: any mantissa bit lifts it to 2.
  EXPECT_EQ(scale_bits(float_from_bits(0x43E00001), exact, floor), "0x40000000");
  // 224 / 448 = 0.5.
  EXPECT_EQ(scale_bits(224.0f, exact, floor), "0x3F000000");
  // 200 / 448 ~ 0.446, between 0.25 and 0.5.
  EXPECT_EQ(scale_bits(200.0f, exact, floor), "0x3F000000");
  // An Inf in the row: the scale is +Inf.
  EXPECT_EQ(scale_bits(kInf, exact, floor), "0x7F800000");
  // FLT_MAX / 448 ~ 2^119.19: ceiling 2^120 (biased 247 = 0xF7).
  EXPECT_EQ(scale_bits(float_from_bits(0x7F7FFFFF), exact, floor), "0x7B800000");
}

TEST(Ue8m0KnownAnswers, AllNanRowTakesTheFloor) {
  const float row[4] = {float_from_bits(0x7FC00000), float_from_bits(0xFFC00000), float_from_bits(0x7F800001),
                        float_from_bits(0xFFFFFFFF)};
  const float amax = spec::row_amax(row, 4);
  EXPECT_EQ(hex(bits_of(amax), 8), "0x00000000");
  EXPECT_EQ(scale_bits(amax, ScaleCeiling::kExactBits, ScaleFloor::kAmax1e4), "0x34800000");  // 2^-22
}

// With an Inf in the row the scale is +Inf: finite elements become +-0, the
// Inf itself Inf / Inf = NaN (0x7F under satfinite).
TEST(Ue8m0KnownAnswers, InfRowQuantizes) {
  const float scale = spec::ue8m0_scale(kInf, ScaleCeiling::kExactBits, ScaleFloor::kAmax1e4);
  EXPECT_EQ(hex(spec::e4m3_from_f32(3.0f / scale, E4m3Overflow::kSatFinite), 2), "0x00");
  EXPECT_EQ(hex(spec::e4m3_from_f32(-3.0f / scale, E4m3Overflow::kSatFinite), 2), "0x80");
  EXPECT_EQ(hex(spec::e4m3_from_f32(kInf / scale, E4m3Overflow::kSatFinite), 2), "0x7F");
  EXPECT_EQ(hex(spec::e8m0_byte(scale), 2), "0xFF");  // no e8m0 encoding: the NaN byte
}

// (A) vLLM Triton: exp2(ceil(log2f(s0))). At s0 = 16 (1 + 2^-23) log2f gives
// 4 + 2^-23 / ln 2 ~ 4 + 1.7e-7, which rounds to 4.0 (half an ulp at 4 is
// 2.4e-7), so the ceiling stays 16 where the exact one is 32. An amax with
// RN(amax / 448) = 16 (1 + 2^-23): amax = 7168 + 2^-10 (2 ulps above 448 * 16),
// amax / 448 = 16 + 2^-18 / 1.75 ~ 16 + 1.14 ulp(16), which rounds to 16 + 1 ulp.
TEST(Ue8m0KnownAnswers, Log2fVariantKeepsThePowerBelow) {
  const float amax = 7168.0f + 0x1p-10f;
  EXPECT_EQ(hex(bits_of(amax / 448.0f), 8), "0x41800001");  // 16 (1 + 2^-23)
  EXPECT_EQ(scale_bits(amax, ScaleCeiling::kExactBits, ScaleFloor::kAmax1e4), "0x42000000");  // 32
  EXPECT_EQ(scale_bits(amax, ScaleCeiling::kLog2f, ScaleFloor::kAmax1e4), "0x41800000");      // 16
  // Near 1 the band is empty (M = 0 for exponents -4..3): log2f(1 + 2^-23)
  // ~ 1.7e-7 is far above half an ulp of 0, so both give 2.
  EXPECT_EQ(scale_bits(float_from_bits(0x43E00001), ScaleCeiling::kLog2f, ScaleFloor::kAmax1e4), "0x40000000");
  // Powers of two agree.
  EXPECT_EQ(scale_bits(448.0f, ScaleCeiling::kLog2f, ScaleFloor::kAmax1e4), "0x3F800000");
}

// (B) FlashMLA's test quantizer: the 1e-4 floor on the scale. 1e-4 lies
// between 2^-14 ~ 6.1e-5 and 2^-13 ~ 1.22e-4: the smallest scale is 2^-13.
TEST(Ue8m0KnownAnswers, FloorOnScaleVariant) {
  EXPECT_EQ(scale_bits(0.0f, ScaleCeiling::kExactBits, ScaleFloor::kScale1e4), "0x39000000");  // 2^-13
  // amax 0.01: s0 ~ 2.23e-5, default ceiling 2^-15 (3.05e-5); the floored scale is 2^-13.
  EXPECT_EQ(scale_bits(0.01f, ScaleCeiling::kExactBits, ScaleFloor::kAmax1e4), "0x38000000");   // 2^-15
  EXPECT_EQ(scale_bits(0.01f, ScaleCeiling::kExactBits, ScaleFloor::kScale1e4), "0x39000000");  // 2^-13
  // Above amax = 448 * 2^-14 the floor does nothing: amax 1 -> s0 ~ 2.23e-3 -> 2^-8.
  EXPECT_EQ(scale_bits(1.0f, ScaleCeiling::kExactBits, ScaleFloor::kScale1e4), "0x3B800000");
  EXPECT_EQ(scale_bits(1.0f, ScaleCeiling::kExactBits, ScaleFloor::kAmax1e4), "0x3B800000");
}

// (C) vLLM's older unfused path: floor 1e-10 on amax. 1e-10 / 448 ~ 2.232e-13
// lies between 2^-43 ~ 1.137e-13 and 2^-42 ~ 2.274e-13: scale 2^-42 (biased 85).
TEST(Ue8m0KnownAnswers, Eps1e10Variant) {
  EXPECT_EQ(scale_bits(0.0f, ScaleCeiling::kExactBits, ScaleFloor::kAmax1e10), "0x2A800000");
  EXPECT_EQ(scale_bits(0.0f, ScaleCeiling::kLog2f, ScaleFloor::kAmax1e10), "0x2A800000");
  // Between the two floors the variant follows amax: 1e-6 / 448 ~ 2.23e-9 -> 2^-28.
  EXPECT_EQ(scale_bits(1e-6f, ScaleCeiling::kExactBits, ScaleFloor::kAmax1e10), "0x31800000");
  EXPECT_EQ(scale_bits(1e-6f, ScaleCeiling::kExactBits, ScaleFloor::kAmax1e4), "0x34800000");
}

TEST(Ue8m0KnownAnswers, E8m0Byte) {
  EXPECT_EQ(spec::e8m0_byte(1.0f), 127);
  EXPECT_EQ(spec::e8m0_byte(0x1p-22f), 105);
  EXPECT_EQ(spec::e8m0_byte(0x1p120f), 247);
}

// amax ignores NaN lanes (maxnum), whatever their sign or position.
TEST(Ue8m0KnownAnswers, AmaxOnSpecAndEveryTarget) {
  const uint32_t nan = 0x7FC00000, negative_nan = 0xFFC00001;
  struct Case {
    std::vector<uint32_t> row;
    uint32_t expected;
  };
  const Case cases[] = {
      {{nan, 0xC0400000 /* -3 */, 0x40000000 /* 2 */, negative_nan, 0x3F800000}, 0x40400000},
      {{0xFF800000 /* -Inf */, nan}, 0x7F800000},
      {{nan, negative_nan}, 0x00000000},
      {{0x80000000 /* -0 */}, 0x00000000},
      {{0x80000001, 0x00000002}, 0x00000002},  // subnormals order by bits too
      {{}, 0x00000000},
  };
  for (const Case& c : cases) {
    std::vector<float> row;
    for (uint32_t bits : c.row) row.push_back(float_from_bits(bits));
    EXPECT_EQ(hex(bits_of(spec::row_amax(row.data(), row.size())), 8), hex(c.expected, 8)) << "spec";
    for (const RowOps* ops : direct_target_tables()) {
      EXPECT_EQ(hex(bits_of(ops->amax_row(row.data(), row.size())), 8), hex(c.expected, 8)) << ops->name;
    }
  }
}

}  // namespace
}  // namespace qcheck::test
