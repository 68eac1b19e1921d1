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
#include "ops/fused_k/oracle/latent_rows.h"
#include "ops/fused_k/oracle/mla_cache.h"

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

// On an FNUZ cache the scale divides by 224: p1 / 224 = 0x3BC4434B, ceiling
// 2^-7; the codes are e4m3fnuz of 128 r. 128 p0 = 57.24 = 1.789 * 2^5: biased
// exponent 13 (FNUZ's bias is 8), mantissa 6 of 8 (1.75) -> 0x6E; 128 p1 =
// 171.73 = 1.342 * 2^7: exponent 15, mantissa 3 (1.375) -> 0x7B. The bytes
// are OCP's, the scale twice OCP's.
TEST(FusedKKnownAnswers, IndexKRowOnFnuzDoublesTheScaleAndKeepsTheBytes) {
  Row row;
  const std::vector<float> cos = {0}, sin = {1};
  std::vector<float> rotated(4);
  std::vector<uint8_t> codes(4);
  const float scale =
      index_k_row(row.x.data(), row.w.data(), row.b.data(), 0.0f, cos.data(), sin.data(),
                  IndexKShape{4, 2, RopeStyle::kNeox, IndexKFp8::kFnuz}, IndexKRules{}, rotated.data(), codes.data());
  EXPECT_EQ(bits_of(scale), 0x3C000000u);
  EXPECT_EQ(codes, (std::vector<uint8_t>{0x6E, 0xFB, 0x6E, 0x7B}));
}

// A row with a NaN: every normalized value is NaN, the amax (NaN ignored) 0,
// so the floor: 1e-4 / 224 = 0x34EFACAD, ceiling 2^-21; every code FNUZ's
// one NaN, 0x80 (OCP writes 0x7F).
TEST(FusedKKnownAnswers, IndexKRowOnFnuzWritesItsNaN) {
  const std::vector<uint16_t> x = {0x7FC0, 0x3F80, 0x4000, 0x4040};
  const std::vector<float> w(4, 1.0f), b(4, 0.0f), cos = {1}, sin = {0};
  std::vector<float> rotated(4);
  std::vector<uint8_t> codes(4);
  const float scale =
      index_k_row(x.data(), w.data(), b.data(), 1e-6f, cos.data(), sin.data(),
                  IndexKShape{4, 2, RopeStyle::kNeox, IndexKFp8::kFnuz}, IndexKRules{}, rotated.data(), codes.data());
  EXPECT_EQ(bits_of(scale), 0x35000000u);
  EXPECT_EQ(codes, std::vector<uint8_t>(4, 0x80));
  index_k_row(x.data(), w.data(), b.data(), 1e-6f, cos.data(), sin.data(), IndexKShape{4, 2, RopeStyle::kNeox},
              IndexKRules{}, rotated.data(), codes.data());
  EXPECT_EQ(codes, std::vector<uint8_t>(4, 0x7F));
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

// The rope of every MLA test: r[j] = j / 4 (exact in bf16 and e4m3 up to 15.75).
std::vector<float> quarter_rope() {
  std::vector<float> rope(kMlaRope);
  for (int64_t j = 0; j < kMlaRope; ++j) rope[j] = static_cast<float>(j) * 0.25f;
  return rope;
}

uint32_t word_at(const std::vector<uint8_t>& entry, size_t at) {
  return entry[at] | entry[at + 1] << 8 | entry[at + 2] << 16 | static_cast<uint32_t>(entry[at + 3]) << 24;
}

TEST(FusedKKnownAnswers, MlaEntrySizes) {
  EXPECT_EQ(mla_entry_bytes(MlaCacheFormat::kBf16), 1152);
  EXPECT_EQ(mla_entry_bytes(MlaCacheFormat::kFp8), 576);
  EXPECT_EQ(mla_entry_bytes(MlaCacheFormat::kFp8DsMla), 656);
  EXPECT_EQ(mla_entry_bytes(MlaCacheFormat::kNvfp4DsMla), 352);
}

TEST(FusedKKnownAnswers, Fp8DsMlaEntry) {
  // Tile 0: 448 then 1s; tile 1: -0 then zeros; tile 2: 1000 then 3s; tile 3: -1.5.
  std::vector<float> latent(kMlaLatent);
  for (int64_t i = 0; i < kMlaLatent; ++i) latent[i] = i < 128 ? 1.0f : i < 256 ? 0.0f : i < 384 ? 3.0f : -1.5f;
  latent[0] = 448, latent[128] = -0.0f, latent[256] = 1000;
  std::vector<uint8_t> entry(656, 0xAB);
  mla_cache_entry(latent.data(), quarter_rope().data(), MlaCacheFormat::kFp8DsMla, 1.0f, MlaCacheRules{},
                  entry.data());
  // Scales: 448 * RN(1/448) rounds to 1 (scale 1); 0 takes the 1e-4 floor, whose log2f ceiling is
  // 2^-13; 1000 * RN(1/448) = 0x400EDB6E (2.23): 4; 1.5 * RN(1/448) = 0x3B5B6DB8: 2^-8.
  EXPECT_EQ(word_at(entry, 512), 0x3F800000u);
  EXPECT_EQ(word_at(entry, 516), 0x39000000u);
  EXPECT_EQ(word_at(entry, 520), 0x40800000u);
  EXPECT_EQ(word_at(entry, 524), 0x3B800000u);
  // Codes: 448 -> 0x7E, 1 -> 0x38; -0 -> 0x80, 0 -> 0; 1000 / 4 = 250 -> 256 (0x78), 3 / 4 -> 0x34;
  // -1.5 / 2^-8 = -384 -> 0xFC.
  EXPECT_EQ(entry[0], 0x7E);
  EXPECT_EQ(entry[1], 0x38);
  EXPECT_EQ(entry[127], 0x38);
  EXPECT_EQ(entry[128], 0x80);
  EXPECT_EQ(entry[129], 0x00);
  EXPECT_EQ(entry[256], 0x78);
  EXPECT_EQ(entry[257], 0x34);
  EXPECT_EQ(entry[384], 0xFC);
  EXPECT_EQ(entry[511], 0xFC);
  // The rope as bf16 from byte 528: 2.25 = 0x4010, 15.75 = 0x417C.
  EXPECT_EQ(entry[528 + 18], 0x10);
  EXPECT_EQ(entry[528 + 19], 0x40);
  EXPECT_EQ(entry[528 + 126], 0x7C);
  EXPECT_EQ(entry[528 + 127], 0x41);
}

TEST(FusedKKnownAnswers, Nvfp4DsMlaEntry) {
  // Tile 0: 6 then 1s; tile 1: -0 then zeros; tile 2: 4.5, -1, 0.375 then zeros; the rest zeros.
  std::vector<float> latent(kMlaLatent, 0.0f);
  for (int i = 1; i < 16; ++i) latent[i] = 1.0f;
  latent[0] = 6, latent[16] = -0.0f, latent[32] = 4.5f, latent[33] = -1.0f, latent[34] = 0.375f;
  std::vector<uint8_t> entry(352, 0xAB);
  MlaCacheRules rules;
  mla_cache_entry(latent.data(), quarter_rope().data(), MlaCacheFormat::kNvfp4DsMla, 1.0f, rules, entry.data());
  // Tile 0: 6 * RN(1/6) rounds to 1, sf 1 (0x38): pairs (6, 1) -> 0x27, (1, 1) -> 0x22.
  // Tile 1: amax 0 -> sf = 2^-9 (0x01); -0 * 512 + 0 = +0 -> 0x00.
  // Tile 2: 4.5 * RN(1/6) rounds to 0.75 (0x34); inv = RN(1/0.75) = 0x3FAAAAAB; 4.5 inv = 6 -> 7,
  // -1 inv = -1.33 -> -1.5 (0xB), 0.375 inv = 0.5 -> 1: pairs 0xB7, 0x01.
  EXPECT_EQ(entry[0], 0x27);
  EXPECT_EQ(entry[1], 0x22);
  EXPECT_EQ(entry[7], 0x22);
  EXPECT_EQ(entry[8], 0x00);
  EXPECT_EQ(entry[16], 0xB7);
  EXPECT_EQ(entry[17], 0x01);
  EXPECT_EQ(entry[18], 0x00);
  EXPECT_EQ(entry[255], 0x00);
  // The scales' permuted bytes: tile t at 320 + 8 (t % 4) + t / 4.
  EXPECT_EQ(nvfp4_scale_byte(0), 320);
  EXPECT_EQ(nvfp4_scale_byte(1), 328);
  EXPECT_EQ(nvfp4_scale_byte(4), 321);
  EXPECT_EQ(nvfp4_scale_byte(31), 351);
  EXPECT_EQ(entry[320], 0x38);
  EXPECT_EQ(entry[328], 0x01);
  EXPECT_EQ(entry[336], 0x34);
  EXPECT_EQ(entry[344], 0x01);
  for (int p = 0; p < 32; ++p) {
    if (p != 0 && p != 8 && p != 16) {
      EXPECT_EQ(entry[320 + p], 0x01) << "scale byte " << p;
    }
  }
  // The rope as e4m3, unscaled, from byte 256: 2.25 -> 0x41, 15.75 -> 0x58.
  EXPECT_EQ(entry[256 + 9], 0x41);
  EXPECT_EQ(entry[256 + 63], 0x58);
  // Without the added zero the -0 keeps its sign: code 0x8.
  rules.nvfp4_adds_zero = false;
  mla_cache_entry(latent.data(), quarter_rope().data(), MlaCacheFormat::kNvfp4DsMla, 1.0f, rules, entry.data());
  EXPECT_EQ(entry[8], 0x08);
}

TEST(FusedKKnownAnswers, Bf16AndFp8Entries) {
  std::vector<float> latent(kMlaLatent, 1.0f);
  latent[0] = 448;
  std::vector<uint8_t> entry(1152, 0xAB);
  mla_cache_entry(latent.data(), quarter_rope().data(), MlaCacheFormat::kBf16, 1.0f, MlaCacheRules{}, entry.data());
  EXPECT_EQ(entry[0], 0xE0);  // 448 = 0x43E0
  EXPECT_EQ(entry[1], 0x43);
  EXPECT_EQ(entry[2], 0x80);  // 1 = 0x3F80
  EXPECT_EQ(entry[3], 0x3F);
  EXPECT_EQ(entry[1024 + 18], 0x10);  // rope 9: 2.25 = 0x4010
  EXPECT_EQ(entry[1024 + 19], 0x40);
  // fp8 with k_scale 2: 448 / 2 = 224 -> 0x76, 1 / 2 -> 0x30, rope 2.25 / 2 = 1.125 -> 0x39.
  entry.assign(576, 0xAB);
  mla_cache_entry(latent.data(), quarter_rope().data(), MlaCacheFormat::kFp8, 2.0f, MlaCacheRules{}, entry.data());
  EXPECT_EQ(entry[0], 0x76);
  EXPECT_EQ(entry[1], 0x30);
  EXPECT_EQ(entry[512 + 9], 0x39);
  // k_scale 1 (the kernels' skip): the codes of the values themselves.
  mla_cache_entry(latent.data(), quarter_rope().data(), MlaCacheFormat::kFp8, 1.0f, MlaCacheRules{}, entry.data());
  EXPECT_EQ(entry[0], 0x7E);
  EXPECT_EQ(entry[512 + 9], 0x41);
}

TEST(FusedKKnownAnswers, LatentRows) {
  // kv_c all 2 (bf16 0x4000): mean square 4, r = 0.5; weights 1.5 -> 1.5 everywhere. k_pe (1, 2, ...):
  // pair 0 (1, 2) a quarter turn (c 0, s 1) -> (-2, 1); pair 1 (3, 4) unmoved (c 1, s 0).
  const std::vector<uint16_t> kv_c(kMlaLatent, 0x4000);
  const std::vector<float> w(kMlaLatent, 1.5f);
  std::vector<uint16_t> k_pe(kMlaRope);
  for (int64_t j = 0; j < kMlaRope; ++j) k_pe[j] = bits_of(static_cast<float>(j + 1)) >> 16;
  std::vector<float> cos(kMlaRope / 2, 1.0f), sin(kMlaRope / 2, 0.0f);
  cos[0] = 0, sin[0] = 1;
  std::vector<float> latent(kMlaLatent), rope(kMlaRope);
  EXPECT_EQ(kv_latent_row(kv_c.data(), w.data(), 0.0f, k_pe.data(), cos.data(), sin.data(), LatentRules{},
                          latent.data(), rope.data()),
            0.5f);
  for (float v : latent) EXPECT_EQ(v, 1.5f);
  EXPECT_EQ(rope[0], -2.0f);
  EXPECT_EQ(rope[1], 1.0f);
  EXPECT_EQ(rope[2], 3.0f);
  EXPECT_EQ(rope[63], 64.0f);
  // The Q latent: (1, 3) with weights 1.5, bf16 before the weight: 0x3F2BC000, 0x40010000
  // (as in norm_known_answers_test).
  const std::vector<uint16_t> q_c = {0x3F80, 0x4040};
  std::vector<float> y(2);
  LatentRules rules;
  rules.weight = spec::RmsWeight::kBf16BeforeWeight;
  q_latent_row(q_c.data(), w.data(), 2, 0.0f, rules, y.data());
  EXPECT_EQ(bits(y), (std::vector<uint32_t>{0x3F2BC000u, 0x40010000u}));
}

}  // namespace
}  // namespace qcheck::fused_k
