// The scalar spec against an independent implementation: the CUDA toolkit's
// host-side conversions (cuda_bf16.h, cuda_fp8.h, and cuda_fp4.h where the
// toolkit has it), compiled by the host compiler; no nvcc and no libcudart.
// SEMANTICS.md records that the bf16 and fp8 host functions agree with the
// H200 on every special value tried, so 0 differences here tie the spec to
// the device as well as a CPU check can. The fp4 one stands in for
// cvt.rn.satfinite.e2m1x2, which no H200 has: it ties the spec's e2m1 cvt-rn
// rule, its NaN placeholder included, to NVIDIA's own host reading of it.
// Skips, saying why, when the build found no CUDA headers.
#include <cstdio>
#include <vector>

#include "gtest/gtest.h"
#include "numerics/conversions.h"
#include "numerics/e2m1.h"
#include "numerics/float_bits.h"
#include "tests/reference/f32_sweep.h"

#if QCHECK_HAVE_CUDA_HEADERS
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#if __has_include(<cuda_fp4.h>)  // CUDA 12.8 and later
#include <cuda_fp4.h>
#define QCHECK_HAVE_CUDA_FP4 1
#endif
#endif

namespace qcheck::test {
namespace {

#if QCHECK_HAVE_CUDA_HEADERS

uint16_t cuda_bf16_bits(float value) {
  const __nv_bfloat16_raw raw = __float2bfloat16_rn(value);
  return raw.x;
}

uint8_t cuda_e4m3_satfinite(float value) {
  return __nv_cvt_float_to_fp8(value, __NV_SATFINITE, __NV_E4M3);
}

void report(const char* what, const SweepOutcome& outcome, int hex_digits) {
  std::printf("[qcheck] %-44s %s: %.2f s on %d threads, %llu differences\n", what,
              default_f32_sweep_plan().describe().c_str(), outcome.seconds, kSweepThreads,
              static_cast<unsigned long long>(outcome.tallies[0].mismatches.count()));
  EXPECT_EQ(outcome.tallies[0].mismatches.count(), 0u)
      << what << ": the spec (expected) differs from the CUDA host function (got):\n"
      << outcome.tallies[0].mismatches.describe(hex_digits);
}

TEST(CudaHostConversions, Bf16RnMatchesSpecWithNanTo7FFF) {
  const SweepOutcome outcome = run_f32_sweep(
      default_f32_sweep_plan(), kSweepThreads, 1, [](const float* values, size_t count, Tally* tally) {
        for (size_t i = 0; i < count; ++i) {
          const uint16_t expected = spec::bf16_from_f32(values[i], Bf16Nan::k7FFF);
          const uint16_t actual = cuda_bf16_bits(values[i]);
          if (actual != expected) tally->mismatches.add(bits_of(values[i]), expected, actual);
        }
      });
  report("__float2bfloat16_rn vs spec bf16 (k7FFF)", outcome, 4);
}

TEST(CudaHostConversions, Fp8SatFiniteE4m3MatchesSpec) {
  const SweepOutcome outcome = run_f32_sweep(
      default_f32_sweep_plan(), kSweepThreads, 1, [](const float* values, size_t count, Tally* tally) {
        for (size_t i = 0; i < count; ++i) {
          const uint8_t expected = spec::e4m3_from_f32(values[i], E4m3Overflow::kSatFinite);
          const uint8_t actual = cuda_e4m3_satfinite(values[i]);
          if (actual != expected) tally->mismatches.add(bits_of(values[i]), expected, actual);
        }
      });
  report("__nv_cvt_float_to_fp8(SATFINITE, E4M3) vs spec e4m3", outcome, 2);
}

// Every bf16 code widens exactly; the host function and the spec must agree
// on all 65536 patterns, NaN payloads included.
TEST(CudaHostConversions, Bf16ToF32AllCodes) {
  int differences = 0;
  for (uint32_t code = 0; code < 0x10000; ++code) {
    __nv_bfloat16_raw raw;
    raw.x = static_cast<unsigned short>(code);
    const uint32_t actual = bits_of(__bfloat162float(__nv_bfloat16(raw)));
    const uint32_t expected = bits_of(spec::f32_from_bf16(static_cast<uint16_t>(code)));
    if (actual != expected && differences++ < 8) {
      ADD_FAILURE() << "bf16 " << hex(code, 4) << ": spec " << hex(expected, 8) << ", CUDA host "
                    << hex(actual, 8);
    }
  }
  EXPECT_EQ(differences, 0);
}

// e4m3 -> half (exact for every e4m3 value) -> f32 (exact). The two NaN
// codes are the one place the bits may legitimately differ: the toolkit
// returns its canonical NaN (sign dropped), the spec a quiet NaN with the
// code's sign. There only "is a NaN" is compared, and the bits are printed.
TEST(CudaHostConversions, E4m3ToF32AllCodes) {
  int differences = 0;
  for (uint32_t code = 0; code < 0x100; ++code) {
    const __half_raw half_raw = __nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(code), __NV_E4M3);
    const uint32_t actual = bits_of(__half2float(__half(half_raw)));
    const uint32_t expected = bits_of(spec::f32_from_e4m3(static_cast<uint8_t>(code)));
    if ((code & 0x7F) == 0x7F) {
      std::printf("[qcheck] e4m3 NaN code %s: spec %s, CUDA host %s\n", hex(code, 2).c_str(),
                  hex(expected, 8).c_str(), hex(actual, 8).c_str());
      EXPECT_TRUE(is_nan_bits(actual) && is_nan_bits(expected)) << "e4m3 " << hex(code, 2);
      continue;
    }
    if (actual != expected && differences++ < 8) {
      ADD_FAILURE() << "e4m3 " << hex(code, 2) << ": spec " << hex(expected, 8) << ", CUDA host "
                    << hex(actual, 8);
    }
  }
  EXPECT_EQ(differences, 0);
}

#if QCHECK_HAVE_CUDA_FP4

// Off the device __nv_cvt_float_to_fp4 widens to double and rounds by bits:
// round to nearest even, |x| > 6 and Inf -> +-6, -0 kept, NaN -> +6.
TEST(CudaHostConversions, Fp4E2m1MatchesSpecCvtRn) {
  const SweepOutcome outcome = run_f32_sweep(
      default_f32_sweep_plan(), kSweepThreads, 1, [](const float* values, size_t count, Tally* tally) {
        for (size_t i = 0; i < count; ++i) {
          const uint8_t expected = spec::e2m1_from_f32(values[i], E2m1Rounding::kCvtRn);
          const uint8_t actual = __nv_cvt_float_to_fp4(values[i], __NV_E2M1, cudaRoundNearest);
          if (actual != expected) tally->mismatches.add(bits_of(values[i]), expected, actual);
        }
      });
  report("__nv_cvt_float_to_fp4(E2M1, nearest) vs spec e2m1 cvt-rn", outcome, 1);
}

// e2m1 -> half (exact for every e2m1 value) -> f32, all 16 codes.
TEST(CudaHostConversions, E2m1ToF32AllCodes) {
  for (uint32_t code = 0; code < 16; ++code) {
    const __half_raw half_raw = __nv_cvt_fp4_to_halfraw(static_cast<__nv_fp4_storage_t>(code), __NV_E2M1);
    EXPECT_EQ(hex(bits_of(__half2float(__half(half_raw))), 8),
              hex(bits_of(spec::f32_from_e2m1(static_cast<uint8_t>(code))), 8))
        << "e2m1 " << hex(code, 1);
  }
}

#else

TEST(CudaHostConversions, Fp4NeedsCudaFp4Header) {
  GTEST_SKIP() << "the CUDA headers found have no cuda_fp4.h (CUDA 12.8 or later has it); "
                  "the spec's e2m1 vs the CUDA host conversion did not run";
}

#endif

#else

TEST(CudaHostConversions, NeedsCudaHeaders) {
  GTEST_SKIP() << "no CUDA headers: cuda_bf16.h / cuda_fp8.h were not found (QCHECK_CUDA_INCLUDE_DIR); "
                  "the spec vs CUDA host conversion sweeps did not run";
}

#endif

}  // namespace
}  // namespace qcheck::test
