// fused_k's oracle rows and cache layouts (ops/fused_k/oracle), with answers
// worked outside the code: LayerNorm values from numpy's f32 arithmetic and
// 80-digit decimals (as in norm_known_answers_test), e4m3 codes from a table
// of every e4m3 value searched for the nearest (ties to the even code), and
// the cache offsets by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

#include "numerics/float_bits.h"
#include "ops/fused_k/oracle/index_k_row.h"
#include "ops/fused_k/oracle/indexer_k_cache.h"

namespace qcheck::fused_k {
namespace {

std::vector<uint32_t> bits(const std::vector<float>& v) {
  std::vector<uint32_t> out;
  for (float f : v) out.push_back(bits_of(f));
  return out;
}

// x = (1, 2, 3, 4) in bf16, w = 1, b = 0, eps = 0: the LayerNorm is
// (-p1, -p0, p0, p1) with p0 = RN(0.5 rstd) = 0x3EE4F92E, p1 = 0x3FABBAE2
// (rstd = RN(1.25^-1/2)). amax p1 = 1.34164..., p1 / 448 = 0x3B44434B, so the
// scale is 2^-8; the codes are those of 256 r: 114.49 -> 112 (0x6E),
// 343.46 -> 352 (0x7B).
struct Row {
  std::vector<uint16_t> x = {0x3F80, 0x4000, 0x4040, 0x4080};
  std::vector<float> w = {1, 1, 1, 1}, b = {0, 0, 0, 0};
};

TEST(FusedKKnownAnswers, IndexKRowNeoxRotatesTheFirstPairOnly) {
  Row row;
  const std::vector<float> cos = {0}, sin = {1};  // R = 2: a quarter turn of (n0, n1)
  std::vector<float> rotated(4);
  std::vector<uint8_t> codes(4);
  const float scale = index_k_row(row.x.data(), row.w.data(), row.b.data(), 0.0f, cos.data(), sin.data(),
                                  IndexKShape{4, 2, RopeStyle::kNeox}, IndexKRules{}, rotated.data(), codes.data());
  // r0 = n0 c - n1 s = p0, r1 = n1 c + n0 s = -p1; n2, n3 pass through.
  EXPECT_EQ(bits(rotated), (std::vector<uint32_t>{0x3EE4F92Eu, 0xBFABBAE2u, 0x3EE4F92Eu, 0x3FABBAE2u}));
  EXPECT_EQ(bits_of(scale), 0x3B800000u);
  EXPECT_EQ(codes, (std::vector<uint8_t>{0x6E, 0xFB, 0x6E, 0x7B}));
}

TEST(FusedKKnownAnswers, IndexKRowStylesPairDifferently) {
  Row row;
  const std::vector<float> cos = {0, 1}, sin = {1, 0};  // R = 4: pair 0 a quarter turn, pair 1 unmoved
  std::vector<float> rotated(4);
  std::vector<uint8_t> codes(4);
  // NeoX pairs (0, 2) and (1, 3): r0 = -n2 = -p0, r1 = n1 = -p0, r2 = n0 = -p1, r3 = n3 = p1.
  index_k_row(row.x.data(), row.w.data(), row.b.data(), 0.0f, cos.data(), sin.data(),
              IndexKShape{4, 4, RopeStyle::kNeox}, IndexKRules{}, rotated.data(), codes.data());
  EXPECT_EQ(bits(rotated), (std::vector<uint32_t>{0xBEE4F92Eu, 0xBEE4F92Eu, 0xBFABBAE2u, 0x3FABBAE2u}));
  EXPECT_EQ(codes, (std::vector<uint8_t>{0xEE, 0xEE, 0xFB, 0x7B}));
  // Interleaved pairs (0, 1) and (2, 3): r0 = -n1 = p0, r1 = n0 = -p1, r2 = n2, r3 = n3.
  index_k_row(row.x.data(), row.w.data(), row.b.data(), 0.0f, cos.data(), sin.data(),
              IndexKShape{4, 4, RopeStyle::kInterleaved}, IndexKRules{}, rotated.data(), codes.data());
  EXPECT_EQ(bits(rotated), (std::vector<uint32_t>{0x3EE4F92Eu, 0xBFABBAE2u, 0x3EE4F92Eu, 0x3FABBAE2u}));
  EXPECT_EQ(codes, (std::vector<uint8_t>{0x6E, 0xFB, 0x6E, 0x7B}));
}

TEST(FusedKKnownAnswers, IndexKRowOfZerosTakesTheFloor) {
  // A zero row: mean 0, variance 0, rstd = rsqrt(eps); every n = fma(0, w, b) = b = 0. amax 0 takes the
  // 1e-4 floor: 1e-4 / 448 = 0x346FACAD, whose ceiling is 2^-22. Every code 0.
  const std::vector<uint16_t> x(8, 0);
  const std::vector<float> w(8, 3.0f), b(8, 0.0f), cos = {1, 1}, sin = {0, 0};
  std::vector<float> rotated(8);
  std::vector<uint8_t> codes(8, 0xAA);
  const float scale = index_k_row(x.data(), w.data(), b.data(), 1e-6f, cos.data(), sin.data(),
                                  IndexKShape{8, 4, RopeStyle::kNeox}, IndexKRules{}, rotated.data(), codes.data());
  EXPECT_EQ(bits_of(scale), 0x34800000u);
  EXPECT_EQ(codes, std::vector<uint8_t>(8, 0));
  for (float r : rotated) EXPECT_EQ(bits_of(r), 0u);
}

TEST(FusedKKnownAnswers, IndexerKCacheOffsets) {
  // Flat: token 2, element 5 of a block of 4 tokens of 8 codes: 2 * 8 + 5; its scale after the 32 codes.
  EXPECT_EQ(indexer_k_code_byte(IndexerKLayout::kFlat, 4, 8, 2, 5), 21);
  EXPECT_EQ(indexer_k_scale_byte(4, 8, 2), 40);
  // Shuffled, 32 tokens of 32: token 17, element 20 is in token tile 1 (16 * 32 bytes on), element
  // tile 1 (256 on), row 1 of the tile (16 on), byte 4: 788.
  EXPECT_EQ(indexer_k_code_byte(IndexerKLayout::kShuffled, 32, 32, 17, 20), 788);
  EXPECT_EQ(indexer_k_code_byte(IndexerKLayout::kShuffled, 32, 32, 0, 15), 15);
  EXPECT_EQ(indexer_k_code_byte(IndexerKLayout::kShuffled, 32, 32, 0, 16), 256);
  EXPECT_EQ(indexer_k_code_byte(IndexerKLayout::kShuffled, 32, 32, 1, 0), 16);
  // Both layouts place every code of a block at a distinct byte before the scales.
  for (IndexerKLayout layout : {IndexerKLayout::kFlat, IndexerKLayout::kShuffled}) {
    std::set<int64_t> seen;
    for (int64_t t = 0; t < 64; ++t) {
      for (int64_t d = 0; d < 128; ++d) seen.insert(indexer_k_code_byte(layout, 64, 128, t, d));
    }
    EXPECT_EQ(seen.size(), 64u * 128u) << name_of(layout);
    EXPECT_EQ(*seen.begin(), 0);
    EXPECT_EQ(*seen.rbegin(), 64 * 128 - 1);
  }
}

TEST(FusedKKnownAnswers, IndexerKScaleWords) {
  EXPECT_EQ(indexer_k_scale_word(0.00390625f, IndexerKScale::kF32), 0x3B800000u);
  EXPECT_EQ(indexer_k_scale_word(0.00390625f, IndexerKScale::kUe8m0x4), 0x77777777u);  // 2^-8: byte 119
  EXPECT_EQ(indexer_k_scale_word(std::ldexp(1.0f, -22), IndexerKScale::kUe8m0x4), 0x69696969u);
  EXPECT_EQ(indexer_k_scale_word(INFINITY, IndexerKScale::kUe8m0x4), 0xFFFFFFFFu);
}

TEST(FusedKKnownAnswers, IndexerKEntryLandsInItsSlotAndNowhereElse) {
  // 3 blocks of 4 tokens of 8 codes, block stride 50 (48 used, 2 of padding).
  std::vector<uint8_t> cache(150, 0xAB);
  const std::vector<uint8_t> codes = {1, 2, 3, 4, 5, 6, 7, 8};
  write_indexer_k_entry(cache.data(), 50, IndexerKLayout::kFlat, 4, 8, 5, codes.data(), 0.00390625f,
                        IndexerKScale::kF32);
  write_indexer_k_entry(cache.data(), 50, IndexerKLayout::kFlat, 4, 8, -1, codes.data(), 1.0f, IndexerKScale::kF32);
  std::vector<uint8_t> want(150, 0xAB);
  for (int d = 0; d < 8; ++d) want[50 + 8 + d] = static_cast<uint8_t>(d + 1);  // block 1, token 1
  const uint8_t scale[4] = {0x00, 0x00, 0x80, 0x3B};                            // 2^-8, little-endian
  for (int i = 0; i < 4; ++i) want[50 + 32 + 4 + i] = scale[i];
  EXPECT_EQ(cache, want);
}

TEST(FusedKKnownAnswers, IndexerKLayoutLimits) {
  EXPECT_EQ(indexer_k_layout_problem(IndexerKLayout::kFlat, 1, 128), "");
  EXPECT_EQ(indexer_k_layout_problem(IndexerKLayout::kShuffled, 64, 128), "");
  EXPECT_EQ(indexer_k_layout_problem(IndexerKLayout::kShuffled, 1, 128),
            "block_size = 1 is not a multiple of 16, the shuffled layout's tile");
  EXPECT_EQ(indexer_k_layout_problem(IndexerKLayout::kShuffled, 16, 40),
            "dim = 40 is not a multiple of 16, the shuffled layout's tile");
  EXPECT_EQ(indexer_k_layout_problem(IndexerKLayout::kFlat, 0, 128), "block_size = 0 is not at least 1");
}

}  // namespace
}  // namespace qcheck::fused_k
