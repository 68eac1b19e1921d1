// Two tiny fused_q launches (T = 1, H = 1, NI = 1, R = 4, D = 16, L = 8)
// whose every output byte is worked out by hand below, run through the
// oracle with the scalar table and with every Highway target's table, under
// both profiles (all values are exact, so the contraction patterns, the
// log2f ceiling and div.full with q_scale 0.5 change nothing here).
// Position 1 is used; row 0 of each cache holds NaN, so reading the wrong
// row cannot go unnoticed.
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "reference/float_bits.h"
#include "reference/fused_q_oracle.h"
#include "reference/simd_rows.h"
#include "tests/reference/f32_sweep.h"
#include "tests/reference/target_fixture.h"

namespace qcheck::test {
namespace {

constexpr uint16_t kBf16Nan = 0x7FC0;

uint16_t bf16(float exact_value) { return uint16_t(bits_of(exact_value) >> 16); }  // exact inputs only

std::vector<const RowOps*> tables() {
  std::vector<const RowOps*> all{&scalar_row_ops()};
  for (const RowOps* ops : direct_target_tables()) all.push_back(ops);
  return all;
}

template <typename T>
std::string hex_bytes(const std::vector<T>& v) {
  std::string s;
  for (T x : v) s += hex(uint64_t(x), 2 * sizeof(T)) + " ";
  return s;
}

// fp8 path, q_scale 0.5, NeoX indexer, f32 caches and weights.
//
// MQA rope (interleaved), cache row 1: cos = [0.5, 1], sin = [0.5, 0]; q_pe = [1, 2, 3, 4]
//   pair 0: r0 = 1*.5 - 2*.5 = -0.5, r1 = 2*.5 + 1*.5 = 1.5;  pair 1: r2 = 3, r3 = 4
//   codes e4m3(r / 0.5) = e4m3(-1, 3, 6, 8) = B8 44 4C 50
//   (1 = 2^0: field 7 -> 0x38; 3 = 1.5*2: field 8, m 4 -> 0x44; 6 = 1.5*4 -> 0x4C; 8 -> 0x50)
// ql_nope = [0.25, -0.5, 1, 2, 448, 500, -2^-10, 0] / 0.5 = [0.5, -1, 2, 4, 896, 1000, -2^-9, 0]
//   -> 30 B8 40 48 7E 7E 81 00 (896 and 1000 saturate to 448; -2^-9 is the smallest subnormal)
// Indexer rope (NeoX, h = 2), cache row 1: cos = [1, 0], sin = [0, 1]; x0..3 = [1, 2, 3, 4]
//   r0 = x0 c0 - x2 s0 = 1, r1 = x1 c1 - x3 s1 = -4, r2 = x2 c0 + x0 s0 = 3, r3 = x3 c1 + x1 s1 = 2
//   x4..15 pass through: [8, -16, 0.5, 0.25, 100, -200, 0.0625, 7, -7, 3.5, 0, -0.125]
//   amax 200; 200 / 448 ~ 0.446 -> scale 0.5; codes e4m3(2 r):
//   [2, -8, 6, 4, 16, -32, 1, 0.5, 200, -400, 0.125, 14, -14, 7, 0, -0.25]
//   -> 40 D0 4C 48 58 E0 38 30 74 FC 20 56 D6 4E 00 A8
//   (200 = 1.5625 * 2^7 is a tie between 192 and 208: even mantissa 4 -> 192 = 0x74;
//    -400 likewise -> -384 = 0xFC)
// Weight: ((3 * 0.5) * 0.25) * 1 = 0.375 = 0x3EC00000 (softmax scale 16^-0.5, head scale 1^-0.5).
TEST(OracleKnownAnswers, Fp8PathByHand) {
  const float nan = float_from_bits(0x7FC00000);
  const int64_t positions[1] = {1};
  const float mqa_cache[8] = {nan, nan, nan, nan, 0.5f, 1, 0.5f, 0};
  const float indexer_cache[8] = {nan, nan, nan, nan, 1, 0, 0, 1};
  const uint16_t q_pe[4] = {bf16(1), bf16(2), bf16(3), bf16(4)};
  const uint16_t ql_nope[8] = {bf16(0.25f), bf16(-0.5f), bf16(1), bf16(2), bf16(448), bf16(500), bf16(-0x1p-10f), 0};
  const float index_row[16] = {1, 2, 3, 4, 8, -16, 0.5f, 0.25f, 100, -200, 0.0625f, 7, -7, 3.5f, 0, -0.125f};
  uint16_t index_q[16];
  for (int i = 0; i < 16; ++i) index_q[i] = bf16(index_row[i]);
  const float weight = 3.0f;
  const std::vector<uint8_t> expected_query = {0x30, 0xB8, 0x40, 0x48, 0x7E, 0x7E, 0x81, 0x00,
                                               0xB8, 0x44, 0x4C, 0x50};
  const std::vector<uint8_t> expected_fp8 = {0x40, 0xD0, 0x4C, 0x48, 0x58, 0xE0, 0x38, 0x30,
                                             0x74, 0xFC, 0x20, 0x56, 0xD6, 0x4E, 0x00, 0xA8};

  for (const Profile& profile : {qcheck_profile(), vllm_triton_profile()}) {
    for (const RowOps* ops : tables()) {
      std::vector<uint8_t> query(12, 0xA5), fp8(16, 0xA5);
      float weight_out = nan;
      FusedQArgs a;
      a.num_tokens = 1;
      a.mqa_heads = 1;
      a.indexer_heads = 1;
      a.index_dim = 16;
      a.rope_dim = 4;
      a.nope_dim = 8;
      a.query_path = QueryPath::kFp8Packed;
      a.indexer_rope = RopeStyle::kNeox;
      a.positions = positions;
      a.mqa_cache = {mqa_cache, FloatType::kF32, 2, 4};
      a.indexer_cache = {indexer_cache, FloatType::kF32, 2, 4};
      a.q_pe = {q_pe, 4, 4};
      a.ql_nope = {ql_nope, 8, 8};
      a.index_q = {index_q, 16, 16};
      a.index_weights = {&weight, 1, 1};
      a.query_out = {query.data(), 12, 12};
      a.index_q_fp8 = {fp8.data(), 16, 16};
      a.index_weights_out = {&weight_out, 1, 1};
      a.q_scale_bits = 0x3F000000;        // 0.5
      a.softmax_scale_bits = 0x3E800000;  // 0.25
      a.head_scale_bits = 0x3F800000;     // 1
      ASSERT_EQ(run_fused_q_oracle(a, profile, *ops), "");
      const std::string what = profile.name + " " + ops->name;
      EXPECT_EQ(hex_bytes(query), hex_bytes(expected_query)) << what;
      EXPECT_EQ(hex_bytes(fp8), hex_bytes(expected_fp8)) << what;
      EXPECT_EQ(hex(bits_of(weight_out), 8), "0x3EC00000") << what;
    }
  }
}

// bf16 packed path, interleaved indexer, bf16 caches, bf16 weights in and out.
//
// MQA rope, cache row 1: cos = [0.5, 1], sin = [0.5, 2^-6]; q_pe = [1, 2, 3, 4]
//   pair 0: -0.5, 1.5 (as above); pair 1: r2 = 3 - 4 * 2^-6 = 2.9375, r3 = 4 + 3 * 2^-6 = 4.046875
//   bf16: -0.5 = BF00, 1.5 = 3FC0, 2.9375 = 1.46875 * 2 = 403C (exact),
//   4.046875 = 4 (1 + 1.5 * 2^-7): a tie between 4 (1 + 2^-7) (mantissa 1, odd) and
//   4 (1 + 2^-6) (mantissa 2, even) -> 4.0625 = 4082
// query_out = ql_nope copied raw (a NaN payload, -Inf, a subnormal and -0 included), then the rope:
//   3E80 BF00 7FC1 FF80 0001 8000 4000 1234 | BF00 3FC0 403C 4082
// Indexer rope (interleaved), cache row 1: cos = [0, 0.5], sin = [1, 0.5]; x0..3 = [1, 2, 3, 4]
//   r0 = 1*0 - 2*1 = -2, r1 = 2*0 + 1*1 = 1, r2 = 3*.5 - 4*.5 = -0.5, r3 = 4*.5 + 3*.5 = 3.5
//   x4..15: [0.5, -0.75, 1, 0.125, 2^-7, 1.25, -1.5, 0.375, 0, -0, 0.25, -0.0625]
//   amax 3.5; 3.5 / 448 = 2^-7 exactly, its own ceiling; codes e4m3(128 r):
//   [-256, 128, -64, 448, 64, -96, 128, 16, 1, 160, -192, 48, 0, -0, 32, -8]
//   -> F8 70 E8 7E 68 EC 70 58 38 72 F4 64 00 80 60 D0
// Weight: bf16 3.0 -> ((3 * 2^-7) * 0.25) * 1 = 1.5 * 2^-8 = 0x3BC00000 -> bf16 3BC0.
TEST(OracleKnownAnswers, Bf16PathByHand) {
  const uint16_t nan = kBf16Nan;
  const int64_t positions[1] = {1};
  const uint16_t mqa_cache[8] = {nan, nan, nan, nan, bf16(0.5f), bf16(1), bf16(0.5f), bf16(0x1p-6f)};
  const uint16_t indexer_cache[8] = {nan, nan, nan, nan, bf16(0), bf16(0.5f), bf16(1), bf16(0.5f)};
  const uint16_t q_pe[4] = {bf16(1), bf16(2), bf16(3), bf16(4)};
  const std::vector<uint16_t> nope = {0x3E80, 0xBF00, 0x7FC1, 0xFF80, 0x0001, 0x8000, 0x4000, 0x1234};
  const float index_row[16] = {1, 2, 3, 4, 0.5f, -0.75f, 1, 0.125f, 0x1p-7f, 1.25f, -1.5f, 0.375f, 0, -0.0f,
                               0.25f, -0.0625f};
  uint16_t index_q[16];
  for (int i = 0; i < 16; ++i) index_q[i] = bf16(index_row[i]);
  const uint16_t weight = bf16(3);
  std::vector<uint16_t> expected_query = nope;
  for (uint16_t v : {0xBF00, 0x3FC0, 0x403C, 0x4082}) expected_query.push_back(v);
  const std::vector<uint8_t> expected_fp8 = {0xF8, 0x70, 0xE8, 0x7E, 0x68, 0xEC, 0x70, 0x58,
                                             0x38, 0x72, 0xF4, 0x64, 0x00, 0x80, 0x60, 0xD0};

  for (bool alias : {false, true}) {
    for (const Profile& profile : {qcheck_profile(), vllm_triton_profile()}) {
      for (const RowOps* ops : tables()) {
        // With the alias the bmm already wrote ql_nope into the front of query_out.
        std::vector<uint16_t> query(12, 0xA5A5);
        if (alias) std::memcpy(query.data(), nope.data(), 16);
        std::vector<uint8_t> fp8(16, 0xA5);
        uint16_t weight_out = 0xA5A5;
        FusedQArgs a;
        a.num_tokens = 1;
        a.mqa_heads = 1;
        a.indexer_heads = 1;
        a.index_dim = 16;
        a.rope_dim = 4;
        a.nope_dim = 8;
        a.query_path = QueryPath::kBf16Packed;
        a.indexer_rope = RopeStyle::kInterleaved;
        a.positions = positions;
        a.mqa_cache = {mqa_cache, FloatType::kBf16, 2, 4};
        a.indexer_cache = {indexer_cache, FloatType::kBf16, 2, 4};
        a.q_pe = {q_pe, 4, 4};
        a.ql_nope = alias ? InputView{query.data(), 12, 12} : InputView{nope.data(), 8, 8};
        a.index_q = {index_q, 16, 16};
        a.index_weights = {&weight, 1, 1};
        a.index_weights_dtype = FloatType::kBf16;
        a.query_out = {query.data(), 12, 12};
        a.index_q_fp8 = {fp8.data(), 16, 16};
        a.index_weights_out = {&weight_out, 1, 1};
        a.index_weights_out_dtype = FloatType::kBf16;
        a.softmax_scale_bits = 0x3E800000;  // 0.25
        a.head_scale_bits = 0x3F800000;     // 1
        ASSERT_EQ(run_fused_q_oracle(a, profile, *ops), "");
        const std::string what = profile.name + " " + ops->name + (alias ? " alias" : "");
        EXPECT_EQ(hex_bytes(query), hex_bytes(expected_query)) << what;
        EXPECT_EQ(hex_bytes(fp8), hex_bytes(expected_fp8)) << what;
        EXPECT_EQ(hex(weight_out, 4), "0x3BC0") << what;
      }
    }
  }
}

}  // namespace
}  // namespace qcheck::test
