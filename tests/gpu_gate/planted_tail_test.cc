// Proof that the GPU gate can fail: the blocked kernel with its tail guard
// removed (PlantedBug::kMissingTailGuard) must be caught on a case whose T is
// not a multiple of 16. Its own process: a planted bug may fault the context.
#include <cstdio>

#include <gtest/gtest.h>

#include "fuzz/backend.h"
#include "fuzz/verdict.h"

namespace qcheck {
namespace {

TEST(PlantedGpuBug, MissingTailGuardIsCaught) {
  const Backend* backend = find_backend("cuda-blocked-bug-tail");
  if (backend == nullptr) GTEST_SKIP() << "cuda-blocked-bug-tail is not built (no CUDA toolkit)";
  Case c;
  c.num_tokens = 17;
  c.mqa_heads = 3;
  c.indexer_heads = 2;
  c.head_scale_bits = default_head_scale_bits(2);
  c.seed = 7;
  const std::string outside = backend->domain(c);
  if (!outside.empty()) GTEST_SKIP() << "no CUDA device: " << outside;
  // The correct kernel passes this case, and the planted one passes it with
  // T % 16 == 0 where the tail bug cannot show. The finding comes last: a
  // planted bug may leave the CUDA context unusable.
  const Backend* correct = find_backend("cuda-blocked");
  ASSERT_NE(correct, nullptr);
  const Verdict correct_verdict = run_verdict(c, *correct);
  EXPECT_TRUE(correct_verdict.passed()) << verdict_text(correct_verdict, c);
  Case full_blocks = c;
  full_blocks.num_tokens = 16;
  const Verdict full_verdict = run_verdict(full_blocks, *backend);
  EXPECT_TRUE(full_verdict.passed()) << verdict_text(full_verdict, full_blocks);

  const Verdict verdict = run_verdict(c, *backend);
  EXPECT_FALSE(verdict.passed()) << "the planted tail bug went unnoticed";
  std::printf("%s\n", verdict_text(verdict, c).c_str());
}

}  // namespace
}  // namespace qcheck
