// Host API of the device sweeps used by the GPU conversion tests: each runs
// one function of ops/fused_q/kernels/device_numerics.cuh (the code the kernels run) on
// the GPU over a strided range of fp32 bit patterns and copies the results
// back, so the test can compare them with the scalar spec on the host.
// Plain C++: the gtest file includes no CUDA header.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace qcheck::gpu_test {

// "" when a CUDA device is usable, else why not (for GTEST_SKIP).
std::string cuda_device_problem();

// Skips the running test, with the reason, where no CUDA device can run it.
#define REQUIRE_CUDA_DEVICE()                                                        \
  do {                                                                               \
    const std::string problem = ::qcheck::gpu_test::cuda_device_problem();           \
    if (!problem.empty()) GTEST_SKIP() << "no CUDA device: " << problem;             \
  } while (0)

enum class Sweep : uint8_t {
  kBf16,         // bf16_from_f32(x): result = bf16 bits
  kBf16Pair,     // bf16x2_from_f32(low = x, high = ~x): result = the 32 bits
  kE4m3Pair,     // e4m3x2_from_f32(high = x, low = ~x): result = the 16 bits
  kUe8m0Scale,   // ue8m0_scale_from_amax(x): result = fp32 bits of the scale
  kQuantize,     // e4m3 of divide(x, make_divisor(parameter)): result = code
  kReciprocal,   // exact_reciprocal_of_pow2(x) for a power of two or +Inf x:
                 // result = fp32 bits
  kUe8m0Reciprocal,  // reciprocal_of_ue8m0_scale(x) for a power of two up to
                     // 2^126 or +Inf x: result = fp32 bits
  kRsqrtApproxFtz,   // PTX rsqrt.approx.ftz.f32: result = fp32 bits
  kRsqrtApprox,      // PTX rsqrt.approx.f32 (subnormals kept): result = fp32 bits
  kRsqrtf,           // CUDA's rsqrtf as this file is compiled: result = fp32 bits
  kE2m1,             // numerics/device's e2m1_from_f32 (cvt-rn, integer operations): result = the code
  kE4m3fnuz,         // numerics/device's e4m3fnuz_via_ocp over the cvt: result = the code
};

// The values of a sweep: bits(i) = first + i * stride (mod 2^32), i < count.
struct SweepRange {
  uint32_t first = 0;
  uint32_t stride = 1;
  uint64_t count = 0;
};

inline uint32_t sweep_value_bits(const SweepRange& range, uint64_t i) {
  return range.first + static_cast<uint32_t>(i) * range.stride;
}

// Runs `sweep` on the device; `results` is resized to range.count. Returns
// "" or one line naming the failed CUDA call. `parameter` is the divisor of
// kQuantize.
std::string run_device_sweep(Sweep sweep, const SweepRange& range, float parameter,
                             std::vector<uint32_t>* results);

// Sampled composite steps: for each i, inputs a[i], b[i], c[i], d[i] (fp32
// bits) give rope_term(a, b, c, d) in rope[i] and indexer_weight(a, b, c, d)
// in weight[i] (fp32 bits).
std::string run_device_composites(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b,
                                  const std::vector<uint32_t>& c, const std::vector<uint32_t>& d,
                                  std::vector<uint32_t>* rope, std::vector<uint32_t>* weight);

// e4m3x4_from_f32 on four lanes: packed[i] holds the codes of
// (v0[i], v1[i], v2[i], v3[i]) in bytes 0..3.
std::string run_device_e4m3x4(const std::vector<uint32_t> (&lanes)[4],
                              std::vector<uint32_t>* packed);

}  // namespace qcheck::gpu_test
