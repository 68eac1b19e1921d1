// The composed oracle under the SIMD row table vs under the scalar spec
// table, per Highway target, on small launches built by hand in the test
// (oracle_launch.h): every query path (fp8 packed, bf16 packed with and
// without the ql_nope alias, bf16 separate), indexer off / NeoX /
// interleaved, f32 and bf16 caches, f32 and bf16 weights in and out, three
// shapes (odd H, R = D, R = 2), two profiles. Every output byte, padding
// included, must match; no input or padding byte may change; without the
// indexer its outputs stay untouched.
#include <string>
#include <vector>

#include "reference/fused_q_oracle.h"
#include "reference/profile.h"
#include "tests/reference/oracle_launch.h"
#include "tests/reference/target_fixture.h"

namespace qcheck::test {
namespace {

struct Shape {
  int64_t tokens, mqa_heads, indexer_heads, index_dim, rope_dim, nope_dim;
};

std::vector<LaunchConfig> launch_grid() {
  const Shape shapes[] = {{5, 3, 2, 32, 16, 24}, {2, 1, 3, 16, 16, 8}, {3, 2, 1, 48, 2, 16}};
  struct PathChoice {
    QueryPath path;
    bool alias;
  };
  const PathChoice paths[] = {{QueryPath::kFp8Packed, false},
                              {QueryPath::kBf16Packed, false},
                              {QueryPath::kBf16Packed, true},
                              {QueryPath::kBf16Separate, false}};
  std::vector<LaunchConfig> grid;
  uint64_t seed = 100;
  for (const Shape& s : shapes) {
    for (const PathChoice& p : paths) {
      for (int indexer = 0; indexer < 3; ++indexer) {
        for (int dtypes = 0; dtypes < 8; ++dtypes) {
          LaunchConfig c;
          c.tokens = s.tokens;
          c.mqa_heads = s.mqa_heads;
          c.indexer_heads = s.indexer_heads;
          c.index_dim = s.index_dim;
          c.rope_dim = s.rope_dim;
          c.nope_dim = s.nope_dim;
          c.path = p.path;
          c.alias = p.alias;
          c.has_indexer = indexer != 0;
          c.indexer_rope = indexer == 2 ? RopeStyle::kInterleaved : RopeStyle::kNeox;
          c.cache_dtype = dtypes & 1 ? FloatType::kBf16 : FloatType::kF32;
          c.weights_dtype = dtypes & 2 ? FloatType::kBf16 : FloatType::kF32;
          c.weights_out_dtype = dtypes & 4 ? FloatType::kBf16 : FloatType::kF32;
          c.seed = seed++;
          grid.push_back(c);
        }
      }
    }
  }
  return grid;
}

class OracleSimdVsScalar : public SimdTargetTest {};
QCHECK_INSTANTIATE_PER_TARGET(OracleSimdVsScalar);

void compare_under(const Profile& profile, uint32_t q_scale_bits, const RowOps& simd, const char* target) {
  size_t launches = 0;
  for (LaunchConfig config : launch_grid()) {
    config.q_scale_bits = q_scale_bits;
    SmallLaunch scalar_launch(config), simd_launch(config);
    const std::string what = std::string(target) + " " + profile.name + " " + config.describe();
    ASSERT_EQ(run_fused_q_oracle(scalar_launch.args(), profile, scalar_row_ops()), "") << what;
    ASSERT_EQ(run_fused_q_oracle(simd_launch.args(), profile, simd), "") << what;
    EXPECT_EQ(output_differences(scalar_launch, simd_launch), "") << what;
    EXPECT_EQ(scalar_launch.unexpected_changes(), "") << what << " (scalar)";
    EXPECT_EQ(simd_launch.unexpected_changes(), "") << what << " (simd)";
    ++launches;
  }
  EXPECT_EQ(launches, 3u * 4u * 3u * 8u);
}

// q_scale 0.37 (vLLM's test): not a power of two, so the division is real.
TEST_P(OracleSimdVsScalar, QcheckProfile) { compare_under(qcheck_profile(), 0x3EBD70A4, simd(), target_name()); }

// vllm-triton models div.full only for a power-of-two q_scale.
TEST_P(OracleSimdVsScalar, VllmTritonProfile) {
  compare_under(vllm_triton_profile(), 0x3F000000, simd(), target_name());
}

}  // namespace
}  // namespace qcheck::test
