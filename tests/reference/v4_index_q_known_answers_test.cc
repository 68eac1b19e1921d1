// DeepSeek-V4's indexer query row (ops/v4_index_q/oracle), with answers
// worked outside the code (numpy f32 arithmetic, e4m3 and e2m1 values by
// hand). The row: D = 64, R = 32; the NoPE part 3, then 1s; the rope part
// (2, -1), then 0.5s; the first pair a quarter turn (cos 0, sin 1), the
// others unmoved (cos 1, sin 0), so the rotated rope part is (1, 2, 0.5 ...).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "numerics/float_bits.h"
#include "ops/v4_index_q/oracle/index_q_row.h"

namespace qcheck::v4_index_q {
namespace {

constexpr uint16_t kBf16One = 0x3F80, kBf16Half = 0x3F00, kBf16Three = 0x4040, kBf16Two = 0x4000, kBf16MinusOne = 0xBF80;

struct Row {
  std::vector<uint16_t> q = std::vector<uint16_t>(64);
  std::vector<float> cos = std::vector<float>(16, 1.0f), sin = std::vector<float>(16, 0.0f);
  std::vector<uint8_t> codes = std::vector<uint8_t>(64, 0xAB), scales = std::vector<uint8_t>(2, 0xAB);
  // sm = RN(128^-1/2), hs = RN(3^-1/2): not powers of two, so the folds differ for some w.
  float sm = float_from_bits(0x3DB504F3u), hs = float_from_bits(0x3F13CD3Au);
  Row() {
    for (int i = 0; i < 32; ++i) q[i] = kBf16One;
    for (int i = 32; i < 64; ++i) q[i] = kBf16Half;
    q[0] = kBf16Three, q[32] = kBf16Two, q[33] = kBf16MinusOne;
    cos[0] = 0, sin[0] = 1;
  }
  IndexQOut run(QueryFormat format, const IndexQRules& rules, bool rope_last = true, float w = 1.5f) {
    return index_q_row(q.data(), w, cos.data(), sin.data(), sm, hs, IndexQShape{64, 32, rope_last}, format, rules,
                       codes.data(), scales.data());
  }
};

IndexQRules cute_rules() {
  IndexQRules r;
  r.fp8_ceiling = ScaleCeiling::kExactBits;
  r.fp8_quotient = ScaleQuotient::kTimesReciprocal;
  r.mx_ceiling = ScaleCeiling::kExactBits;
  r.weights = WeightsFold::kFoldedScales;
  return r;
}

TEST(V4IndexQKnownAnswers, Fp8RopeOnTheLastDims) {
  Row row;
  // A = 3: 3 / 448 = 0x3BDB6DB7, ceiling 2^-7; codes of 128 v: 3 -> 384 (0x7C), 1 -> 128 (0x70),
  // 2 -> 256 (0x78), 0.5 -> 64 (0x68).
  for (const IndexQRules& rules : {IndexQRules{}, cute_rules()}) {
    const IndexQOut out = row.run(QueryFormat::kFp8, rules);
    EXPECT_EQ(bits_of(out.fp8_scale), 0x3C000000u);
    std::vector<uint8_t> want(64, 0x68);
    for (int i = 0; i < 32; ++i) want[i] = 0x70;
    want[0] = 0x7C, want[32] = 0x70, want[33] = 0x78;
    EXPECT_EQ(row.codes, want);
  }
}

TEST(V4IndexQKnownAnswers, Fp8RopeOnTheFirstDims) {
  Row row;
  // The first pair is now (3, 1) -> (-1, 3); the last 32 pass through: (2, -1, 0.5 ...).
  row.run(QueryFormat::kFp8, IndexQRules{}, false);
  std::vector<uint8_t> want(64, 0x68);
  for (int i = 0; i < 32; ++i) want[i] = 0x70;
  want[0] = 0xF0, want[1] = 0x7C, want[32] = 0x78, want[33] = 0xF0;
  EXPECT_EQ(row.codes, want);
}

TEST(V4IndexQKnownAnswers, WeightFolds) {
  Row row;
  // w = 1.001953125: ((w s) sm) hs = 0x39D16E6D; (w RN(sm hs)) s = 0x39D16E6E. MXFP4 (no s):
  // (w sm) hs = 0x3D516E6D, w RN(sm hs) = 0x3D516E6E.
  const float w = float_from_bits(0x3F804000u);
  EXPECT_EQ(bits_of(row.run(QueryFormat::kFp8, IndexQRules{}, true, w).weight_out), 0x39D16E6Du);
  EXPECT_EQ(bits_of(row.run(QueryFormat::kFp8, cute_rules(), true, w).weight_out), 0x39D16E6Eu);
  EXPECT_EQ(bits_of(row.run(QueryFormat::kMxfp4, IndexQRules{}, true, w).weight_out), 0x3D516E6Du);
  EXPECT_EQ(bits_of(row.run(QueryFormat::kMxfp4, cute_rules(), true, w).weight_out), 0x3D516E6Eu);
}

TEST(V4IndexQKnownAnswers, Mxfp4Blocks) {
  Row row;
  // Block 0: A = 3, 3 RN(1/6) rounds to 0.5: scale 2^-1 (byte 126), v / s = 2 v: (3, 1) -> (6, 2), codes
  // 7 and 4: byte 0x47; (1, 1) -> 0x44. Block 1: A = 2, 2 RN(1/6) = 0x3EAAAAAB, ceiling 0.5 again:
  // (1, 2) -> (2, 4): 0x64; (0.5, 0.5) -> (1, 1): 0x22.
  for (const IndexQRules& rules : {IndexQRules{}, cute_rules()}) {
    row.run(QueryFormat::kMxfp4, rules);
    std::vector<uint8_t> want(64, 0xAB);
    for (int k = 0; k < 16; ++k) want[k] = 0x44, want[16 + k] = 0x22;
    want[0] = 0x47, want[16] = 0x64;
    EXPECT_EQ(row.codes, want);  // D / 2 bytes written, the rest untouched
    EXPECT_EQ(row.scales, (std::vector<uint8_t>{0x7E, 0x7E}));
  }
}

TEST(V4IndexQKnownAnswers, AnInfiniteElement) {
  Row row;
  row.q[5] = 0x7F80;  // +Inf in the NoPE part (in the rope part its partner would be Inf * 0 = NaN)
  // FP8: s = +Inf; finite codes +0, the Inf's NaN (0x7F); weight_out +Inf.
  const IndexQOut out = row.run(QueryFormat::kFp8, IndexQRules{});
  EXPECT_TRUE(std::isinf(out.fp8_scale));
  EXPECT_TRUE(std::isinf(out.weight_out));
  EXPECT_EQ(row.codes[5], 0x7F);
  EXPECT_EQ(row.codes[4], 0x00);
  EXPECT_EQ(row.codes[40], 0x00);
  // MXFP4: log2f's exponent clamps at 127 (byte 0xFE), the bit ceiling gives the e8m0 NaN byte 0xFF. Either
  // way the block's finite values give 0 and the Inf 6 (code 7): pair (4, 5) = (1, Inf) -> 0x70.
  row.run(QueryFormat::kMxfp4, IndexQRules{});
  EXPECT_EQ(row.scales[0], 0xFE);
  EXPECT_EQ(row.codes[2], 0x70);
  EXPECT_EQ(row.codes[0], 0x00);
  EXPECT_EQ(row.scales[1], 0x7E);  // block 1 untouched by block 0's Inf
  row.run(QueryFormat::kMxfp4, cute_rules());
  EXPECT_EQ(row.scales[0], 0xFF);
  EXPECT_EQ(row.codes[2], 0x70);
}

TEST(V4IndexQKnownAnswers, Bf16AfterRope) {
  // The first rope pair (0.53125, -1) with cos 1, sin 2^-12: re = 0.53125 + 2^-12 (0x3F081000), whose
  // bf16 is 0.53125. The scale stays 2^-7 (A = 3), so re's code is that of 128 re: 68.03 -> 72 (0x69)
  // without the round trip, the tie 68 -> 64 (0x68, the even code) with it. ro = -0.99987 (-127.98 ->
  // -128, 0xF0) either way.
  Row row;
  row.q[32] = 0x3F08, row.q[33] = kBf16MinusOne;
  row.cos[0] = 1.0f, row.sin[0] = 0x1p-12f;
  IndexQRules rules;
  row.run(QueryFormat::kFp8, rules);
  EXPECT_EQ(row.codes[32], 0x68);
  EXPECT_EQ(row.codes[33], 0xF0);
  rules.bf16_after_rope = false;
  row.run(QueryFormat::kFp8, rules);
  EXPECT_EQ(row.codes[32], 0x69);
  EXPECT_EQ(row.codes[33], 0xF0);
}

}  // namespace
}  // namespace qcheck::v4_index_q
