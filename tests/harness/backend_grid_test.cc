// Backends through the whole verdict path over the covering grid: the real
// CPU targets pass every case, each planted bug fails at least one, and the
// log2f ceiling shows as whole rows off by a power of two.
#include <gtest/gtest.h>

#include "fuzz/backends/backend.h"
#include "fuzz/buffers/device_mirror.h"
#include "fuzz/verdict/verdict.h"
#include "reference/fused_q_oracle.h"
#include "tests/harness/case_samples.h"

namespace qcheck {
namespace {

bool is_cuda(const Backend& b) { return b.name.rfind("cuda-", 0) == 0; }

TEST(Backends, RegistryNamesAndRoles) {
  ASSERT_NE(find_backend("cpu-scalar"), nullptr);
  ASSERT_NE(find_backend("cpu-simd"), nullptr);
  ASSERT_NE(find_backend("cuda-legacy"), nullptr);
  ASSERT_NE(find_backend("cuda-blocked"), nullptr);
  ASSERT_NE(find_backend("cuda-blocked-bug-tail"), nullptr);
  EXPECT_TRUE(find_backend("cuda-blocked-bug-tail")->planted_bug);
  EXPECT_FALSE(find_backend("cuda-blocked")->planted_bug);
  EXPECT_EQ(find_backend("cpu-nonsense"), nullptr);
#ifdef QCHECK_HAVE_CPU_MODEL
  ASSERT_NE(find_backend("cpu-model"), nullptr);
  EXPECT_FALSE(find_backend("cpu-model")->planted_bug);
#endif
  EXPECT_NE(backend_names().find("cpu-scalar, cpu-simd"), std::string::npos);
}

TEST(Backends, CudaBackendsSayWhyTheyCannotRunWithoutADevice) {
  const std::string problem = cuda_device_problem();
  if (!problem.empty()) {
    EXPECT_EQ(problem.rfind("no CUDA device: ", 0), 0u) << problem;
  }
  for (const Backend& b : backends()) {
    if (!is_cuda(b)) continue;
    EXPECT_EQ(b.domain(test::small_case()), problem) << b.name;
    if (problem.empty()) continue;
    const Verdict v = run_verdict(test::small_case(), b);
    EXPECT_EQ(v.exit_code(), 3) << b.name;
    EXPECT_NE(v.outcome.reason.find("no CUDA device"), std::string::npos) << v.outcome.reason;
  }
}

// Every real (non-planted) backend that can run here passes every grid case;
// on a GPU host this includes the CUDA kernels.
TEST(Backends, RealTargetsPassTheCoveringGrid) {
  const auto grid = test::covering_grid();
  int runs = 0;
  for (const Backend& b : backends()) {
    if (b.planted_bug || !b.domain(test::small_case()).empty()) continue;
    for (const auto& named : grid) {
      // The fixed-profile backends implement profile qcheck only.
      if (named.c.profile != "qcheck" && b.name != "cpu-scalar" && b.name != "cpu-simd") continue;
      const Verdict v = run_verdict(named.c, b);
      ++runs;
      EXPECT_TRUE(v.passed()) << b.name << " on " << named.name << "\n" << verdict_text(v, named.c);
    }
  }
  EXPECT_GE(runs, 2 * static_cast<int>(grid.size()) - 1);
}

// The same over random small cases (every field varies; profile qcheck so the
// fixed-profile backends apply).
TEST(Backends, RealTargetsPassRandomSampleCases) {
  int runs = 0;
  for (uint64_t i = 0; i < 300; ++i) {
    Case c = test::sample_case(i);
    c.profile = "qcheck";
    for (const Backend& b : backends()) {
      if (b.planted_bug || !b.domain(c).empty()) continue;
      const Verdict v = run_verdict(c, b);
      ++runs;
      ASSERT_TRUE(v.passed()) << b.name << " on sample " << i << "\n" << verdict_text(v, c);
    }
  }
  EXPECT_GE(runs, 600);
}

TEST(Backends, VerdictIsDeterministic) {
  Case c = test::small_case();
  c.values = ValueRecipe::kMixed;
  const Backend* b = find_backend("cpu-model-bug-truncating-bf16");
  if (b == nullptr) b = find_backend("cpu-simd");
  const Verdict first = run_verdict(c, *b);
  const Verdict second = run_verdict(c, *b);
  EXPECT_EQ(verdict_json(first, c), verdict_json(second, c));
}

TEST(Backends, ScalarOracleRowsAgreeWithSimdRowsThroughTheVerdict) {
  VerdictOptions scalar;
  scalar.oracle_rows = OracleRows::kScalar;
  for (const auto& named : test::covering_grid()) {
    const Verdict v = run_verdict(named.c, *find_backend("cpu-simd"), scalar);
    EXPECT_TRUE(v.passed()) << named.name << "\n" << verdict_text(v, named.c);
  }
}

// A backend that follows the log2f ceiling (vLLM Triton's rule) on the
// scale-band recipe: every aimed row comes out off by a power of two.
TEST(Backends, Log2fCeilingShowsAsRowsOffByAPowerOfTwo) {
  Backend log2f;
  log2f.name = "test-log2f";
  log2f.domain = [](const Case&) { return std::string(); };
  log2f.run = [](const Case& c, const Profile& profile, TensorSet& tensors) {
    Profile p = profile;
    p.scale_ceiling = ScaleCeiling::kLog2f;
    const std::string error =
        run_fused_q_oracle(make_fused_q_args(c, tensors), p, scalar_row_ops());
    return error.empty() ? Outcome::ok() : Outcome::invalid_input(error);
  };
  Case c = test::small_case();
  c.values = ValueRecipe::kScaleBand;
  const Verdict v = run_verdict(c, log2f);
  ASSERT_TRUE(v.outcome.is_ok()) << v.outcome.reason;
  const auto by_class = v.report.counts_by_class();
  ASSERT_EQ(by_class.size(), 1u) << verdict_text(v, c);
  EXPECT_EQ(by_class.begin()->first, MismatchClass::kRowPowerOfTwo);
  EXPECT_EQ(v.report.counts.count(
                Signature{"index_weights_out", "weights", MismatchClass::kRowPowerOfTwo}),
            1u);
  EXPECT_EQ(v.exit_code(), 1);
}

TEST(Backends, ProfileOverrideChangesTheExpectedTensors) {
  // cpu-scalar follows the verdict's profile, so it passes either way; the
  // expected bytes differ between the profiles on the fp8 path.
  Case c = test::small_case();
  c.query_path = QueryPath::kFp8Packed;
  c.values = ValueRecipe::kMixed;
  VerdictOptions triton;
  triton.profile = "vllm-triton";
  EXPECT_TRUE(run_verdict(c, *find_backend("cpu-scalar"), triton).passed());
  triton.profile = "no-such-profile";
  EXPECT_EQ(run_verdict(c, *find_backend("cpu-scalar"), triton).exit_code(), 2);
}

TEST(Backends, FixedProfileBackendsAreJudgedUnderTheirOwnProfile) {
  // A case that names vllm-triton: the oracle backends follow it, the CPU
  // model (which implements qcheck only) is judged under qcheck unless a
  // profile is forced, and forcing vllm-triton on it shows the difference.
  Case c = test::small_case();
  c.query_path = QueryPath::kFp8Packed;
  c.values = ValueRecipe::kMixed;
  c.profile = "vllm-triton";
  const Verdict simd = run_verdict(c, *find_backend("cpu-simd"));
  EXPECT_TRUE(simd.passed());
  EXPECT_EQ(simd.profile, "vllm-triton");
  const Verdict model = run_verdict(c, *find_backend("cpu-model"));
  EXPECT_TRUE(model.passed()) << verdict_text(model, c);
  EXPECT_EQ(model.profile, "qcheck");
  VerdictOptions forced;
  forced.profile = "vllm-triton";
  EXPECT_EQ(run_verdict(c, *find_backend("cpu-model"), forced).exit_code(), 1)
      << "the fp8 rope contraction patterns of the two profiles differ on mixed values";
}

TEST(Backends, InvalidCaseIsInvalidInput) {
  Case c = test::small_case();
  c.rope_dim = 3;
  const Verdict v = run_verdict(c, *find_backend("cpu-simd"));
  EXPECT_EQ(v.exit_code(), 2);
  EXPECT_EQ(v.outcome.reason, "rope_dim (R) = 3 must be even");
}

// On a GPU host: the CUDA kernel with the tail mask removed fails a grid case
// whose T is not a multiple of 16.
TEST(Backends, CudaPlantedTailBugFailsWithATail) {
  const std::string problem = cuda_device_problem();
  if (!problem.empty()) GTEST_SKIP() << problem;
  const Backend& b = *find_backend("cuda-blocked-bug-tail");
  int failed = 0;
  for (const auto& named : test::covering_grid()) {
    const Verdict v = run_verdict(named.c, b);
    ASSERT_NE(v.exit_code(), 2) << named.name << ": " << v.outcome.reason;
    failed += v.exit_code() != 0;
    if (named.c.num_tokens == 17 && v.exit_code() == 1) {
      std::printf("[ planted ] cuda-blocked-bug-tail on %s: %s\n", named.name.c_str(),
                  v.report.primary_signature().text().c_str());
    }
  }
  EXPECT_GT(failed, 0);
}

// The planted CPU fault passes where T % 16 != 7 and ends the process where
// T % 16 == 7 (a death test: the crash happens in a child process).
TEST(Backends, PlantedCrashEndsTheProcessOnlyForItsInputs) {
  const Backend* crash = find_backend("cpu-bug-crash");
  ASSERT_NE(crash, nullptr);
  EXPECT_TRUE(crash->planted_bug && crash->ends_process);
  Case c = test::small_case();
  c.num_tokens = 24;
  const Verdict v = run_verdict(c, *crash);
  EXPECT_TRUE(v.passed()) << verdict_text(v, c);
  c.num_tokens = 23;
  EXPECT_DEATH(run_verdict(c, *crash), "");
}

#ifdef QCHECK_HAVE_CPU_MODEL
TEST(Backends, EveryPlantedModelBugFailsSomeGridCase) {
  const auto grid = test::covering_grid();
  for (const Backend& b : backends()) {
    if (!b.planted_bug || is_cuda(b) || b.ends_process) continue;
    int failed = 0;
    std::string first;
    for (const auto& named : grid) {
      if (named.c.profile != "qcheck") continue;
      const Verdict v = run_verdict(named.c, b);
      ASSERT_NE(v.exit_code(), 2) << b.name << " on " << named.name << ": " << v.outcome.reason;
      if (v.exit_code() == 1) {
        if (failed++ == 0) first = named.name + ": " + v.report.primary_signature().text();
      }
    }
    EXPECT_GT(failed, 0) << b.name << " passed every grid case";
    std::printf("[ planted ] %-40s fails %2d of %zu grid cases (first %s)\n", b.name.c_str(),
                failed, grid.size(), first.c_str());
  }
}
#endif

}  // namespace
}  // namespace qcheck
