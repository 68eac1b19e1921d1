// Known answers for e4m3fnuz (numerics/e4m3fnuz.h), written by hand from the
// format's definition: bias 8, exponent field E and mantissa m give
// (1 + m/8) * 2^(E-8) for E >= 1 and m * 2^-10 for E = 0; the largest value
// is 0x7F = 240; 0x80 is the only NaN; there is no -0 and no Inf. Rounding is
// to nearest even; the overflow rules are those of E4m3FnuzOverflow
// (numerics/types.h). The exhaustive comparison with ml_dtypes is
// ml_dtypes/sweep.py.
#include <cstdint>

#include "gtest/gtest.h"
#include "numerics/e4m3fnuz.h"
#include "numerics/float_bits.h"
#include "tests/reference/f32_sweep.h"

namespace qcheck::test {
namespace {

std::string fnuz_hex(uint32_t input, E4m3FnuzOverflow rule) {
  return hex(spec::e4m3fnuz_from_f32(float_from_bits(input), rule), 2);
}

struct FnuzCase {
  uint32_t input;
  uint8_t satfinite;          // E4m3FnuzOverflow::kSatFinite
  uint8_t satfinite_inf_nan;  // kSatFiniteInfNan
  uint8_t overflow_nan;       // kNan
  const char* why;
};

TEST(E4m3FnuzKnownAnswers, FromF32) {
  const FnuzCase cases[] = {
      {0x3F800000, 0x40, 0x40, 0x40, "1.0 = 2^0: exponent field 8"},
      {0x3F000000, 0x38, 0x38, 0x38, "0.5"},
      {0xC0400000, 0xCC, 0xCC, 0xCC, "-3 = -1.5 * 2^1: E = 9, m = 4"},
      {0x3F880000, 0x40, 0x40, 0x40, "1.0625: tie between 1 and 1.125, even mantissa 0"},
      {0x3F980000, 0x42, 0x42, 0x42, "1.1875: tie between 1.125 and 1.25, even mantissa 2"},
      {0x3F880001, 0x41, 0x41, 0x41, "1.0625 + 1 ulp: above the tie"},
      {0x43600000, 0x7E, 0x7E, 0x7E, "224 = 1.75 * 2^7 (the kernels' clamp)"},
      {0x43680000, 0x7E, 0x7E, 0x7E, "232: tie between 224 and 240, even mantissa 6"},
      {0x43700000, 0x7F, 0x7F, 0x7F, "240, the largest value"},
      {0xC3700000, 0xFF, 0xFF, 0xFF, "-240"},
      {0x4377FFFF, 0x7F, 0x7F, 0x7F, "248 - 1 ulp: rounds to 240"},
      {0x43780000, 0x7F, 0x7F, 0x80, "248: tie between 240 (odd) and 256, goes up: overflow"},
      {0xC3780000, 0xFF, 0xFF, 0x80, "-248: overflow"},
      {0x43800000, 0x7F, 0x7F, 0x80, "256"},
      {0x43E00000, 0x7F, 0x7F, 0x80, "448, OCP e4m3's largest"},
      {0x43E80000, 0x7F, 0x7F, 0x80, "464, OCP e4m3's saturation edge"},
      {0xC3E80000, 0xFF, 0xFF, 0x80, "-464"},
      {0x7F7FFFFF, 0x7F, 0x7F, 0x80, "FLT_MAX"},
      {0xFF7FFFFF, 0xFF, 0xFF, 0x80, "-FLT_MAX"},
      {0x7F800000, 0x7F, 0x80, 0x80, "+Inf"},
      {0xFF800000, 0xFF, 0x80, 0x80, "-Inf"},
      {0x7FC00000, 0x80, 0x80, 0x80, "NaN"},
      {0xFFC00000, 0x80, 0x80, 0x80, "-NaN: the one NaN code, no sign"},
      {0x7F800001, 0x80, 0x80, 0x80, "signalling NaN"},
      {0xFF812345, 0x80, 0x80, 0x80, "negative signalling NaN"},
      {0x3C000000, 0x08, 0x08, 0x08, "2^-7, the smallest normal"},
      {0x3BF00000, 0x08, 0x08, 0x08, "15 * 2^-11: tie between 7 and 8 * 2^-10, even: 2^-7"},
      {0x3BE00000, 0x07, 0x07, 0x07, "7 * 2^-10, the largest subnormal"},
      {0x3B000000, 0x02, 0x02, 0x02, "2^-9 (OCP e4m3's smallest subnormal)"},
      {0x3A800000, 0x01, 0x01, 0x01, "2^-10, the smallest subnormal"},
      {0xBA800000, 0x81, 0x81, 0x81, "-2^-10"},
      {0x3AC00000, 0x02, 0x02, 0x02, "3 * 2^-11: tie between 1 and 2 * 2^-10, even: 2"},
      {0x3A000000, 0x00, 0x00, 0x00, "2^-11: tie between 0 and 2^-10, even: 0"},
      {0xBA000000, 0x00, 0x00, 0x00, "-2^-11 rounds to zero: 0x00, not 0x80 (the NaN)"},
      {0x3A000001, 0x01, 0x01, 0x01, "2^-11 + 1 ulp: above the tie"},
      {0xBA000001, 0x81, 0x81, 0x81, "-(2^-11 + 1 ulp)"},
      {0x00000001, 0x00, 0x00, 0x00, "smallest f32 subnormal"},
      {0x80000001, 0x00, 0x00, 0x00, "smallest negative f32 subnormal: 0x00"},
      {0x00000000, 0x00, 0x00, 0x00, "+0"},
      {0x80000000, 0x00, 0x00, 0x00, "-0: no negative zero"},
  };
  for (const FnuzCase& c : cases) {
    EXPECT_EQ(fnuz_hex(c.input, E4m3FnuzOverflow::kSatFinite), hex(c.satfinite, 2))
        << "satfinite, input " << hex(c.input, 8) << " (" << c.why << ")";
    EXPECT_EQ(fnuz_hex(c.input, E4m3FnuzOverflow::kSatFiniteInfNan), hex(c.satfinite_inf_nan, 2))
        << "satfinite-inf-nan, input " << hex(c.input, 8) << " (" << c.why << ")";
    EXPECT_EQ(fnuz_hex(c.input, E4m3FnuzOverflow::kNan), hex(c.overflow_nan, 2))
        << "overflow-nan, input " << hex(c.input, 8) << " (" << c.why << ")";
  }
}

// e4m3fnuz -> f32 for every code. The positive codes, a row per exponent
// field E: E = 0 holds the subnormals m * 2^-10; E >= 1 holds
// (1 + m/8) * 2^(E - 8), as hex floats (0x1.2p0 = 1.125, 0x1.ep7 = 240).
TEST(E4m3FnuzKnownAnswers, ToF32EveryCode) {
  const float positive[128] = {
      0.0f,    0x1p-10f,  0x1p-9f,   0x1.8p-9f, 0x1p-8f,   0x1.4p-8f, 0x1.8p-8f, 0x1.cp-8f,  // E = 0
      0x1p-7f, 0x1.2p-7f, 0x1.4p-7f, 0x1.6p-7f, 0x1.8p-7f, 0x1.ap-7f, 0x1.cp-7f, 0x1.ep-7f,  // E = 1
      0x1p-6f, 0x1.2p-6f, 0x1.4p-6f, 0x1.6p-6f, 0x1.8p-6f, 0x1.ap-6f, 0x1.cp-6f, 0x1.ep-6f,
      0x1p-5f, 0x1.2p-5f, 0x1.4p-5f, 0x1.6p-5f, 0x1.8p-5f, 0x1.ap-5f, 0x1.cp-5f, 0x1.ep-5f,
      0x1p-4f, 0x1.2p-4f, 0x1.4p-4f, 0x1.6p-4f, 0x1.8p-4f, 0x1.ap-4f, 0x1.cp-4f, 0x1.ep-4f,
      0x1p-3f, 0x1.2p-3f, 0x1.4p-3f, 0x1.6p-3f, 0x1.8p-3f, 0x1.ap-3f, 0x1.cp-3f, 0x1.ep-3f,
      0x1p-2f, 0x1.2p-2f, 0x1.4p-2f, 0x1.6p-2f, 0x1.8p-2f, 0x1.ap-2f, 0x1.cp-2f, 0x1.ep-2f,
      0x1p-1f, 0x1.2p-1f, 0x1.4p-1f, 0x1.6p-1f, 0x1.8p-1f, 0x1.ap-1f, 0x1.cp-1f, 0x1.ep-1f,
      0x1p0f,  0x1.2p0f,  0x1.4p0f,  0x1.6p0f,  0x1.8p0f,  0x1.ap0f,  0x1.cp0f,  0x1.ep0f,   // E = 8
      0x1p1f,  0x1.2p1f,  0x1.4p1f,  0x1.6p1f,  0x1.8p1f,  0x1.ap1f,  0x1.cp1f,  0x1.ep1f,
      0x1p2f,  0x1.2p2f,  0x1.4p2f,  0x1.6p2f,  0x1.8p2f,  0x1.ap2f,  0x1.cp2f,  0x1.ep2f,
      0x1p3f,  0x1.2p3f,  0x1.4p3f,  0x1.6p3f,  0x1.8p3f,  0x1.ap3f,  0x1.cp3f,  0x1.ep3f,
      0x1p4f,  0x1.2p4f,  0x1.4p4f,  0x1.6p4f,  0x1.8p4f,  0x1.ap4f,  0x1.cp4f,  0x1.ep4f,
      0x1p5f,  0x1.2p5f,  0x1.4p5f,  0x1.6p5f,  0x1.8p5f,  0x1.ap5f,  0x1.cp5f,  0x1.ep5f,
      0x1p6f,  0x1.2p6f,  0x1.4p6f,  0x1.6p6f,  0x1.8p6f,  0x1.ap6f,  0x1.cp6f,  0x1.ep6f,
      0x1p7f,  0x1.2p7f,  0x1.4p7f,  0x1.6p7f,  0x1.8p7f,  0x1.ap7f,  0x1.cp7f,  0x1.ep7f,   // E = 15
  };
  EXPECT_EQ(positive[0x7F], 240.0f);
  EXPECT_EQ(positive[0x08], 0.0078125f);  // 2^-7
  for (uint32_t code = 0; code < 256; ++code) {
    const uint32_t actual = bits_of(spec::f32_from_e4m3fnuz(uint8_t(code)));
    if (code == 0x80) {  // the NaN: the quiet NaN with the code's sign bit
      EXPECT_EQ(hex(actual, 8), "0xFFC00000");
      continue;
    }
    const uint32_t expected = bits_of(positive[code & 0x7F]) | (code & 0x80 ? kF32SignMask : 0);
    EXPECT_EQ(hex(actual, 8), hex(expected, 8)) << "code " << hex(code, 2);
  }
}

// Every code but the NaN is a value of the format, so it converts back to
// itself under every rule (no rounding, no overflow); 0x80 stays 0x80.
TEST(E4m3FnuzKnownAnswers, EveryCodeRoundTrips) {
  for (E4m3FnuzOverflow rule :
       {E4m3FnuzOverflow::kSatFinite, E4m3FnuzOverflow::kSatFiniteInfNan, E4m3FnuzOverflow::kNan}) {
    for (uint32_t code = 0; code < 256; ++code) {
      EXPECT_EQ(hex(spec::e4m3fnuz_from_f32(spec::f32_from_e4m3fnuz(uint8_t(code)), rule), 2), hex(code, 2))
          << name_of(rule) << " code " << hex(code, 2);
    }
  }
}

}  // namespace
}  // namespace qcheck::test
