// The device's conversions and scale rule, exactly as the fused_q kernels run
// them (ops/fused_q/kernels/device_numerics.cuh), against the scalar spec
// (numerics/conversions.h, ue8m0.h, rope.h) over all 2^32 fp32 patterns:
// cvt.rn.bf16.f32, both byte positions of cvt.rn.satfinite.e4m3x2.f32, the
// UE8M0 scale (amax -> scale) and the quantizing division. The spec side runs
// on the host over every core. One assertion per chunk of 2^28 values.
//
// QCHECK_SMALL=1 in the environment (or a build with QCHECK_EXHAUSTIVE=OFF)
// replaces each sweep by 2^22 values spread over the whole range (stride
// 1021), for compute-sanitizer runs. Skips when there is no CUDA device.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "numerics/conversions.h"
#include "numerics/e2m1.h"
#include "numerics/e4m3fnuz.h"
#include "numerics/float_bits.h"
#include "numerics/rsqrt_approx.h"
#include "numerics/ue8m0.h"
#include "tests/gpu/device_sweeps.h"

namespace qcheck::gpu_test {
namespace {

bool small_mode() {
#if !QCHECK_EXHAUSTIVE_SWEEPS
  return true;
#else
  const char* value = std::getenv("QCHECK_SMALL");
  return value != nullptr && *value != '\0' && std::strcmp(value, "0") != 0;
#endif
}

std::vector<SweepRange> sweep_chunks() {
  if (small_mode()) return {SweepRange{0, 1021, uint64_t(1) << 22}};
  std::vector<SweepRange> chunks;
  constexpr uint64_t kChunk = uint64_t(1) << 28;
  for (uint64_t first = 0; first < (uint64_t(1) << 32); first += kChunk) {
    chunks.push_back(SweepRange{static_cast<uint32_t>(first), 1, kChunk});
  }
  return chunks;
}

struct ChunkDiff {
  uint64_t count = 0;
  std::string examples;  // the first few, "bits: got X, spec Y"
};

// Compares got[i] with expected(bits(i)) on every core.
ChunkDiff compare_on_host(const SweepRange& range, const std::vector<uint32_t>& got,
                          const std::function<uint32_t(uint32_t)>& expected) {
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<uint64_t> counts(threads, 0);
  std::mutex examples_mutex;
  std::ostringstream examples;
  int examples_left = 4;
  std::vector<std::thread> workers;
  for (unsigned w = 0; w < threads; ++w) {
    workers.emplace_back([&, w] {
      const uint64_t begin = range.count * w / threads, end = range.count * (w + 1) / threads;
      for (uint64_t i = begin; i < end; ++i) {
        const uint32_t bits = sweep_value_bits(range, i);
        const uint32_t want = expected(bits);
        if (got[i] == want) continue;
        ++counts[w];
        std::lock_guard<std::mutex> lock(examples_mutex);
        if (examples_left > 0) {
          --examples_left;
          examples << " [0x" << std::hex << bits << ": device 0x" << got[i] << ", spec 0x" << want
                   << std::dec << "]";
        }
      }
    });
  }
  for (std::thread& t : workers) t.join();
  ChunkDiff diff;
  for (uint64_t c : counts) diff.count += c;
  diff.examples = examples.str();
  return diff;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Runs a sweep chunk by chunk, one assertion per chunk, and prints the total
// differences and where the time went.
void check_sweep(const char* name, Sweep sweep, float parameter,
                 const std::function<uint32_t(uint32_t)>& expected) {
  double device_seconds = 0, host_seconds = 0;
  uint64_t values = 0, differences = 0;
  std::vector<uint32_t> got;
  for (const SweepRange& range : sweep_chunks()) {
    auto start = std::chrono::steady_clock::now();
    const std::string error = run_device_sweep(sweep, range, parameter, &got);
    device_seconds += seconds_since(start);
    ASSERT_EQ(error, "") << name;
    start = std::chrono::steady_clock::now();
    const ChunkDiff diff = compare_on_host(range, got, expected);
    host_seconds += seconds_since(start);
    values += range.count;
    differences += diff.count;
    EXPECT_EQ(diff.count, 0u) << name << ", chunk from 0x" << std::hex << range.first << std::dec
                              << " (" << range.count << " values):" << diff.examples;
  }
  std::printf("[ sweep    ] %s: %llu values, %llu differences, device+copy %.2f s, host spec %.2f s%s\n",
              name, static_cast<unsigned long long>(values),
              static_cast<unsigned long long>(differences), device_seconds, host_seconds,
              small_mode() ? " (QCHECK_SMALL sample)" : "");
}

TEST(DeviceConversions, Bf16RoundNearestEvenMatchesSpecOnAllPatterns) {
  REQUIRE_CUDA_DEVICE();
  check_sweep("bf16_from_f32 (cvt.rn.bf16.f32)", Sweep::kBf16, 0.0f, [](uint32_t bits) {
    return uint32_t{spec::bf16_from_f32(float_from_bits(bits), Bf16Nan::k7FFF)};
  });
}

TEST(DeviceConversions, Bf16PairBothHalvesMatchSpecOnAllPatterns) {
  REQUIRE_CUDA_DEVICE();
  // low half = bf16(x), high half = bf16(~x): each half sees every pattern.
  check_sweep("bf16x2_from_f32 (cvt.rn.bf16x2.f32), both halves", Sweep::kBf16Pair, 0.0f, [](uint32_t bits) {
    const uint32_t low = spec::bf16_from_f32(float_from_bits(bits), Bf16Nan::k7FFF);
    const uint32_t high = spec::bf16_from_f32(float_from_bits(~bits), Bf16Nan::k7FFF);
    return low | (high << 16);
  });
}

TEST(DeviceConversions, E4m3BothBytePositionsMatchSpecOnAllPatterns) {
  REQUIRE_CUDA_DEVICE();
  // high byte = e4m3(x) from the FIRST cvt source, low byte = e4m3(~x) from
  // the second, so each position sees every pattern once.
  check_sweep("e4m3x2_from_f32 (cvt.rn.satfinite.e4m3x2.f32), both bytes", Sweep::kE4m3Pair, 0.0f,
              [](uint32_t bits) {
                const uint32_t high = spec::e4m3_from_f32(float_from_bits(bits), E4m3Overflow::kSatFinite);
                const uint32_t low = spec::e4m3_from_f32(float_from_bits(~bits), E4m3Overflow::kSatFinite);
                return (high << 8) | low;
              });
}

TEST(DeviceConversions, Ue8m0ScaleFromAmaxMatchesSpecOnAllPatterns) {
  REQUIRE_CUDA_DEVICE();
  check_sweep("ue8m0_scale_from_amax", Sweep::kUe8m0Scale, 0.0f, [](uint32_t bits) {
    return bits_of(spec::ue8m0_scale(float_from_bits(bits), ScaleCeiling::kExactBits,
                                     ScaleFloor::kAmax1e4));
  });
}

// The GPU's approximate rsqrt against the table in the library
// (numerics/rsqrt_approx.h): tl.rsqrt's instruction with ftz, the one without
// it, and CUDA's rsqrtf as nvcc compiles it without fast-math (the latter
// two are the same instruction). A device whose unit differs fails here.
TEST(DeviceConversions, RsqrtApproxFtzMatchesTheTableOnAllPatterns) {
  REQUIRE_CUDA_DEVICE();
  check_sweep("rsqrt.approx.ftz.f32", Sweep::kRsqrtApproxFtz, 0.0f,
              [](uint32_t bits) { return bits_of(spec::rsqrt_approx(float_from_bits(bits), true)); });
}

TEST(DeviceConversions, RsqrtApproxMatchesTheTableOnAllPatterns) {
  REQUIRE_CUDA_DEVICE();
  check_sweep("rsqrt.approx.f32", Sweep::kRsqrtApprox, 0.0f,
              [](uint32_t bits) { return bits_of(spec::rsqrt_approx(float_from_bits(bits), false)); });
}

TEST(DeviceConversions, RsqrtfMatchesTheTableOnAllPatterns) {
  REQUIRE_CUDA_DEVICE();
  check_sweep("rsqrtf (nvcc, no fast-math)", Sweep::kRsqrtf, 0.0f,
              [](uint32_t bits) { return bits_of(spec::rsqrt_approx(float_from_bits(bits), false)); });
}

// e2m1 has no conversion instruction on Hopper: fused_k's kernel rounds with
// comparisons (numerics/device/conversions.cuh). Every f32 pattern against
// the spec's cvt-rn (which the CPU sweep checks against ml_dtypes).
TEST(DeviceConversions, E2m1MatchesTheSpecOnAllPatterns) {
  REQUIRE_CUDA_DEVICE();
  check_sweep("e2m1 cvt-rn", Sweep::kE2m1, 0.0f,
              [](uint32_t bits) { return uint32_t{spec::e2m1_from_f32(float_from_bits(bits), E2m1Rounding::kCvtRn)}; });
}

// Hopper has no e4m3fnuz instruction: fused_k's kernel writes an FNUZ
// indexer cache through the OCP cvt (numerics/device/e4m3fnuz_via_ocp.h).
TEST(DeviceConversions, E4m3fnuzViaOcpMatchesTheSpecOnAllPatterns) {
  REQUIRE_CUDA_DEVICE();
  check_sweep("e4m3fnuz via the OCP cvt", Sweep::kE4m3fnuz, 0.0f, [](uint32_t bits) {
    return uint32_t{spec::e4m3fnuz_from_f32(float_from_bits(bits), E4m3FnuzOverflow::kSatFinite)};
  });
}

// Runs a reciprocal sweep over `range` and reports every result that is not
// the exact 1/x (a power of two, 2^-127 being subnormal; +0 for +Inf),
// computed in double on the host. Returns the number of differences.
int reciprocal_differences(Sweep sweep, const SweepRange& range) {
  std::vector<uint32_t> got;
  const std::string error = run_device_sweep(sweep, range, 0.0f, &got);
  EXPECT_EQ(error, "");
  if (got.size() != range.count) {
    ADD_FAILURE() << "sweep returned " << got.size() << " results for " << range.count << " values";
    return static_cast<int>(range.count);
  }
  int differences = 0;
  for (uint64_t i = 0; i < range.count; ++i) {
    const float x = float_from_bits(sweep_value_bits(range, i));
    const uint32_t expected = bits_of(static_cast<float>(1.0 / static_cast<double>(x)));
    if (got[i] != expected) {
      ++differences;
      ADD_FAILURE() << "1/x for x bits 0x" << std::hex << sweep_value_bits(range, i) << ": expected 0x"
                    << expected << ", got 0x" << got[i];
    }
  }
  return differences;
}

// The kernels' reciprocal of a power of two (q_scale), built from exponent
// bits, on every normal power of two 2^-126 .. 2^127 and +Inf.
TEST(DeviceConversions, ReciprocalOfEveryPowerOfTwoIsExact) {
  REQUIRE_CUDA_DEVICE();
  const SweepRange range{0x00800000u, 0x00800000u, 255};  // 2^-126 ... 2^127, then 0x7F800000
  ASSERT_EQ(sweep_value_bits(range, 254), 0x7F800000u);
  EXPECT_EQ(reciprocal_differences(Sweep::kReciprocal, range), 0);
}

// The branch-free reciprocal of a UE8M0 scale on its whole domain, every
// power of two 2^-126 .. 2^126 (the scales are 2^-22 .. 2^120) and +Inf.
TEST(DeviceConversions, Ue8m0ReciprocalOfEveryScaleIsExact) {
  REQUIRE_CUDA_DEVICE();
  const SweepRange powers{0x00800000u, 0x00800000u, 253};  // 2^-126 ... 2^126
  ASSERT_EQ(sweep_value_bits(powers, 252), 0x7E800000u);
  EXPECT_EQ(reciprocal_differences(Sweep::kUe8m0Reciprocal, powers), 0);
  EXPECT_EQ(reciprocal_differences(Sweep::kUe8m0Reciprocal, SweepRange{0x7F800000u, 1, 1}), 0);
}

// e4m3(RN(x / divisor)) as the kernels take it: IEEE division for q_scale
// like 0.37, a multiply by the exact reciprocal for powers of two and +Inf
// (the UE8M0 scale range is [2^-22, 2^120] plus +Inf).
class DeviceQuantize : public ::testing::TestWithParam<uint32_t> {};

TEST_P(DeviceQuantize, DivideThenE4m3MatchesSpecOnAllPatterns) {
  REQUIRE_CUDA_DEVICE();
  const float divisor = float_from_bits(GetParam());
  std::ostringstream name;
  name << "e4m3(divide(x, " << divisor << " = 0x" << std::hex << GetParam() << "))";
  check_sweep(name.str().c_str(), Sweep::kQuantize, divisor, [divisor](uint32_t bits) {
    return uint32_t{spec::e4m3_from_f32(float_from_bits(bits) / divisor, E4m3Overflow::kSatFinite)};
  });
}

INSTANTIATE_TEST_SUITE_P(Divisors, DeviceQuantize,
                         ::testing::Values(0x3EBD70A4u,   // 0.37f, vLLM's test q_scale (IEEE division)
                                           0x3F800000u,   // 1.0, production q_scale
                                           0x34800000u,   // 2^-22, the smallest UE8M0 scale
                                           0x3C800000u,   // 2^-6
                                           0x7B800000u,   // 2^120, the largest finite UE8M0 scale
                                           0x00800000u,   // 2^-126, smallest normal q_scale
                                           0x7F000000u,   // 2^127 (reciprocal subnormal: divides)
                                           0x7F800000u)); // +Inf, a row holding an Inf

}  // namespace
}  // namespace qcheck::gpu_test
