// Known answers for the conversions, written by hand from the format
// definitions (OCP 8-bit FP E4M3FN: bias 7, max 448 = 0x7E, NaN 0x7F/0xFF;
// bf16 = the top 16 bits of an f32, round to nearest even) and from what
// SEMANTICS.md records of the H200 (PTX cvt.rn.bf16.f32 and
// cvt.rn.satfinite.e4m3x2.f32). Each answer is checked on the scalar spec
// and on every Highway target's rows.
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "numerics/conversions.h"
#include "numerics/float_bits.h"
#include "numerics/simd_rows.h"
#include "tests/reference/f32_sweep.h"
#include "tests/reference/target_fixture.h"

namespace qcheck::test {
namespace {

// The spec itself, then each target's direct table.
struct Implementation {
  std::string name;
  const RowOps* ops;  // nullptr: the scalar spec functions
};

std::vector<Implementation> implementations() {
  std::vector<Implementation> all{{"spec", nullptr}};
  for (const RowOps* ops : direct_target_tables()) all.push_back({ops->name, ops});
  return all;
}

uint16_t to_bf16(const Implementation& impl, uint32_t bits, Bf16Nan rule) {
  const float value = float_from_bits(bits);
  if (impl.ops == nullptr) return spec::bf16_from_f32(value, rule);
  uint16_t out = 0;
  impl.ops->bf16_from_f32_row(&value, &out, 1, rule);
  return out;
}

uint8_t to_e4m3(const Implementation& impl, uint32_t bits, E4m3Overflow rule) {
  const float value = float_from_bits(bits);
  if (impl.ops == nullptr) return spec::e4m3_from_f32(value, rule);
  uint8_t out = 0;
  impl.ops->quantize_row(&value, 1.0f, &out, 1, rule);  // x / 1 == x (NaN keeps its sign)
  return out;
}

struct Bf16Case {
  uint32_t input;
  uint16_t expected;
  const char* why;
};

TEST(ConversionKnownAnswers, Bf16RoundToNearestEven) {
  const Bf16Case cases[] = {
      {0x3F800000, 0x3F80, "1.0"},
      {0xC0200000, 0xC020, "-2.5"},
      {0x3F808000, 0x3F80, "tie, kept part even: stays"},
      {0x3F818000, 0x3F82, "tie, kept part odd: rounds up to even"},
      {0x3F808001, 0x3F81, "just above half: up"},
      {0x3F807FFF, 0x3F80, "just below half: down"},
      {0x7F7FFFFF, 0x7F80, "FLT_MAX rounds to +Inf"},
      {0x7F7F8000, 0x7F80, "tie at the top, odd: +Inf"},
      {0x7F7F7FFF, 0x7F7F, "just below: the bf16 maximum"},
      {0x00010000, 0x0001, "smallest bf16 subnormal is kept"},
      {0x00008000, 0x0000, "tie to even: +0"},
      {0x00018000, 0x0002, "tie, odd: up"},
      {0x80000001, 0x8000, "smallest negative subnormal: -0"},
      {0x807FFFFF, 0x8080, "largest negative subnormal rounds to the smallest normal"},
      {0x7F800000, 0x7F80, "+Inf"},
      {0xFF800000, 0xFF80, "-Inf"},
      {0x00000000, 0x0000, "+0"},
      {0x80000000, 0x8000, "-0"},
  };
  for (const Implementation& impl : implementations()) {
    for (Bf16Nan rule : {Bf16Nan::k7FFF, Bf16Nan::k7FC0, Bf16Nan::kKeepSignQuiet}) {
      for (const Bf16Case& c : cases) {
        EXPECT_EQ(hex(to_bf16(impl, c.input, rule), 4), hex(c.expected, 4))
            << impl.name << " rule " << int(rule) << " input " << hex(c.input, 8) << " (" << c.why << ")";
      }
    }
  }
}

TEST(ConversionKnownAnswers, Bf16NanRules) {
  struct NanCase {
    uint32_t input;
    uint16_t keep_sign_quiet;  // (bits >> 16) | 0x0040
  };
  const NanCase cases[] = {
      {0x7FC00000, 0x7FC0},  // quiet
      {0xFFC00000, 0xFFC0},  // negative quiet
      {0x7F800001, 0x7FC0},  // signalling, payload only in the low bits
      {0xFF800001, 0xFFC0},  // negative signalling
      {0x7FA12345, 0x7FE1},  // signalling with a payload in the top bits
      {0xFFFFFFFF, 0xFFFF},
  };
  for (const Implementation& impl : implementations()) {
    for (const NanCase& c : cases) {
      EXPECT_EQ(hex(to_bf16(impl, c.input, Bf16Nan::k7FFF), 4), "0x7FFF") << impl.name << " " << hex(c.input, 8);
      EXPECT_EQ(hex(to_bf16(impl, c.input, Bf16Nan::k7FC0), 4), "0x7FC0") << impl.name << " " << hex(c.input, 8);
      EXPECT_EQ(hex(to_bf16(impl, c.input, Bf16Nan::kKeepSignQuiet), 4), hex(c.keep_sign_quiet, 4))
          << impl.name << " " << hex(c.input, 8);
    }
  }
}

struct E4m3Case {
  uint32_t input;
  uint8_t satfinite;
  uint8_t overflow_nan;
  const char* why;
};

TEST(ConversionKnownAnswers, E4m3) {
  const E4m3Case cases[] = {
      {0x3F800000, 0x38, 0x38, "1.0 = 2^0: exponent field 7"},
      {0x3F000000, 0x30, 0x30, "0.5"},
      {0xC0400000, 0xC4, 0xC4, "-3 = -1.5 * 2"},
      {0x3F880000, 0x38, 0x38, "1.0625: tie between 1 and 1.125, even mantissa 0"},
      {0x3F980000, 0x3A, 0x3A, "1.1875: tie between 1.125 and 1.25, even mantissa 2"},
      {0x43700000, 0x77, 0x77, "240 = 1.875 * 2^7"},
      {0x43D00000, 0x7D, 0x7D, "416 = 1.625 * 2^8"},
      {0x43D80000, 0x7E, 0x7E, "432: tie between 416 and 448, even: 448"},
      {0x43E00000, 0x7E, 0x7E, "448, the maximum"},
      {0x43E80000, 0x7E, 0x7E, "464: tie between 448 and 480, even: 448"},
      {0x43E80001, 0x7E, 0x7F, "464 + 1 ulp rounds above 448"},
      {0x43F00000, 0x7E, 0x7F, "480"},
      {0xC3F00000, 0xFE, 0xFF, "-480"},
      {0x7F7FFFFF, 0x7E, 0x7F, "FLT_MAX"},
      {0x7F800000, 0x7E, 0x7F, "+Inf"},
      {0xFF800000, 0xFE, 0xFF, "-Inf"},
      {0x7FC00000, 0x7F, 0x7F, "NaN"},
      {0xFFC00000, 0x7F, 0xFF, "-NaN: sign dropped by satfinite, kept by overflow-nan"},
      {0x7F800001, 0x7F, 0x7F, "signalling NaN"},
      {0xFF812345, 0x7F, 0xFF, "negative signalling NaN"},
      {0x3C800000, 0x08, 0x08, "2^-6, the smallest normal"},
      {0x3C700000, 0x08, 0x08, "15 * 2^-10: tie between 7 and 8 * 2^-9, even: 2^-6"},
      {0x3B000000, 0x01, 0x01, "2^-9, the smallest subnormal"},
      {0x3B400000, 0x02, 0x02, "3 * 2^-10: tie between 1 and 2 * 2^-9, even: 2"},
      {0x3A800000, 0x00, 0x00, "2^-10: tie between 0 and 2^-9, even: 0"},
      {0xBA800000, 0x80, 0x80, "-2^-10: -0"},
      {0x3A800001, 0x01, 0x01, "2^-10 + 1 ulp: above the tie"},
      {0x00000001, 0x00, 0x00, "smallest f32 subnormal"},
      {0x80000001, 0x80, 0x80, "smallest negative f32 subnormal"},
      {0x007FFFFF, 0x00, 0x00, "largest f32 subnormal"},
      {0x00000000, 0x00, 0x00, "+0"},
      {0x80000000, 0x80, 0x80, "-0"},
  };
  for (const Implementation& impl : implementations()) {
    for (const E4m3Case& c : cases) {
      EXPECT_EQ(hex(to_e4m3(impl, c.input, E4m3Overflow::kSatFinite), 2), hex(c.satfinite, 2))
          << impl.name << " satfinite, input " << hex(c.input, 8) << " (" << c.why << ")";
      EXPECT_EQ(hex(to_e4m3(impl, c.input, E4m3Overflow::kNan), 2), hex(c.overflow_nan, 2))
          << impl.name << " overflow-nan, input " << hex(c.input, 8) << " (" << c.why << ")";
    }
  }
}

// e4m3 -> f32 for every code. The positive codes, row by exponent field E:
// E = 0 holds the subnormals m * 2^-9; E >= 1 holds (1 + m / 8) * 2^(E - 7),
// written as hex floats (0x1.2p0 = 1.125, 0x1.ep0 = 1.875). 0x7F is NaN.
TEST(ConversionKnownAnswers, E4m3ToF32EveryCode) {
  const float positive[128] = {
      0.0f,    0x1p-9f,   0x1p-8f,   0x1.8p-8f, 0x1p-7f,   0x1.4p-7f, 0x1.8p-7f, 0x1.cp-7f,  // E = 0
      0x1p-6f, 0x1.2p-6f, 0x1.4p-6f, 0x1.6p-6f, 0x1.8p-6f, 0x1.ap-6f, 0x1.cp-6f, 0x1.ep-6f,  // E = 1
      0x1p-5f, 0x1.2p-5f, 0x1.4p-5f, 0x1.6p-5f, 0x1.8p-5f, 0x1.ap-5f, 0x1.cp-5f, 0x1.ep-5f,
      0x1p-4f, 0x1.2p-4f, 0x1.4p-4f, 0x1.6p-4f, 0x1.8p-4f, 0x1.ap-4f, 0x1.cp-4f, 0x1.ep-4f,
      0x1p-3f, 0x1.2p-3f, 0x1.4p-3f, 0x1.6p-3f, 0x1.8p-3f, 0x1.ap-3f, 0x1.cp-3f, 0x1.ep-3f,
      0x1p-2f, 0x1.2p-2f, 0x1.4p-2f, 0x1.6p-2f, 0x1.8p-2f, 0x1.ap-2f, 0x1.cp-2f, 0x1.ep-2f,
      0x1p-1f, 0x1.2p-1f, 0x1.4p-1f, 0x1.6p-1f, 0x1.8p-1f, 0x1.ap-1f, 0x1.cp-1f, 0x1.ep-1f,
      0x1p0f,  0x1.2p0f,  0x1.4p0f,  0x1.6p0f,  0x1.8p0f,  0x1.ap0f,  0x1.cp0f,  0x1.ep0f,   // E = 7
      0x1p1f,  0x1.2p1f,  0x1.4p1f,  0x1.6p1f,  0x1.8p1f,  0x1.ap1f,  0x1.cp1f,  0x1.ep1f,
      0x1p2f,  0x1.2p2f,  0x1.4p2f,  0x1.6p2f,  0x1.8p2f,  0x1.ap2f,  0x1.cp2f,  0x1.ep2f,
      0x1p3f,  0x1.2p3f,  0x1.4p3f,  0x1.6p3f,  0x1.8p3f,  0x1.ap3f,  0x1.cp3f,  0x1.ep3f,
      0x1p4f,  0x1.2p4f,  0x1.4p4f,  0x1.6p4f,  0x1.8p4f,  0x1.ap4f,  0x1.cp4f,  0x1.ep4f,
      0x1p5f,  0x1.2p5f,  0x1.4p5f,  0x1.6p5f,  0x1.8p5f,  0x1.ap5f,  0x1.cp5f,  0x1.ep5f,
      0x1p6f,  0x1.2p6f,  0x1.4p6f,  0x1.6p6f,  0x1.8p6f,  0x1.ap6f,  0x1.cp6f,  0x1.ep6f,
      0x1p7f,  0x1.2p7f,  0x1.4p7f,  0x1.6p7f,  0x1.8p7f,  0x1.ap7f,  0x1.cp7f,  0x1.ep7f,
      0x1p8f,  0x1.2p8f,  0x1.4p8f,  0x1.6p8f,  0x1.8p8f,  0x1.ap8f,  0x1.cp8f,  0.0f,       // E = 15
  };
  EXPECT_EQ(positive[0x7E], 448.0f);
  for (uint32_t code = 0; code < 256; ++code) {
    const uint32_t actual = bits_of(spec::f32_from_e4m3(uint8_t(code)));
    if ((code & 0x7F) == 0x7F) {  // NaN: a quiet NaN with the code's sign
      EXPECT_EQ(hex(actual, 8), code & 0x80 ? "0xFFC00000" : "0x7FC00000") << "code " << hex(code, 2);
      continue;
    }
    const uint32_t expected = bits_of(positive[code & 0x7F]) | (code & 0x80 ? kF32SignMask : 0);
    EXPECT_EQ(hex(actual, 8), hex(expected, 8)) << "code " << hex(code, 2);
  }
}

TEST(ConversionKnownAnswers, Bf16ToF32) {
  const uint16_t codes[] = {0x3F80, 0x0001, 0x8000, 0x7F80, 0xFF80, 0xFFFF, 0x7FC1, 0x7F7F};
  const uint32_t expected[] = {0x3F800000, 0x00010000, 0x80000000, 0x7F800000,
                               0xFF800000, 0xFFFF0000, 0x7FC10000, 0x7F7F0000};
  for (const Implementation& impl : implementations()) {
    for (size_t i = 0; i < std::size(codes); ++i) {
      float out = 0;
      if (impl.ops == nullptr) {
        out = spec::f32_from_bf16(codes[i]);
      } else {
        impl.ops->f32_from_bf16_row(&codes[i], &out, 1);
      }
      EXPECT_EQ(hex(bits_of(out), 8), hex(expected[i], 8)) << impl.name << " bf16 " << hex(codes[i], 4);
    }
  }
}

}  // namespace
}  // namespace qcheck::test
