// Sampled checks of the device steps that take several inputs, as the
// kernels run them (ops/fused_q/kernels/device_numerics.cuh): the RoPE term under
// profile qcheck (fma(a, c, RN(b*s))), the indexer weight's three roundings,
// and the byte order of four packed e4m3 codes. Inputs come from a fixed
// splitmix64 stream: random bit patterns, specials, moderate normals and
// near-cancelling RoPE terms. Skips when there is no CUDA device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <vector>

#include "core/random/prng.h"
#include "numerics/conversions.h"
#include "numerics/float_bits.h"
#include "numerics/rope.h"
#include "tests/gpu/device_sweeps.h"

namespace qcheck::gpu_test {
namespace {

size_t sample_count() {
  const char* small = std::getenv("QCHECK_SMALL");
  const bool is_small = small != nullptr && *small != '\0' && std::strcmp(small, "0") != 0;
  return is_small ? size_t(1) << 14 : size_t(1) << 22;
}

const uint32_t kSpecials[] = {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u,
                              0xFFC00001u, 0x7F800001u, 0x00000001u, 0x807FFFFFu, 0x7F7FFFFFu,
                              0x43E00000u /*448*/, 0x43E80000u /*464*/, 0x3A800000u /*2^-10*/,
                              0x3F800000u, 0xBF800000u, 0x38D1B717u /*1e-4*/};

// A value of one of four kinds, chosen by the stream.
uint32_t draw(uint64_t* state) {
  const uint64_t r = splitmix64_next(*state);
  switch (r & 3) {
    case 0: return static_cast<uint32_t>(r >> 32);  // any pattern, NaN and Inf included
    case 1: return kSpecials[(r >> 8) % (sizeof kSpecials / sizeof kSpecials[0])];
    default: {  // a normal with exponent in [-20, 20], either sign
      const uint32_t exponent = 127 - 20 + static_cast<uint32_t>((r >> 8) % 41);
      return (static_cast<uint32_t>(r >> 63) << 31) | (exponent << 23) |
             (static_cast<uint32_t>(r >> 32) & 0x7FFFFFu);
    }
  }
}

bool same_bits_or_both_nan(uint32_t a, uint32_t b) {
  return a == b || (is_nan_bits(a) && is_nan_bits(b));
}

TEST(DeviceComposites, RopeTermFusesCosAndRoundsSinFirstOnSamples) {
  REQUIRE_CUDA_DEVICE();
  const size_t n = sample_count();
  uint64_t state = 0x5EED0001;
  std::vector<uint32_t> a(n), c(n), b(n), s(n), rope, weight;
  for (size_t i = 0; i < n; ++i) {
    a[i] = draw(&state), c[i] = draw(&state), b[i] = draw(&state), s[i] = draw(&state);
    if (i % 4 == 3) {  // near cancellation: b*s ~= -(a*c), where the FMA pattern matters
      const float target = -(float_from_bits(a[i]) * float_from_bits(c[i]));
      const float sf = float_from_bits(s[i]);
      if (std::isfinite(target) && std::isnormal(sf)) {
        b[i] = bits_of(target / sf) ^ static_cast<uint32_t>(splitmix64_next(state) & 3);
      }
    }
  }
  ASSERT_EQ(run_device_composites(a, c, b, s, &rope, &weight), "");
  size_t differences = 0;
  std::ostringstream examples;
  for (size_t i = 0; i < n; ++i) {
    const float fa = float_from_bits(a[i]), fc = float_from_bits(c[i]);
    const float fb = float_from_bits(b[i]), fs = float_from_bits(s[i]);
    const uint32_t want = bits_of(spec::rope_term(fa, fc, fb, fs, Contraction::kFuseCos));
    // NaN payloads of an intermediate never reach an output (bf16 and e4m3
    // conversions map every NaN to one code), so any NaN matches any NaN.
    if (same_bits_or_both_nan(rope[i], want)) continue;
    if (differences++ < 4) {
      examples << std::hex << " [a 0x" << a[i] << " c 0x" << c[i] << " b 0x" << b[i] << " s 0x"
               << s[i] << ": device 0x" << rope[i] << ", spec 0x" << want << "]" << std::dec;
    }
  }
  EXPECT_EQ(differences, 0u) << "of " << n << " samples:" << examples.str();
}

TEST(DeviceComposites, IndexerWeightRoundsThreeProductsInOrderOnSamples) {
  REQUIRE_CUDA_DEVICE();
  const size_t n = sample_count();
  uint64_t state = 0x5EED0002;
  std::vector<uint32_t> w(n), scale(n), softmax(n), head(n), rope, weight;
  for (size_t i = 0; i < n; ++i) {
    w[i] = draw(&state), softmax[i] = draw(&state), head[i] = draw(&state);
    // The scale is a power of two in [2^-22, 2^120] or +Inf.
    const uint64_t r = splitmix64_next(state);
    scale[i] = (r & 15) == 0 ? 0x7F800000u : static_cast<uint32_t>(105 + (r >> 8) % 143) << 23;
  }
  ASSERT_EQ(run_device_composites(w, scale, softmax, head, &rope, &weight), "");
  size_t differences = 0, non_canonical_nans = 0;
  std::ostringstream examples;
  for (size_t i = 0; i < n; ++i) {
    const float with_scale = float_from_bits(w[i]) * float_from_bits(scale[i]);
    const float with_softmax = with_scale * float_from_bits(softmax[i]);
    const uint32_t want = bits_of(with_softmax * float_from_bits(head[i]));
    // The device's fp32 NaN is 0x7FFFFFFF whatever the inputs' NaNs were;
    // the host's depends on the CPU. The bits of a NaN fp32 weight output
    // are therefore pinned here to the device's canonical NaN.
    if (is_nan_bits(weight[i]) && weight[i] != 0x7FFFFFFFu) ++non_canonical_nans;
    if (same_bits_or_both_nan(weight[i], want)) continue;
    if (differences++ < 4) {
      examples << std::hex << " [w 0x" << w[i] << " scale 0x" << scale[i] << ": device 0x"
               << weight[i] << ", spec 0x" << want << "]" << std::dec;
    }
  }
  EXPECT_EQ(differences, 0u) << "of " << n << " samples:" << examples.str();
  EXPECT_EQ(non_canonical_nans, 0u) << "device fp32 NaNs other than 0x7FFFFFFF";
}

TEST(DeviceComposites, FourE4m3CodesPackLittleEndian) {
  REQUIRE_CUDA_DEVICE();
  const size_t n = sample_count();
  uint64_t state = 0x5EED0003;
  std::vector<uint32_t> lanes[4], packed;
  for (auto& lane : lanes) lane.resize(n);
  for (size_t i = 0; i < n; ++i) {
    for (auto& lane : lanes) lane[i] = draw(&state);
  }
  ASSERT_EQ(run_device_e4m3x4(lanes, &packed), "");
  size_t differences = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t want = 0;
    for (int k = 0; k < 4; ++k) {
      want |= uint32_t{spec::e4m3_from_f32(float_from_bits(lanes[k][i]), E4m3Overflow::kSatFinite)}
              << (8 * k);
    }
    differences += packed[i] != want;
  }
  EXPECT_EQ(differences, 0u) << "of " << n << " samples";
}

}  // namespace
}  // namespace qcheck::gpu_test
