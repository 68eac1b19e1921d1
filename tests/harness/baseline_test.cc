// The fixed-grid baseline (ops/fused_q/mutants/baseline.h): the grid is the shipped test's,
// a correct kernel passes it, a bug it can see is caught, and a bug inside
// its tolerances or outside its grid is missed (the point of qcheck).
#include <gtest/gtest.h>

#include <set>

#include "fuzz/backends/backend.h"
#include "ops/fused_q/mutants/baseline.h"

namespace qcheck {
namespace {

TEST(Baseline, TheGridIsTheShippedTests) {
  const std::vector<BaselineCase> grid = vllm_test_grid(true);
  ASSERT_EQ(grid.size(), 22u);
  std::set<std::pair<int64_t, int64_t>> fp8_shapes;
  for (const BaselineCase& b : grid) {
    EXPECT_EQ(validate_case(b.c), "") << b.name;
    EXPECT_EQ(b.c.seed, 2u);
    EXPECT_EQ(b.c.rope_dim, 64);
    EXPECT_EQ(b.c.nope_dim, 512);
    if (b.c.query_path == QueryPath::kFp8Packed) {
      EXPECT_EQ(b.c.q_scale_bits, 0x3EBD70A4u) << "q_scale 0.37";
      if (b.c.has_indexer) fp8_shapes.insert({b.c.num_tokens, b.c.mqa_heads});
    }
  }
  EXPECT_EQ(fp8_shapes, (std::set<std::pair<int64_t, int64_t>>{
                            {1, 8}, {4, 8}, {17, 8}, {512, 8}, {4096, 8}, {17, 64}, {65536, 8}}));
  EXPECT_EQ(vllm_test_grid(false).size(), 21u);
}

TEST(Baseline, PassesACorrectKernelCatchesAVisibleBugMissesAHiddenOne) {
  const BaselineResult correct = run_baseline(*find_backend("cpu-simd"), false);
  EXPECT_FALSE(correct.caught) << correct.first_failure;
  EXPECT_EQ(correct.cases_run, 21);
  const Backend* tail = find_backend("cpu-model-bug-skip-last-tail-token");
  if (tail == nullptr) GTEST_SKIP() << "no CPU model in this build";
  const BaselineResult caught = run_baseline(*tail, false);
  EXPECT_TRUE(caught.caught);
  // (its tail handles T % 16 - 1 tokens: the first case, T = 1, shows it)
  EXPECT_EQ(caught.first_failure.rfind("fp8-packed T=1 H=8 interleaved: query_out[0, 0, 0]", 0), 0u)
      << caught.first_failure;
  // Truncating bf16 moves an element by one bf16 ulp at most: inside rtol 1e-2.
  const BaselineResult hidden = run_baseline(*find_backend("cpu-model-bug-truncating-bf16"), false);
  EXPECT_FALSE(hidden.caught) << hidden.first_failure;
}

}  // namespace
}  // namespace qcheck
