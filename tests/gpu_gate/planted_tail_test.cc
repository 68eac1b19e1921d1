// Proof that the GPU gate can fail: the blocked kernel with its tail guard
// removed (PlantedBug::kMissingTailGuard) must be caught on a case whose T is
// not a multiple of 16. Its own process: a planted bug may fault the context.
#include <cstdio>

#include <gtest/gtest.h>

#include "fuzz/backends/backend.h"
#include "fuzz/buffers/device_mirror.h"
#include "fuzz/minimize/minimize.h"
#include "fuzz/verdict/verdict.h"

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
  std::printf("%s\n", verdict_text(verdict, c).c_str());
  ASSERT_EQ(verdict.exit_code(), 1) << "the planted tail bug went unnoticed or ended in an error";
  // Its signature: the 15 tokens past T = 17 written over the sentinels
  // behind the contiguous outputs (and on into the buffers that follow).
  const Signature primary = verdict.report.primary_signature();
  EXPECT_EQ(primary.mismatch, MismatchClass::kSentinelOverwritten) << primary.text();
  EXPECT_EQ(verdict.report.counts.count(Signature{"index_q_fp8", "sentinel after", MismatchClass::kSentinelOverwritten}),
            1u)
      << "the write past the last token of index_q_fp8 does not show";
}

// Proof that the graph check can fail: the blocked kernel whose launch, when
// captured (a stream is given), bakes in one token fewer, as a kernel that
// captured a host value of a smaller batch would. Eager it is right; the
// replay leaves the last token unwritten, which the verdict reports as
// graph-replay-differs, and nothing else.
TEST(PlantedGpuBug, GraphReplayThatDiffersIsCaught) {
  const Backend* correct = find_backend("cuda-blocked");
  ASSERT_NE(correct, nullptr);
  Case c;
  c.num_tokens = 17;
  c.mqa_heads = 3;
  c.indexer_heads = 2;
  c.head_scale_bits = default_head_scale_bits(2);
  const std::string outside = correct->domain(c);
  if (!outside.empty()) GTEST_SKIP() << "no CUDA device: " << outside;
  Backend stale = *correct;
  stale.name = "cuda-blocked with a stale token count under capture";
  const DeviceLaunch launch = project_kernel_launch(cuda::KernelDesign::kBlocked, {});
  stale.run_in_graph = [launch](const Case& k, const Profile&, TensorSet& tensors) {
    const DeviceLaunch shorter = [launch](const FusedQArgs& args, void* stream) {
      FusedQArgs baked = args;
      if (stream != nullptr) baked.num_tokens -= 1;
      return launch(baked, stream);
    };
    return run_on_cuda_device("stale launch", shorter, k, tensors, LaunchMode::kGraph);
  };
  VerdictOptions graph;
  graph.graph = true;
  EXPECT_TRUE(run_verdict(c, *correct, graph).passed());
  const Verdict v = run_verdict(c, stale, graph);
  ASSERT_EQ(v.exit_code(), 1) << verdict_text(v, c);
  for (const auto& [signature, count] : v.report.counts) {
    EXPECT_EQ(signature.mismatch, MismatchClass::kGraphReplayDiffers) << signature.text();
  }
  // The last token's whole front (H x L elements) kept its poison in the replay.
  const Signature front{"query_out", "nope front", MismatchClass::kGraphReplayDiffers};
  EXPECT_EQ(v.report.counts.count(front) ? v.report.counts.at(front) : 0, c.mqa_heads * c.nope_dim)
      << verdict_text(v, c);
  std::printf("%s\n", verdict_text(v, c).c_str());
}

// The minimizer on the CUDA planted bug, from the kind of case a fuzzer
// reports (41 tokens, D = 16, R = 10, padded rows, random positions, bf16
// weights): the smallest failing tail (T = 1: the block's 15 tokens past T
// are written), one head, no indexer.
TEST(PlantedGpuBug, MinimizerShrinksTheMissingTailGuard) {
  const Backend* backend = find_backend("cuda-blocked-bug-tail");
  ASSERT_NE(backend, nullptr);
  Case c = reported_case();
  const std::string outside = backend->domain(c);
  if (!outside.empty()) GTEST_SKIP() << "no CUDA device: " << outside;
  const Evaluate evaluate = evaluate_in_process(*backend, {});
  const Observation target = evaluate(c);
  ASSERT_EQ(target.exit_code, 1) << target.text();
  MinimizeOptions options;
  options.budget_seconds = 120;
  const MinimizeResult r = minimize(c, target, evaluate, options);
  EXPECT_FALSE(r.budget_exhausted);
  EXPECT_EQ(r.minimized.num_tokens, 1);
  EXPECT_EQ(r.minimized.mqa_heads, 1);
  EXPECT_FALSE(r.minimized.has_indexer);
  EXPECT_EQ(evaluate(r.minimized), r.target);
  std::printf("minimized %s (%s)\n  -> %s\n  keeps %s; elements %lld -> %lld, %d verdicts, %.2f s\n",
              backend->name.c_str(), target.text().c_str(), describe(r.minimized).c_str(), r.target.text().c_str(),
              static_cast<long long>(r.elements_before), static_cast<long long>(r.elements_after), r.evaluations,
              r.seconds);
}

}  // namespace
}  // namespace qcheck
