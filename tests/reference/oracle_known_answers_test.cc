// Two tiny fused_q launches (T = 1, H = 1, NI = 1, R = 4, D = 16, L = 8)
// whose every output byte is worked out by hand below, run through the
// oracle with the scalar table and with every Highway target's table, under
// both profiles (all values are exact, so the contraction patterns, the
// log2f ceiling and div.full with q_scale 0.5 change nothing here).
// Position 1 is used; row 0 of each cache holds NaN, so reading the wrong
// row cannot go unnoticed. Each launch is a Case whose TensorSet is built by
// the harness (oracle_table_runs.h); the test then writes its hand-chosen
// input elements into that set, so the data path is the harness's own.
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/case/case.h"
#include "gtest/gtest.h"
#include "numerics/float_bits.h"
#include "numerics/simd_rows.h"
#include "tests/reference/oracle_table_runs.h"
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

// The tiny launch as a Case: contiguous tensors, two cache rows, the scales
// of D = 16 and NI = 1 (softmax 16^-0.5 = 0.25, head 1^-0.5 = 1).
Case tiny_case(QueryPath path) {
  Case c;
  c.num_tokens = 1;
  c.mqa_heads = 1;
  c.indexer_heads = 1;
  c.index_dim = 16;
  c.rope_dim = 4;
  c.nope_dim = 8;
  c.query_path = path;
  c.cache_rows = 2;
  c.softmax_scale_bits = 0x3E800000;  // 0.25
  c.head_scale_bits = 0x3F800000;     // 1
  return c;
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
  const std::vector<float> index_row = {1, 2, 3, 4, 8, -16, 0.5f, 0.25f, 100, -200, 0.0625f, 7, -7, 3.5f, 0, -0.125f};
  std::vector<uint16_t> index_q;
  for (float v : index_row) index_q.push_back(bf16(v));
  const InputWriter inputs = [&](TensorSet& set) {
    write_tensor<int64_t>(set, TensorId::kPositions, {1});
    write_tensor<float>(set, TensorId::kMqaCache, {nan, nan, nan, nan, 0.5f, 1, 0.5f, 0});
    write_tensor<float>(set, TensorId::kIndexerCache, {nan, nan, nan, nan, 1, 0, 0, 1});
    write_tensor<uint16_t>(set, TensorId::kQPe, {bf16(1), bf16(2), bf16(3), bf16(4)});
    write_tensor<uint16_t>(set, TensorId::kQlNope, {bf16(0.25f), bf16(-0.5f), bf16(1), bf16(2), bf16(448),
                                                    bf16(500), bf16(-0x1p-10f), 0});
    write_tensor<uint16_t>(set, TensorId::kIndexQ, index_q);
    write_tensor<float>(set, TensorId::kIndexWeights, {3.0f});
  };
  const std::string expected_query = hex_list({0x30, 0xB8, 0x40, 0x48, 0x7E, 0x7E, 0x81, 0x00,  //
                                               0xB8, 0x44, 0x4C, 0x50},
                                              2);
  const std::string expected_fp8 = hex_list({0x40, 0xD0, 0x4C, 0x48, 0x58, 0xE0, 0x38, 0x30,  //
                                             0x74, 0xFC, 0x20, 0x56, 0xD6, 0x4E, 0x00, 0xA8},
                                            2);

  Case c = tiny_case(QueryPath::kFp8Packed);
  c.indexer_rope = RopeStyle::kNeox;
  c.q_scale_bits = 0x3F000000;  // 0.5
  for (const Profile& profile : {qcheck_profile(), vllm_triton_profile()}) {
    c.profile = profile.name;
    ASSERT_EQ(validate_case(c), "");
    for (const RowOps* ops : tables()) {
      const OracleRun run = run_oracle_twice(c, profile, *ops, inputs);
      ASSERT_EQ(run.refusal, "");
      const std::string what = profile.name + " " + ops->name;
      EXPECT_EQ(tensor_hex(run.a, TensorId::kQueryOut), expected_query) << what;
      EXPECT_EQ(tensor_hex(run.a, TensorId::kIndexQFp8), expected_fp8) << what;
      EXPECT_EQ(tensor_hex(run.a, TensorId::kIndexWeightsOut), "0x3EC00000") << what;
      EXPECT_EQ(side_effects(c, run, inputs), "") << what;
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
  const std::vector<uint16_t> nope = {0x3E80, 0xBF00, 0x7FC1, 0xFF80, 0x0001, 0x8000, 0x4000, 0x1234};
  const std::vector<float> index_row = {1,       2,     3,      4,      0.5f, -0.75f, 1,     0.125f,
                                        0x1p-7f, 1.25f, -1.5f,  0.375f, 0,    -0.0f,  0.25f, -0.0625f};
  std::vector<uint16_t> index_q;
  for (float v : index_row) index_q.push_back(bf16(v));
  // With the alias, ql_nope is query_out's front: the bmm already wrote it there.
  const InputWriter inputs = [&](TensorSet& set) {
    write_tensor<int64_t>(set, TensorId::kPositions, {1});
    write_tensor<uint16_t>(set, TensorId::kMqaCache,
                           {nan, nan, nan, nan, bf16(0.5f), bf16(1), bf16(0.5f), bf16(0x1p-6f)});
    write_tensor<uint16_t>(set, TensorId::kIndexerCache,
                           {nan, nan, nan, nan, bf16(0), bf16(0.5f), bf16(1), bf16(0.5f)});
    write_tensor<uint16_t>(set, TensorId::kQPe, {bf16(1), bf16(2), bf16(3), bf16(4)});
    write_tensor<uint16_t>(set, TensorId::kQlNope, nope);
    write_tensor<uint16_t>(set, TensorId::kIndexQ, index_q);
    write_tensor<uint16_t>(set, TensorId::kIndexWeights, {bf16(3)});
  };
  std::vector<uint32_t> query_bits(nope.begin(), nope.end());
  for (uint32_t v : {0xBF00, 0x3FC0, 0x403C, 0x4082}) query_bits.push_back(v);
  const std::string expected_query = hex_list(query_bits, 4);
  const std::string expected_fp8 = hex_list({0xF8, 0x70, 0xE8, 0x7E, 0x68, 0xEC, 0x70, 0x58,  //
                                             0x38, 0x72, 0xF4, 0x64, 0x00, 0x80, 0x60, 0xD0},
                                            2);

  Case c = tiny_case(QueryPath::kBf16Packed);
  c.indexer_rope = RopeStyle::kInterleaved;
  c.mqa_cache_dtype = c.indexer_cache_dtype = FloatType::kBf16;
  c.weights_dtype = c.weights_out_dtype = FloatType::kBf16;
  for (AliasMode alias : {AliasMode::kNone, AliasMode::kExactFront}) {
    c.alias = alias;
    for (const Profile& profile : {qcheck_profile(), vllm_triton_profile()}) {
      c.profile = profile.name;
      ASSERT_EQ(validate_case(c), "");
      for (const RowOps* ops : tables()) {
        const OracleRun run = run_oracle_twice(c, profile, *ops, inputs);
        ASSERT_EQ(run.refusal, "");
        const std::string what =
            profile.name + " " + ops->name + (alias == AliasMode::kExactFront ? " alias" : "");
        EXPECT_EQ(tensor_hex(run.a, TensorId::kQueryOut), expected_query) << what;
        EXPECT_EQ(tensor_hex(run.a, TensorId::kIndexQFp8), expected_fp8) << what;
        EXPECT_EQ(tensor_hex(run.a, TensorId::kIndexWeightsOut), "0x3BC0") << what;
        EXPECT_EQ(side_effects(c, run, inputs), "") << what;
      }
    }
  }
}

}  // namespace
}  // namespace qcheck::test
