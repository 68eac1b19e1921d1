// Known answers for e2m1 (numerics/e2m1.h), written by hand from the format's
// definition (codes 0..7 = 0, 0.5, 1, 1.5, 2, 3, 4, 6; bit 3 the sign) and
// from the conventions SEMANTICS-K.md states (section 0 "e2m1s", section 3.5,
// table 5.4): PTX cvt.rn.satfinite (round to nearest even, keeps -0), the same
// with -0 cleared, and SGLang's thresholds (ties toward zero, no -0, NaN -> 6).
// The exhaustive comparison with ml_dtypes is ml_dtypes/sweep.py.
#include <cstdint>

#include "gtest/gtest.h"
#include "numerics/e2m1.h"
#include "numerics/float_bits.h"
#include "tests/reference/f32_sweep.h"

namespace qcheck::test {
namespace {

std::string e2m1_hex(uint32_t input, E2m1Rounding rule) {
  return hex(spec::e2m1_from_f32(float_from_bits(input), rule), 1);
}

struct E2m1Case {
  uint32_t input;
  uint8_t cvt_rn;              // E2m1Rounding::kCvtRn
  uint8_t cvt_rn_no_neg_zero;  // kCvtRnNoNegZero
  uint8_t sglang;              // kSglangThresholds
  const char* why;
};

TEST(E2m1KnownAnswers, FromF32) {
  const E2m1Case cases[] = {
      {0x00000000, 0x0, 0x0, 0x0, "+0"},
      {0x80000000, 0x8, 0x0, 0x0, "-0"},
      {0x3DCCCCCD, 0x0, 0x0, 0x0, "0.1 rounds to 0"},
      {0xBDCCCCCD, 0x8, 0x0, 0x0, "-0.1 rounds to -0"},
      {0x00000001, 0x0, 0x0, 0x0, "smallest f32 subnormal"},
      {0x80000001, 0x8, 0x0, 0x0, "smallest negative f32 subnormal"},
      {0x3E800000, 0x0, 0x0, 0x0, "0.25: tie between 0 and 0.5, even: 0; not above the threshold"},
      {0xBE800000, 0x8, 0x0, 0x0, "-0.25"},
      {0x3E800001, 0x1, 0x1, 0x1, "0.25 + 1 ulp: 0.5"},
      {0xBE800001, 0x9, 0x9, 0x9, "-(0.25 + 1 ulp): -0.5"},
      {0x3F000000, 0x1, 0x1, 0x1, "0.5, the subnormal"},
      {0x3F3FFFFF, 0x1, 0x1, 0x1, "0.75 - 1 ulp: 0.5"},
      {0x3F400000, 0x2, 0x2, 0x1, "0.75: tie between 0.5 (code 1) and 1 (code 2): RNE 1, thresholds 0.5"},
      {0xBF400000, 0xA, 0xA, 0x9, "-0.75"},
      {0x3F400001, 0x2, 0x2, 0x2, "0.75 + 1 ulp: 1"},
      {0x3F800000, 0x2, 0x2, 0x2, "1.0, the smallest normal"},
      {0x3FA00000, 0x2, 0x2, 0x2, "1.25: tie between 1 (code 2) and 1.5 (code 3), even: 1; both rules"},
      {0x3FA00001, 0x3, 0x3, 0x3, "1.25 + 1 ulp: 1.5"},
      {0x3FC00000, 0x3, 0x3, 0x3, "1.5"},
      {0x3FE00000, 0x4, 0x4, 0x3, "1.75: tie between 1.5 (code 3) and 2 (code 4): RNE 2, thresholds 1.5"},
      {0xBFE00000, 0xC, 0xC, 0xB, "-1.75"},
      {0x3FE00001, 0x4, 0x4, 0x4, "1.75 + 1 ulp: 2"},
      {0x40000000, 0x4, 0x4, 0x4, "2"},
      {0x40200000, 0x4, 0x4, 0x4, "2.5: tie between 2 (code 4) and 3 (code 5), even: 2; both rules"},
      {0x40200001, 0x5, 0x5, 0x5, "2.5 + 1 ulp: 3"},
      {0x40400000, 0x5, 0x5, 0x5, "3"},
      {0x405FFFFF, 0x5, 0x5, 0x5, "3.5 - 1 ulp: 3"},
      {0x40600000, 0x6, 0x6, 0x5, "3.5: tie between 3 (code 5) and 4 (code 6): RNE 4, thresholds 3"},
      {0xC0600000, 0xE, 0xE, 0xD, "-3.5"},
      {0x40800000, 0x6, 0x6, 0x6, "4"},
      {0x409FFFFF, 0x6, 0x6, 0x6, "5 - 1 ulp: 4"},
      {0x40A00000, 0x6, 0x6, 0x6, "5: tie between 4 (code 6) and 6 (code 7), even: 4; both rules"},
      {0xC0A00000, 0xE, 0xE, 0xE, "-5"},
      {0x40A00001, 0x7, 0x7, 0x7, "5 + 1 ulp: 6"},
      {0x40C00000, 0x7, 0x7, 0x7, "6, the largest value"},
      {0xC0C00000, 0xF, 0xF, 0xF, "-6"},
      {0x40D00000, 0x7, 0x7, 0x7, "6.5: saturates to 6"},
      {0x40E00000, 0x7, 0x7, 0x7, "7: tie between 6 and 8 goes up past 6: saturates"},
      {0xC0E00000, 0xF, 0xF, 0xF, "-7"},
      {0x41000000, 0x7, 0x7, 0x7, "8"},
      {0x7F7FFFFF, 0x7, 0x7, 0x7, "FLT_MAX"},
      {0xFF7FFFFF, 0xF, 0xF, 0xF, "-FLT_MAX"},
      {0x7F800000, 0x7, 0x7, 0x7, "+Inf -> 6"},
      {0xFF800000, 0xF, 0xF, 0xF, "-Inf -> -6"},
      // NaN: the placeholder +6 under cvt.rn (unmeasured, e2m1.h); SGLang's
      // NaN -> 6, its sign dropped (NaN < 0 is false).
      {0x7FC00000, 0x7, 0x7, 0x7, "NaN"},
      {0xFFC00000, 0x7, 0x7, 0x7, "-NaN"},
      {0x7F800001, 0x7, 0x7, 0x7, "signalling NaN"},
      {0xFF812345, 0x7, 0x7, 0x7, "negative signalling NaN"},
  };
  for (const E2m1Case& c : cases) {
    EXPECT_EQ(e2m1_hex(c.input, E2m1Rounding::kCvtRn), hex(c.cvt_rn, 1))
        << "cvt-rn, input " << hex(c.input, 8) << " (" << c.why << ")";
    EXPECT_EQ(e2m1_hex(c.input, E2m1Rounding::kCvtRnNoNegZero), hex(c.cvt_rn_no_neg_zero, 1))
        << "cvt-rn-no-neg-zero, input " << hex(c.input, 8) << " (" << c.why << ")";
    EXPECT_EQ(e2m1_hex(c.input, E2m1Rounding::kSglangThresholds), hex(c.sglang, 1))
        << "sglang-thresholds, input " << hex(c.input, 8) << " (" << c.why << ")";
  }
}

TEST(E2m1KnownAnswers, ToF32EveryCode) {
  const uint32_t expected[16] = {
      0x00000000, 0x3F000000, 0x3F800000, 0x3FC00000,  // 0, 0.5, 1, 1.5
      0x40000000, 0x40400000, 0x40800000, 0x40C00000,  // 2, 3, 4, 6
      0x80000000, 0xBF000000, 0xBF800000, 0xBFC00000,  // -0, -0.5, -1, -1.5
      0xC0000000, 0xC0400000, 0xC0800000, 0xC0C00000,  // -2, -3, -4, -6
  };
  for (uint32_t code = 0; code < 16; ++code) {
    EXPECT_EQ(hex(bits_of(spec::f32_from_e2m1(uint8_t(code))), 8), hex(expected[code], 8)) << "code " << code;
    // The high nibble is not read.
    EXPECT_EQ(hex(bits_of(spec::f32_from_e2m1(uint8_t(0xA0 | code))), 8), hex(expected[code], 8))
        << "code " << code << " with a high nibble";
  }
}

// Every code's value converts back to the code, except where a rule has no
// such code: -0 (0x8) becomes 0x0 without negative zeros.
TEST(E2m1KnownAnswers, EveryCodeRoundTrips) {
  for (E2m1Rounding rule :
       {E2m1Rounding::kCvtRn, E2m1Rounding::kCvtRnNoNegZero, E2m1Rounding::kSglangThresholds}) {
    for (uint32_t code = 0; code < 16; ++code) {
      const uint32_t expected = code == 0x8 && rule != E2m1Rounding::kCvtRn ? 0x0 : code;
      EXPECT_EQ(hex(spec::e2m1_from_f32(spec::f32_from_e2m1(uint8_t(code)), rule), 1), hex(expected, 1))
          << name_of(rule) << " code " << code;
    }
  }
}

TEST(E2m1KnownAnswers, PairPacking) {
  EXPECT_EQ(hex(spec::pack_e2m1_pair(0x1, 0x2), 2), "0x21") << "even element low, odd element high";
  EXPECT_EQ(hex(spec::pack_e2m1_pair(0xF, 0x8), 2), "0x8F");
  EXPECT_EQ(hex(spec::pack_e2m1_pair(0x0, 0x0), 2), "0x00");
  EXPECT_EQ(hex(spec::pack_e2m1_pair(0x13, 0x24), 2), "0x43") << "only the low nibbles are read";
  EXPECT_EQ(hex(spec::e2m1_even_code(0x8F), 1), "0xF");
  EXPECT_EQ(hex(spec::e2m1_odd_code(0x8F), 1), "0x8");
  // Elements (0.5, -6): byte = code(0.5) | code(-6) << 4 = 0x1 | 0xF << 4.
  const uint8_t byte = spec::pack_e2m1_pair(spec::e2m1_from_f32(0.5f, E2m1Rounding::kCvtRn),
                                            spec::e2m1_from_f32(-6.0f, E2m1Rounding::kCvtRn));
  EXPECT_EQ(hex(byte, 2), "0xF1");
  for (uint32_t even = 0; even < 16; ++even) {
    for (uint32_t odd = 0; odd < 16; ++odd) {
      const uint8_t packed = spec::pack_e2m1_pair(uint8_t(even), uint8_t(odd));
      EXPECT_EQ(packed, even + 16 * odd);
      EXPECT_EQ(spec::e2m1_even_code(packed), even);
      EXPECT_EQ(spec::e2m1_odd_code(packed), odd);
    }
  }
}

}  // namespace
}  // namespace qcheck::test
