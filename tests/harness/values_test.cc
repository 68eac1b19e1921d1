// Input generation: deterministic, rows independent of T, positions inside
// [0, P), and the edge recipes really reach the edges they aim at.
#include "fuzz/buffers/values.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "fuzz/buffers/value_rows.h"
#include "fuzz/case/case_names.h"
#include "fuzz/verdict/verdict.h"
#include "numerics/conversions.h"
#include "numerics/float_bits.h"
#include "tests/harness/case_samples.h"

namespace qcheck {
namespace {

bool same_bytes(const TensorSet& x, const TensorSet& y) {
  if (x.buffers.size() != y.buffers.size()) return false;
  for (size_t i = 0; i < x.buffers.size(); ++i) {
    if (x.buffers[i].size() != y.buffers[i].size() ||
        std::memcmp(x.buffers[i].data(), y.buffers[i].data(), x.buffers[i].size()) != 0) {
      return false;
    }
  }
  return true;
}

uint16_t bf16_at(const TensorSet& set, TensorId id, int64_t t, int64_t h, int64_t d) {
  uint16_t bits;
  std::memcpy(&bits, set.element(*set.find(id), t, h, d), 2);
  return bits;
}

TEST(Values, SameCaseAndSeedGiveTheSameBytesTwice) {
  for (uint64_t i = 0; i < 200; ++i) {
    const Case c = test::sample_case(i);
    ASSERT_TRUE(same_bytes(build_tensor_set(c, Poison::kA), build_tensor_set(c, Poison::kA))) << i;
  }
}

TEST(Values, AnotherSeedGivesOtherValues) {
  Case c = test::small_case();
  const TensorSet a = build_tensor_set(c, Poison::kA);
  c.seed += 1;
  const TensorSet b = build_tensor_set(c, Poison::kA);
  EXPECT_NE(bf16_at(a, TensorId::kQPe, 0, 0, 0) |
                (uint32_t(bf16_at(a, TensorId::kIndexQ, 3, 1, 5)) << 16),
            bf16_at(b, TensorId::kQPe, 0, 0, 0) |
                (uint32_t(bf16_at(b, TensorId::kIndexQ, 3, 1, 5)) << 16));
}

TEST(Values, RowsDoNotDependOnTOrLayout) {
  Case c = test::small_case();
  c.values = ValueRecipe::kMixed;
  c.positions = PositionsRecipe::kRandom;
  const TensorSet longer = build_tensor_set(c, Poison::kA);
  c.num_tokens = 5;
  c.ql_nope_layout = Layout::kHeadMajor;
  c.index_q_layout = Layout::kPaddedRows;
  const TensorSet shorter = build_tensor_set(c, Poison::kA);
  for (int64_t t = 0; t < 5; ++t) {
    for (int64_t h = 0; h < c.mqa_heads; ++h) {
      for (int64_t d = 0; d < c.nope_dim; ++d) {
        ASSERT_EQ(bf16_at(longer, TensorId::kQlNope, t, h, d),
                  bf16_at(shorter, TensorId::kQlNope, t, h, d));
      }
    }
    for (int64_t h = 0; h < c.indexer_heads; ++h) {
      for (int64_t d = 0; d < c.index_dim; ++d) {
        ASSERT_EQ(bf16_at(longer, TensorId::kIndexQ, t, h, d),
                  bf16_at(shorter, TensorId::kIndexQ, t, h, d));
      }
    }
  }
}

TEST(Values, PositionsStayInsideTheCacheForEveryRecipe) {
  for (unsigned r = 0; r < 4; ++r) {
    for (int64_t P : {1, 2, 5, 40}) {
      Case c = test::small_case();
      c.num_tokens = 33;
      c.cache_rows = P;
      c.positions = static_cast<PositionsRecipe>(r);
      const TensorSet set = build_tensor_set(c, Poison::kA);
      std::set<int64_t> seen;
      for (int64_t t = 0; t < c.num_tokens; ++t) {
        int64_t p;
        std::memcpy(&p, set.element(*set.find(TensorId::kPositions), t, 0, 0), 8);
        ASSERT_TRUE(p >= 0 && p < P) << "recipe " << r << " P " << P << " t " << t << ": " << p;
        seen.insert(p);
      }
      const PositionsRecipe recipe = c.positions;
      if (recipe == PositionsRecipe::kArangeModP) {
        EXPECT_EQ(seen.size(), static_cast<size_t>(std::min<int64_t>(P, 33)));
      } else if (recipe == PositionsRecipe::kNearEnd) {
        EXPECT_GE(*seen.begin(), std::max<int64_t>(0, P - 4));
      } else if (recipe == PositionsRecipe::kRepeated) {
        EXPECT_LE(seen.size(), 3u);
      }
    }
  }
}

TEST(Values, SpecialsRecipePlacesNaNInfZeroAndSubnormals) {
  Case c = test::small_case();
  c.values = ValueRecipe::kSpecials;
  const TensorSet set = build_tensor_set(c, Poison::kA);
  std::set<uint16_t> seen;
  const TensorGeometry& g = *set.find(TensorId::kIndexQ);
  for (int64_t t = 0; t < g.rows; ++t) {
    for (int64_t h = 0; h < g.cols; ++h) {
      for (int64_t d = 0; d < g.width; ++d) seen.insert(bf16_at(set, TensorId::kIndexQ, t, h, d));
    }
  }
  for (uint16_t special : {0x7FC0, 0xFF80, 0x8000, 0x0001, 0x43F0, 0x7F7F}) {
    EXPECT_EQ(seen.count(special), 1u) << std::hex << special;
  }
}

TEST(Values, BandWidthTableMatchesSemantics) {
  EXPECT_EQ(log2f_band_width(0), 0);
  EXPECT_EQ(log2f_band_width(-5), 1);
  EXPECT_EQ(log2f_band_width(15), 2);
  EXPECT_EQ(log2f_band_width(-22), 5);
  EXPECT_EQ(log2f_band_width(63), 11);
  EXPECT_EQ(log2f_band_width(119), 22);
  EXPECT_EQ(log2f_band_width(120), 0);
}

// The scale-band recipe must reach the band: under the log2f ceiling the same
// inputs give other indexer codes than under the exact ceiling.
TEST(Values, ScaleBandRecipeReachesTheLog2fBand) {
  for (RopeStyle style : {RopeStyle::kNeox, RopeStyle::kInterleaved}) {
    Case c = test::small_case();
    c.values = ValueRecipe::kScaleBand;
    c.indexer_rope = style;
    Profile exact = qcheck_profile(), log2f = qcheck_profile();
    log2f.scale_ceiling = ScaleCeiling::kLog2f;
    std::string error;
    const TensorSet a = expected_tensors(c, exact, scalar_row_ops(), Poison::kA, &error);
    ASSERT_EQ(error, "");
    const TensorSet b = expected_tensors(c, log2f, scalar_row_ops(), Poison::kA, &error);
    ASSERT_EQ(error, "");
    const TensorGeometry& g = *a.find(TensorId::kIndexQFp8);
    int rows_differing = 0;
    for (int64_t t = 0; t < g.rows; ++t) {
      for (int64_t h = 0; h < g.cols; ++h) {
        rows_differing += std::memcmp(a.element(g, t, h, 0), b.element(g, t, h, 0), g.width) != 0;
      }
    }
    // Every row aims at the band (positions are arange, every cache row used).
    EXPECT_EQ(rows_differing, g.rows * g.cols) << name_of(style);
  }
}

TEST(Values, CancellationRecipeCancelsRopeTerms) {
  Case c = test::small_case();
  c.values = ValueRecipe::kCancellation;
  c.cache_rows = 64;
  const TensorSet set = build_tensor_set(c, Poison::kA);
  // In q_pe rows (interleaved pairs), count pairs whose r1 or r2 nearly cancels.
  int near_zero = 0, pairs = 0;
  const TensorGeometry& cache = *set.find(TensorId::kMqaCache);
  for (int64_t t = 1; t < c.num_tokens; ++t) {  // position 0 has sin = 0
    for (int64_t i = 0; i < c.rope_dim / 2; ++i) {
      float cos, sin;
      std::memcpy(&cos, set.element(cache, t, 0, i), 4);
      std::memcpy(&sin, set.element(cache, t, 0, c.rope_dim / 2 + i), 4);
      if (std::fabs(sin) <= 1.0f / 256) continue;
      const float x1 = float_from_bits(uint32_t(bf16_at(set, TensorId::kQPe, t, 0, 2 * i)) << 16);
      const float x2 =
          float_from_bits(uint32_t(bf16_at(set, TensorId::kQPe, t, 0, 2 * i + 1)) << 16);
      const double r1 = double(x1) * cos - double(x2) * sin,
                   r2 = double(x2) * cos + double(x1) * sin;
      const double size = std::fabs(x1) + std::fabs(x2);
      ++pairs;
      near_zero += std::fabs(r1) < size / 64 || std::fabs(r2) < size / 64;
    }
  }
  EXPECT_GT(pairs, 20);
  EXPECT_EQ(near_zero, pairs);
}

}  // namespace
// The recipes' own fast helpers against what they stand for: bf16_of is the
// spec's bf16 of the f32 of a double, times_pow2 is std::ldexp, over every
// class of value the recipes meet (and NaN, Inf, f32 subnormals and overflow).
TEST(Values, TheRecipesHelpersGiveTheSpecsBits) {
  Xoshiro256 rng(20261205);
  std::vector<double> values = {0.0, -0.0, 1.0, -1.5, 0x1p-149, -0x1p-140, 0x1p-126, 0x1.fffffep127, 0x1.ffffffp127,
                                0x1p128, -0x1p200, std::nan(""), -std::nan(""), INFINITY, -INFINITY, 448.0, 1e-4};
  for (int i = 0; i < 200000; ++i) {
    values.push_back(rng.noise() * times_pow2(1.0, static_cast<int>(rng.between(-160, 140))));
  }
  for (const double v : values) {
    ASSERT_EQ(bf16_of(v), spec::bf16_from_f32(static_cast<float>(v), Bf16Nan::k7FFF)) << v;
  }
  for (int e = -300; e <= 300; ++e) {
    for (const double x : {1.0, -1.0078125, 440.0, 448.0, 0.3}) {
      ASSERT_EQ(times_pow2(x, e), std::ldexp(x, e)) << x << " * 2^" << e;
    }
  }
}

// A q_scale that is zero, Inf, NaN or subnormal is a case the harness accepts
// (its outputs are the spec's specials); the fp8 path's rows then aim at the
// exponent q_scale_exponent_of names: those of q_scale 1 for the specials, of
// 2^-126 for a subnormal. A raw ilogb there once overflowed the recipes'
// exponent arithmetic (the sanitized capi fuzzer found it).
TEST(Values, SpecialQScalesGiveTheRowsOfTheirNamedExponent) {
  EXPECT_EQ(q_scale_exponent_of(0x3EBD70A4u), -2);  // 0.37
  EXPECT_EQ(q_scale_exponent_of(0x7F7FFFFFu), 127);
  const struct {
    uint32_t bits, same_as;
  } specials[] = {{0x00000000u, 0x3F800000u}, {0x80000000u, 0x3F800000u}, {0x7F800000u, 0x3F800000u},
                  {0xFF800000u, 0x3F800000u}, {0x7FC00000u, 0x3F800000u}, {0xFFFFFFFFu, 0x3F800000u},
                  {0x00000001u, 0x00800000u}, {0x00200000u, 0x00800000u}};
  for (unsigned v = 0; v < enum_count<ValueRecipe>(); ++v) {
    Case c = test::small_case();
    c.query_path = QueryPath::kFp8Packed;
    c.values = static_cast<ValueRecipe>(v);
    for (const auto& s : specials) {
      Case special = c, named = c;
      special.q_scale_bits = s.bits;
      named.q_scale_bits = s.same_as;
      EXPECT_TRUE(same_bytes(build_tensor_set(special, Poison::kA), build_tensor_set(named, Poison::kA)))
          << name_of(c.values) << " q_scale bits 0x" << std::hex << s.bits;
    }
  }
}

}  // namespace qcheck
