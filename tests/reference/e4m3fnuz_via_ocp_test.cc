// The identity the CUDA kernels use for e4m3fnuz (numerics/device/
// e4m3fnuz_via_ocp.h: the FNUZ code of x is the OCP code of 2|x|, with
// FNUZ's own NaN, saturation and unsigned zero) against the scalar spec's
// e4m3fnuz under kSatFinite, over every f32 pattern (QCHECK_EXHAUSTIVE=ON)
// or a strided sample plus every rounding boundary; the spec's OCP encoder
// stands in for the device instruction (cvt.rn.satfinite, whose sweep is the
// GPU gate's).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "numerics/conversions.h"
#include "numerics/device/e4m3fnuz_via_ocp.h"
#include "numerics/e4m3fnuz.h"
#include "numerics/float_bits.h"
#include "tests/reference/f32_sweep.h"

namespace qcheck::test {
namespace {

uint8_t via_ocp(float x) {
  return device::e4m3fnuz_via_ocp(x, [](float v) { return spec::e4m3_from_f32(v, E4m3Overflow::kSatFinite); });
}

TEST(E4m3fnuzViaOcp, KnownCodes) {
  EXPECT_EQ(via_ocp(1.0f), 0x40);         // FNUZ 1.0: exponent field 8, mantissa 0
  EXPECT_EQ(via_ocp(224.0f), 0x7E);
  EXPECT_EQ(via_ocp(232.0f), 0x7E);       // the tie goes to the even 224
  EXPECT_EQ(via_ocp(232.5f), 0x7F);
  EXPECT_EQ(via_ocp(240.0f), 0x7F);
  EXPECT_EQ(via_ocp(1e30f), 0x7F);        // saturates
  EXPECT_EQ(via_ocp(-INFINITY), 0xFF);
  EXPECT_EQ(via_ocp(-0.0f), 0x00);        // no -0
  EXPECT_EQ(via_ocp(-0x1p-12f), 0x00);    // rounds to zero: unsigned
  EXPECT_EQ(via_ocp(0x1p-10f), 0x01);     // the smallest subnormal, 2^-10
  EXPECT_EQ(via_ocp(-0x1p-10f), 0x81);
  EXPECT_EQ(via_ocp(NAN), 0x80);
}

TEST(E4m3fnuzViaOcp, EqualsTheSpecOnEveryPattern) {
  const SweepOutcome outcome =
      run_f32_sweep(default_f32_sweep_plan(), kSweepThreads, 1, [](const float* values, size_t count, Tally* tallies) {
        for (size_t i = 0; i < count; ++i) {
          const uint8_t want = spec::e4m3fnuz_from_f32(values[i], E4m3FnuzOverflow::kSatFinite);
          const uint8_t got = via_ocp(values[i]);
          if (got != want) tallies[0].mismatches.add(bits_of(values[i]), want, got);
        }
      });
  std::printf("[qcheck] e4m3fnuz via OCP over %s: %.2f s, %llu mismatches\n",
              default_f32_sweep_plan().describe().c_str(), outcome.seconds,
              static_cast<unsigned long long>(outcome.tallies[0].mismatches.count()));
  EXPECT_EQ(outcome.tallies[0].mismatches.count(), 0u) << outcome.tallies[0].mismatches.describe(2);
}

}  // namespace
}  // namespace qcheck::test
