// fused_k's CPU model (ops/fused_k/cpu_model) on random launches
// (random_launch.h), no GPU needed: the model without a bug gives the
// oracle's every byte under qcheck_fused_k_rules() (two computations of the
// same rules, one shaped like the oracle's rows, one like the kernel's
// lanes); each planted bug differs on some launch of the same sequence and
// each twin on none (the catalogue's CPU half; the CUDA half is
// tests/gpu/fused_k_kernel_test.cc). Only a cache past 2 GiB shows
// kOffset32: the GPU test runs it
// (FusedKKernel.CachesPast4GiB).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "numerics/float_bits.h"
#include "ops/fused_k/cpu_model/fused_k_cpu_model.h"
#include "ops/fused_k/oracle/fused_k_oracle.h"
#include "ops/fused_k/planted/planted.h"
#include "tests/fused_k/random_launch.h"

namespace qcheck::fused_k {
namespace {

using namespace testing;

// The model's arena for a prepared launch ("" when it equals the oracle's).
std::string model_difference(const Prepared& p, planted::Bug bug) {
  if (!p.oracle.empty()) return "seed " + std::to_string(p.seed) + ": the oracle refused: " + p.oracle;
  std::vector<uint8_t> got = p.launch.bytes;
  const std::string error = run_fused_k_cpu_model(rebased(p.launch.args, got.data()), bug);
  if (!error.empty()) return "seed " + std::to_string(p.seed) + ": the model refused: " + error;
  return arena_difference(p, got);
}

// The generator makes only launches the oracle takes: a refusal would hide
// a shape from every comparison.
TEST(FusedKLaunches, RandomLaunchesAreValid) {
  int64_t roles = 0;
  for (uint64_t seed = 1; seed <= 500; ++seed) {
    Launch l = random_launch(seed);
    const FusedKArgs host = rebased(l.args, l.bytes.data());
    ASSERT_EQ(run_fused_k_oracle(host, qcheck_fused_k_rules()), "") << "seed " << seed << " (" << l.summary << ")";
    roles += host.index_k + host.kv + host.q_norm + host.topk_fill;
  }
  EXPECT_GT(roles, 500);
}

TEST(FusedKCpuModel, EqualsTheOracleOnRandomLaunches) {
  int64_t launches = 0, failed = 0;
  for_each_prepared(1, 2000, [&](const Prepared& p) {
    ++launches;
    const std::string problem = model_difference(p, planted::kNone);
    if (!problem.empty() && ++failed <= 10) ADD_FAILURE() << problem;
    return true;
  });
  EXPECT_EQ(failed, 0) << "of " << launches << " launches";
}

TEST(FusedKCpuModel, PlantedBugsDifferAndTwinsDoNot) {
  constexpr int64_t kBudget = 2000;
  for (int b = planted::kNone + 1; b < planted::kCount; ++b) {
    const auto bug = static_cast<planted::Bug>(b);
    if (planted::needs_large_cache(bug)) continue;
    const auto start = std::chrono::steady_clock::now();
    int64_t tried = 0, found_at = -1;
    std::string first;
    for_each_prepared(1, planted::is_twin(bug) ? kBudget / 2 : kBudget, [&](const Prepared& p) {
      ++tried;
      first = model_difference(p, bug);
      if (!first.empty()) found_at = tried;
      return first.empty();
    });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("planted %-32s %s after %lld launches, %.2f s\n", planted::name_of(bug),
                found_at > 0 ? "differs" : "silent", static_cast<long long>(tried), seconds);
    if (planted::is_twin(bug)) {
      EXPECT_LT(found_at, 0) << planted::name_of(bug) << " is a twin, but " << first;
    } else {
      EXPECT_GT(found_at, 0) << planted::name_of(bug) << " was not found in " << kBudget << " launches";
    }
  }
}

// Why kTwinScaleTimesReciprocal448 is a twin: over every mantissa of three
// binades (the floor's 1e-4, 1, 2^100; both roundings scale with the
// exponent in the normal range, so one binade stands for all), RN(a / 448)
// and RN(a * RN(1/448)) often differ but never on two sides of a power of
// two, so their ceilings are equal. Every other planted bug changes the
// bits somewhere; this one only where a profile does not take the ceiling.
TEST(FusedKPlanted, ReciprocalOf448IsHiddenByTheCeiling) {
  const float reciprocal = 1.0f / 448.0f;
  const auto ceiling = [](float s) { return (bits_of(s) + 0x7FFFFFu) & 0x7F800000u; };
  int64_t quotients_differ = 0;
  for (uint32_t binade : {0x38D1B717u & 0x7F800000u, 0x3F800000u, 0x71800000u}) {
    for (uint32_t m = 0; m < (1u << 23); ++m) {
      const float a = float_from_bits(binade | m);
      const float q = a / 448.0f, p = a * reciprocal;
      quotients_differ += bits_of(q) != bits_of(p);
      ASSERT_EQ(ceiling(q), ceiling(p)) << "amax bits 0x" << std::hex << (binade | m);
    }
  }
  EXPECT_GT(quotients_differ, 3 * 4000000) << "the two quotients differ often: the ceiling is what hides them";
}

}  // namespace
}  // namespace qcheck::fused_k
