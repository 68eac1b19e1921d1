// fused_k's CUDA kernel (ops/fused_k/kernels) against the oracle under
// qcheck_fused_k_rules(), bit for bit, over random launches
// (tests/fused_k/random_launch.h), each launch's whole arena compared: a byte
// written where no rule names one (a -1 slot, padding, a row's tail, a gap
// of poison) is a difference too. QCHECK_FUSED_K_CASES sets the number of
// launches (default 2000), QCHECK_FUSED_K_SEED the first seed. Skips
// without a CUDA device.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ops/fused_k/check/cuda_run.h"
#include "ops/fused_k/oracle/fused_k_oracle.h"
#include "ops/fused_k/planted/planted.h"
#include "tests/fused_k/random_launch.h"
#include "tests/gpu/device_sweeps.h"

namespace qcheck::fused_k {
namespace {

using namespace testing;

// QCHECK_SMALL=1: the gate's compute-sanitizer runs (a few launches; no
// planted kernels, whose bugs write where they should not; no large arenas).
bool small_run() {
  const char* value = std::getenv("QCHECK_SMALL");
  return value != nullptr && std::string(value) == "1";
}

int64_t env_or(const char* name, int64_t fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' ? std::strtoll(value, nullptr, 10) : fallback;
}

// Runs a prepared launch on the GPU (the kernel of `bug`, through
// ops/fused_k/check's run_on_cuda); "" when every byte of the arena equals
// the oracle's.
std::string run_on_device(const Prepared& p, planted::Bug bug = planted::kNone) {
  const Launch& l = p.launch;
  const std::string seed = "seed " + std::to_string(p.seed);
  if (!p.oracle.empty()) return seed + " (" + l.summary + "): the oracle refused: " + p.oracle;
  std::vector<uint8_t> got = l.bytes;
  const std::string error = run_on_cuda(l.args, bug, got);
  if (!error.empty()) return seed + ": " + error;
  return arena_difference(p, got);
}

TEST(FusedKKernel, EqualsTheOracleOnRandomLaunches) {
  REQUIRE_CUDA_DEVICE();
  const int64_t cases = env_or("QCHECK_FUSED_K_CASES", small_run() ? 100 : 2000);
  const int64_t first = env_or("QCHECK_FUSED_K_SEED", 1);
  int64_t failed = 0;
  const auto start = std::chrono::steady_clock::now();
  for_each_prepared(static_cast<uint64_t>(first), cases, [&](const Prepared& p) {
    const std::string problem = run_on_device(p);
    if (!problem.empty() && ++failed <= 10) ADD_FAILURE() << problem;
    return true;
  });
  std::printf("%.1f s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  EXPECT_EQ(failed, 0) << "of " << cases << " launches";
  std::printf("fused_k kernel vs oracle: %lld launches from seed %lld, %lld differ\n", static_cast<long long>(cases),
              static_cast<long long>(first), static_cast<long long>(failed));
}

// The planted catalogue (ops/fused_k/planted/planted.h): each bug differs
// from the oracle on some launch of the same random sequence within its
// budget, and each twin on none. QCHECK_FUSED_K_PLANTED_CASES sets a bug's
// budget and a twin's count (default 3000).
TEST(FusedKKernel, PlantedBugsDifferAndTwinsDoNot) {
  REQUIRE_CUDA_DEVICE();
  if (small_run()) GTEST_SKIP() << "QCHECK_SMALL=1: the compute-sanitizer run leaves this to the full run";
  const int64_t budget = env_or("QCHECK_FUSED_K_PLANTED_CASES", 3000);
  for (int b = planted::kNone + 1; b < planted::kCount; ++b) {
    const auto bug = static_cast<planted::Bug>(b);
    if (planted::needs_large_cache(bug)) continue;  // CachesPast4GiB
    const auto start = std::chrono::steady_clock::now();
    int64_t found_at = -1;
    std::string first;
    int64_t tried = 0;
    for_each_prepared(1, budget, [&](const Prepared& p) {
      ++tried;
      first = run_on_device(p, bug);
      if (!first.empty()) found_at = tried;
      return first.empty();
    });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("planted %-32s %s after %lld launches, %.2f s%s%s\n", planted::name_of(bug),
                found_at > 0 ? "differs" : "silent", static_cast<long long>(found_at > 0 ? found_at : budget), seconds,
                found_at > 0 ? ": " : "", found_at > 0 ? first.c_str() : "");
    if (planted::is_twin(bug)) {
      EXPECT_LT(found_at, 0) << planted::name_of(bug) << " is a twin, but " << first;
    } else {
      EXPECT_GT(found_at, 0) << planted::name_of(bug) << " was not found in " << budget << " launches";
    }
  }
}

// Both caches past 4 GiB, every slot in their last bytes: the kernel's
// 64-bit offsets reach them, and kOffset32's offsets, wrapped to 32 bits,
// land in the caches' first bytes instead (inside the allocation, so the
// bug shows as wrong bytes, not as a fault).
TEST(FusedKKernel, CachesPast4GiB) {
  REQUIRE_CUDA_DEVICE();
  if (small_run()) GTEST_SKIP() << "QCHECK_SMALL=1: the compute-sanitizer run leaves this to the full run";
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    const Prepared p = prepare(seed, Forced{32, int64_t{17} << 28});
    ASSERT_GT(p.launch.args.mla_cache.num_blocks * p.launch.args.mla_cache.block_stride, int64_t{1} << 32);
    EXPECT_EQ(run_on_device(p), "");
    EXPECT_NE(run_on_device(p, planted::kOffset32), "") << "offsets wrapped to 32 bits went unnoticed";
    std::printf("seed %llu: %s, arena %.2f GB\n", static_cast<unsigned long long>(seed), p.launch.summary.c_str(),
                static_cast<double>(p.launch.bytes.size()) / 1e9);
  }
}

// More tokens than a grid's y or z dimension holds (65535): every task done.
TEST(FusedKKernel, TokensPast65535) {
  REQUIRE_CUDA_DEVICE();
  if (small_run()) GTEST_SKIP() << "QCHECK_SMALL=1: the compute-sanitizer run leaves this to the full run";
  const Prepared p = prepare(3, Forced{70001, 0});
  EXPECT_EQ(run_on_device(p), "");
  std::printf("%s\n", p.launch.summary.c_str());
}

}  // namespace
}  // namespace qcheck::fused_k
