// Known answers for the RoPE row (SEMANTICS.md tasks 1-2), worked out by
// hand, on the scalar spec and on every Highway target: an interleaved and a
// NeoX row of exactly representable values (every contraction pattern gives
// the same bits there), and a pair where the three contraction patterns give
// three different results.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "numerics/float_bits.h"
#include "numerics/rope.h"
#include "numerics/simd_rows.h"
#include "tests/reference/f32_sweep.h"
#include "tests/reference/target_fixture.h"

namespace qcheck::test {
namespace {

using RopeFunction = void (*)(const float*, const float*, const float*, size_t, RopeStyle, Contraction,
                              Contraction, float*);

struct Implementation {
  std::string name;
  RopeFunction rope;
};

std::vector<Implementation> implementations() {
  std::vector<Implementation> all{{"spec", spec::rope_row}};
  for (const RowOps* ops : direct_target_tables()) all.push_back({ops->name, ops->rope_row});
  return all;
}

const Contraction kContractions[] = {Contraction::kNone, Contraction::kFuseCos, Contraction::kFuseSin};

void expect_row(const Implementation& impl, const std::vector<float>& x, const std::vector<float>& cos,
                const std::vector<float>& sin, RopeStyle style, Contraction minus, Contraction plus,
                const std::vector<float>& expected) {
  std::vector<float> out(x.size(), float_from_bits(0x7FBADBAD));
  impl.rope(x.data(), cos.data(), sin.data(), x.size(), style, minus, plus, out.data());
  for (size_t j = 0; j < x.size(); ++j) {
    EXPECT_EQ(hex(bits_of(out[j]), 8), hex(bits_of(expected[j]), 8))
        << impl.name << " " << name_of(style) << " contraction " << int(minus) << "/" << int(plus) << " r[" << j
        << "] (expected " << expected[j] << ")";
  }
}

// Interleaved pairs (x_2i, x_2i+1) with c_i, s_i:
//   r_2i = x_2i c_i - x_2i+1 s_i,  r_2i+1 = x_2i+1 c_i + x_2i s_i
// pair 0: (1, 2),   c 1,    s 0:    r = 1 - 0 = 1,           2 + 0 = 2
// pair 1: (3, 4),   c 0.5,  s 0.5:  r = 1.5 - 2 = -0.5,      2 + 1.5 = 3.5
// pair 2: (-1, .5), c 0,    s 1:    r = -0 - 0.5 = -0.5,     0 + -1 = -1
// pair 3: (8, -2),  c -1,   s 0.25: r = -8 + 0.5 = -7.5,     2 + 2 = 4
TEST(RopeKnownAnswers, InterleavedRowOfEight) {
  const std::vector<float> x = {1, 2, 3, 4, -1, 0.5f, 8, -2};
  const std::vector<float> cos = {1, 0.5f, 0, -1}, sin = {0, 0.5f, 1, 0.25f};
  const std::vector<float> expected = {1, 2, -0.5f, 3.5f, -0.5f, -1, -7.5f, 4};
  for (const Implementation& impl : implementations()) {
    for (Contraction minus : kContractions) {
      for (Contraction plus : kContractions) {
        expect_row(impl, x, cos, sin, RopeStyle::kInterleaved, minus, plus, expected);
      }
    }
  }
}

// NeoX, h = 4: r_j = x_j c_j - x_(j+4) s_j (j < 4), r_j = x_j c_(j-4) + x_(j-4) s_(j-4)
//   j 0: 1*1 - 5*0 = 1        j 4: 5*1 + 1*0 = 5
//   j 1: 2*.5 - 6*.5 = -2     j 5: 6*.5 + 2*.5 = 4
//   j 2: 3*0 - 7*1 = -7       j 6: 7*0 + 3*1 = 3
//   j 3: 4*-1 - 8*.25 = -6    j 7: 8*-1 + 4*.25 = -7
TEST(RopeKnownAnswers, NeoxRowOfEight) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<float> cos = {1, 0.5f, 0, -1}, sin = {0, 0.5f, 1, 0.25f};
  const std::vector<float> expected = {1, -2, -7, -6, 5, 4, 3, -7};
  for (const Implementation& impl : implementations()) {
    for (Contraction minus : kContractions) {
      for (Contraction plus : kContractions) {
        expect_row(impl, x, cos, sin, RopeStyle::kNeox, minus, plus, expected);
      }
    }
  }
}

// One pair where the contraction decides the result. With a = 1 + 2^-12
// (0x3F800800) for x1, x2, c and s:
//   x1 c = x2 s = 1 + 2^-11 + 2^-24 exactly; RN gives 1 + 2^-11 (a tie: the
//   even neighbour is 1 + 2^-11).
// r1 = x1 c - x2 s:
//   none:     RN(1 + 2^-11) - RN(1 + 2^-11)            = +0            0x00000000
//   fuse-cos: fma(x1, c, -RN(x2 s)) = 2^-24 exactly     = +2^-24        0x33800000
//   fuse-sin: fma(-x2, s, RN(x1 c)) = -2^-24 exactly    = -2^-24        0xB3800000
// r2 = x2 c + x1 s = 2 + 2^-10 + 2^-24 before rounding; every pattern gives
//   2 + 2^-10 (0x40001000): RN of the sum of the rounded products is exact,
//   and the fused 2 + 2^-10 + 2^-24 is a quarter ulp above it.
TEST(RopeKnownAnswers, ContractionPatternsGiveDifferentBits) {
  const float a = float_from_bits(0x3F800800);
  const std::vector<float> x = {a, a}, cos = {a}, sin = {a};
  struct Expected {
    Contraction pattern;
    uint32_t r1;
  };
  const Expected cases[] = {{Contraction::kNone, 0x00000000},
                            {Contraction::kFuseCos, 0x33800000},
                            {Contraction::kFuseSin, 0xB3800000}};
  for (const Implementation& impl : implementations()) {
    for (RopeStyle style : {RopeStyle::kInterleaved, RopeStyle::kNeox}) {  // one pair: same layout
      for (const Expected& minus : cases) {
        for (Contraction plus : kContractions) {
          expect_row(impl, x, cos, sin, style, minus.pattern, plus,
                     {float_from_bits(minus.r1), float_from_bits(0x40001000)});
        }
      }
    }
  }
}

// The pattern is chosen per row half: in a NeoX row of 4 the minus pattern
// applies to r_0, r_1 and the plus pattern to r_2, r_3. The same pair twice
// with r2's terms made contraction-sensitive by negating x1 in the second
// pair: r_3 = x_3 c_1 + x_1 s_1 with x_1 = -a, x_3 = a gives
// RN(a c) + RN(-a s) = 0 (none), fma(a, c, -RN(a s)) = 2^-24 (fuse-cos),
// fma(-a, s, RN(a c)) = -2^-24 (fuse-sin).
TEST(RopeKnownAnswers, PlusPatternAppliesToTheSecondHalf) {
  const float a = float_from_bits(0x3F800800);
  const std::vector<float> x = {a, -a, a, a}, cos = {a, a}, sin = {a, a};
  // r_0 = a c - a s, r_1 = -a c - a s, r_2 = a c + a s, r_3 = a c + (-a) s.
  const uint32_t r3_by_plus[] = {0x00000000, 0x33800000, 0xB3800000};
  for (const Implementation& impl : implementations()) {
    for (size_t p = 0; p < 3; ++p) {
      std::vector<float> out(4);
      impl.rope(x.data(), cos.data(), sin.data(), 4, RopeStyle::kNeox, Contraction::kNone, kContractions[p],
                out.data());
      EXPECT_EQ(hex(bits_of(out[0]), 8), "0x00000000") << impl.name;
      EXPECT_EQ(hex(bits_of(out[1]), 8), "0xC0001000") << impl.name;  // -(2 + 2^-10)
      EXPECT_EQ(hex(bits_of(out[2]), 8), "0x40001000") << impl.name;
      EXPECT_EQ(hex(bits_of(out[3]), 8), hex(r3_by_plus[p], 8)) << impl.name << " plus pattern " << p;
    }
  }
}

}  // namespace
}  // namespace qcheck::test
