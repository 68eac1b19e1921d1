// Backends through the whole verdict path over the covering grid: the real
// CPU targets pass every case, each planted bug fails at least one, and the
// log2f ceiling shows as whole rows off by a power of two.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>

#include "fuzz/backends/backend.h"
#include "fuzz/buffers/device_mirror.h"
#include "fuzz/verdict/verdict.h"
#include "ops/fused_q/oracle/fused_q_oracle.h"
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
// cpu-simd is the verdict's own oracle (SIMD rows) run as a backend: it must
// pass, but its runs compare the oracle with itself, so they are counted
// apart from the runs of backends that compute the outputs another way.
bool is_the_verdicts_oracle(const Backend& b) { return b.name == "cpu-simd"; }

TEST(Backends, RealTargetsPassTheCoveringGrid) {
  const auto grid = test::covering_grid();
  std::map<std::string, int> runs;  // per backend
  int qcheck_cases = 0;
  for (const auto& named : grid) qcheck_cases += named.c.profile == "qcheck";
  for (const Backend& b : backends()) {
    if (b.planted_bug || !b.domain(test::small_case()).empty()) continue;
    for (const auto& named : grid) {
      // The fixed-profile backends implement profile qcheck only.
      if (named.c.profile != "qcheck" && b.name != "cpu-scalar" && b.name != "cpu-simd") continue;
      const Verdict v = run_verdict(named.c, b);
      ++runs[b.name];
      EXPECT_TRUE(v.passed()) << b.name << " on " << named.name << "\n" << verdict_text(v, named.c);
    }
  }
  int independent = 0;
  for (const auto& [name, count] : runs) {
    std::printf("%s: %d covering cases%s\n", name.c_str(), count,
                is_the_verdicts_oracle(*find_backend(name)) ? " (the verdict's own oracle: not counted)" : "");
    if (!is_the_verdicts_oracle(*find_backend(name))) independent += count;
  }
  EXPECT_EQ(runs["cpu-scalar"], static_cast<int>(grid.size()));
#ifdef QCHECK_HAVE_CPU_MODEL
  EXPECT_EQ(runs["cpu-model"], qcheck_cases);
  EXPECT_GE(independent, static_cast<int>(grid.size()) + qcheck_cases);
#endif
}

// The same over random small cases (every field varies; profile qcheck so the
// fixed-profile backends apply).
TEST(Backends, RealTargetsPassRandomSampleCases) {
  int independent = 0, own_oracle = 0;
  for (uint64_t i = 0; i < 300; ++i) {
    Case c = test::sample_case(i);
    c.profile = "qcheck";
    for (const Backend& b : backends()) {
      if (b.planted_bug || !b.domain(c).empty()) continue;
      const Verdict v = run_verdict(c, b);
      ++(is_the_verdicts_oracle(b) ? own_oracle : independent);
      ASSERT_TRUE(v.passed()) << b.name << " on sample " << i << "\n" << verdict_text(v, c);
    }
  }
  std::printf("%d runs of backends other than the verdict's oracle, %d of cpu-simd\n", independent, own_oracle);
  // cpu-scalar and cpu-model on every sample.
  EXPECT_GE(independent, 600);
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

// The output bytes of two tensor sets of one case that differ.
int64_t differing_output_bytes(const TensorSet& a, const TensorSet& b) {
  int64_t differ = 0;
  for (size_t i = 0; i < a.buffers.size(); ++i) {
    if (!a.plan.buffers[i].is_output) continue;
    for (size_t k = 0; k < a.buffers[i].size(); ++k) differ += a.buffers[i].data()[k] != b.buffers[i].data()[k];
  }
  return differ;
}

TEST(Backends, ProfileOverrideChangesTheExpectedTensors) {
  // On the fp8 path with mixed values the two profiles' expected outputs
  // differ (their fp8 RoPE contraction patterns do), so the case can tell
  // which profile a verdict used.
  Case c = test::small_case();
  c.query_path = QueryPath::kFp8Packed;
  c.values = ValueRecipe::kMixed;
  Profile qcheck, triton;
  ASSERT_TRUE(find_profile("qcheck", &qcheck));
  ASSERT_TRUE(find_profile("vllm-triton", &triton));
  std::string error;
  const TensorSet under_qcheck = expected_tensors(c, qcheck, scalar_row_ops(), Poison::kA, &error);
  ASSERT_EQ(error, "");
  const TensorSet under_triton = expected_tensors(c, triton, scalar_row_ops(), Poison::kA, &error);
  ASSERT_EQ(error, "");
  ASSERT_GT(differing_output_bytes(under_qcheck, under_triton), 0);

  // cpu-scalar computes under the profile the verdict hands it: with the
  // override, its outputs are vllm-triton's, not the case's qcheck (a
  // verdict that ignored the override would hand it qcheck).
  VerdictOptions override_triton;
  override_triton.profile = "vllm-triton";
  TensorSet run_a;
  const Verdict v = run_verdict(c, *find_backend("cpu-scalar"), override_triton, &run_a);
  EXPECT_TRUE(v.passed()) << verdict_text(v, c);
  EXPECT_EQ(v.judged_under, "vllm-triton");
  ASSERT_EQ(run_a.buffers.size(), under_triton.buffers.size());
  EXPECT_EQ(differing_output_bytes(run_a, under_triton), 0);
  EXPECT_GT(differing_output_bytes(run_a, under_qcheck), 0);

  override_triton.profile = "no-such-profile";
  EXPECT_EQ(run_verdict(c, *find_backend("cpu-scalar"), override_triton).exit_code(), 2);
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
// The planted tail bug (no guard on the last token block) writes past the
// last token. Every case of whole blocks (T % 16 == 0) must pass; a case
// with a partial block must end in a mismatch, never an error, and where it
// fails, bytes the kernel may not write were written: guard bytes past a
// tensor (or, in the next allocation, before one), or an indexer output the
// case disables (seen on the H200 with the alias and no indexer). The writes
// also land in the buffers that follow on the device, so other classes come
// with them. Some paths of a
// partial block cannot show it (their tasks keep a guard of their own): those
// are printed.
TEST(Backends, CudaPlantedTailBugFailsWithATail) {
  const std::string problem = cuda_device_problem();
  if (!problem.empty()) GTEST_SKIP() << problem;
  const Backend& b = *find_backend("cuda-blocked-bug-tail");
  int failed = 0, whole_blocks = 0;
  std::string partial_passed;
  for (const auto& named : test::covering_grid()) {
    const Verdict v = run_verdict(named.c, b);
    if (named.c.num_tokens % 16 == 0) {
      ++whole_blocks;
      EXPECT_TRUE(v.passed()) << named.name << ": whole blocks, where the tail bug cannot show\n"
                              << verdict_text(v, named.c);
      continue;
    }
    ASSERT_TRUE(v.exit_code() == 0 || v.exit_code() == 1) << named.name << "\n" << verdict_text(v, named.c);
    if (v.passed()) {
      partial_passed += " " + named.name;
      continue;
    }
    int64_t forbidden_writes = 0;
    for (const auto& [signature, count] : v.report.counts) {
      if (signature.mismatch == MismatchClass::kSentinelOverwritten ||
          signature.mismatch == MismatchClass::kPaddingOverwritten ||
          signature.mismatch == MismatchClass::kWrittenWhenDisabled) {
        forbidden_writes += count;
      }
    }
    EXPECT_GT(forbidden_writes, 0) << named.name << ": no write where the kernel may not write shows\n"
                                   << verdict_text(v, named.c);
    ++failed;
    if (named.c.num_tokens == 17) {
      std::printf("[ planted ] cuda-blocked-bug-tail on %s: %s\n", named.name.c_str(),
                  v.report.primary_signature().text().c_str());
    }
  }
  std::printf("cuda-blocked-bug-tail: %d partial-block cases caught, %d whole-block cases silent; partial-block "
              "cases it cannot reach:%s\n",
              failed, whole_blocks, partial_passed.empty() ? " none" : partial_passed.c_str());
  EXPECT_GT(failed, 0);
  EXPECT_GT(whole_blocks, 0);
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
