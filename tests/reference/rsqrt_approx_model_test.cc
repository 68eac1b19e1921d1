// The model of the GPU's approximate rsqrt over a table of corrections
// (numerics/rsqrt_approx.h), on tables made here: with no corrections it is
// the correctly rounded value; one corrected entry moves exactly the inputs
// of its (parity, mantissa) at every exponent; the special values and the
// subnormal inputs with and without ftz. Whether the hardware is this model
// over the device's table is the device sweep's question
// (tools/rsqrt_table check), not this test's.
#include "numerics/rsqrt_approx.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/random/prng.h"
#include "numerics/float_bits.h"
#include "numerics/rsqrt.h"

namespace qcheck::spec {
namespace {

// A table whose every entry is `code` (2: no correction).
std::vector<uint8_t> uniform_table(uint8_t code) {
  const uint8_t byte = static_cast<uint8_t>(code | code << 2 | code << 4 | code << 6);
  return std::vector<uint8_t>(kRsqrtApproxTableBytes, byte);
}

void set_entry(std::vector<uint8_t>* table, uint32_t index, uint8_t code) {
  uint8_t& byte = (*table)[index / 4];
  byte = static_cast<uint8_t>((byte & ~(3u << (2 * (index % 4)))) | code << (2 * (index % 4)));
}

uint32_t model_bits(const std::vector<uint8_t>& table, uint32_t x, bool ftz) {
  return bits_of(rsqrt_approx_with(table.data(), float_from_bits(x), ftz));
}

TEST(RsqrtApproxModel, WithoutCorrectionsItIsTheCorrectlyRoundedValue) {
  const std::vector<uint8_t> table = uniform_table(2);
  Xoshiro256 rng(0x5157);
  for (int i = 0; i < 200000; ++i) {
    const uint32_t x = static_cast<uint32_t>(rng.below(0x7F000000u)) + 0x00800000u;  // positive normal
    ASSERT_EQ(model_bits(table, x, true), bits_of(rsqrt_rn(float_from_bits(x)))) << std::hex << x;
    ASSERT_EQ(model_bits(table, x, false), bits_of(rsqrt_rn(float_from_bits(x)))) << std::hex << x;
  }
}

TEST(RsqrtApproxModel, AnEntryMovesItsMantissaAtEveryExponentOfItsParity) {
  std::vector<uint8_t> table = uniform_table(2);
  set_entry(&table, rsqrt_approx_index(0x3F800000u), 1);  // x = 1 (odd exponent 127, mantissa 0): -1 ulp
  set_entry(&table, rsqrt_approx_index(0x3FC00000u), 3);  // x = 1.5: +1 ulp
  set_entry(&table, rsqrt_approx_index(0x3F400000u), 0);  // x = 0.75 (even exponent 126): -2 ulp
  EXPECT_EQ(rsqrt_approx_index(0x3F800000u), 1u << 23);
  EXPECT_EQ(rsqrt_approx_index(0x40800000u), 1u << 23);      // 4: the same entry as 1
  EXPECT_EQ(rsqrt_approx_index(0x40000000u), 0u);            // 2: even exponent, mantissa 0
  EXPECT_EQ(model_bits(table, 0x3F800000u, true), 0x3F7FFFFFu);  // 1 -> 1 - 2^-24
  EXPECT_EQ(model_bits(table, 0x40800000u, true), 0x3EFFFFFFu);  // 4 -> 0.5 - 2^-25
  EXPECT_EQ(model_bits(table, 0x3E800000u, true), 0x3FFFFFFFu);  // 0.25 -> 2 - 2^-22
  EXPECT_EQ(model_bits(table, 0x40000000u, true), 0x3F3504F3u);  // 2: its entry is uncorrected
  EXPECT_EQ(model_bits(table, 0x3FC00000u, true), bits_of(rsqrt_rn(1.5f)) + 1);
  EXPECT_EQ(model_bits(table, 0x41C00000u, true), bits_of(rsqrt_rn(24.0f)) + 1);  // 1.5 * 16
  EXPECT_EQ(model_bits(table, 0x3F400000u, true), bits_of(rsqrt_rn(0.75f)) - 2);
  EXPECT_EQ(model_bits(table, 0x40400000u, true), bits_of(rsqrt_rn(3.0f)) - 2);  // 0.75 * 4
}

TEST(RsqrtApproxModel, SpecialValues) {
  const std::vector<uint8_t> table = uniform_table(3);  // +1 ulp everywhere: specials take none
  for (const bool ftz : {true, false}) {
    EXPECT_EQ(model_bits(table, 0x00000000u, ftz), 0x7F800000u);  // +0 -> +Inf
    EXPECT_EQ(model_bits(table, 0x80000000u, ftz), 0xFF800000u);  // -0 -> -Inf
    EXPECT_EQ(model_bits(table, 0x7F800000u, ftz), 0x00000000u);  // +Inf -> +0
    EXPECT_EQ(model_bits(table, 0xFF800000u, ftz), 0x7FFFFFFFu);  // -Inf -> NaN
    EXPECT_EQ(model_bits(table, 0xBF800000u, ftz), 0x7FFFFFFFu);  // -1 -> NaN
    EXPECT_EQ(model_bits(table, 0x7FC00000u, ftz), 0x7FFFFFFFu);  // NaNs -> the canonical one
    EXPECT_EQ(model_bits(table, 0xFFBFFFFFu, ftz), 0x7FFFFFFFu);
    EXPECT_EQ(model_bits(table, 0x7F7FFFFFu, ftz), 0x1F800000u + 1);  // the largest finite: 2^-64, + 1 ulp
  }
}

TEST(RsqrtApproxModel, SubnormalInputsFlushOrScale) {
  std::vector<uint8_t> table = uniform_table(2);
  set_entry(&table, rsqrt_approx_index(0x3F800000u), 1);  // mantissa 0, odd exponent: -1 ulp
  // x = 2^-140: ftz takes it as +0; else x * 2^24 = 2^-116 (odd biased exponent 11) through the entry of 1,
  // then times 2^12: rsqrt(2^-140) = 2^70, less one ulp.
  EXPECT_EQ(model_bits(table, 0x00000200u, true), 0x7F800000u);
  EXPECT_EQ(model_bits(table, 0x80000200u, true), 0xFF800000u);  // a negative subnormal flushes to -0
  EXPECT_EQ(model_bits(table, 0x00000200u, false), 0x62800000u - 1);
  EXPECT_EQ(model_bits(table, 0x80000200u, false), 0x7FFFFFFFu);
  // The smallest subnormal 2^-149 -> 2^74.5 (even exponent after the scaling: uncorrected).
  EXPECT_EQ(model_bits(table, 0x00000001u, false), 0x64B504F3u);
}

}  // namespace
}  // namespace qcheck::spec

namespace qcheck::spec {
namespace {

// The table in the library is the one `qcheck-rsqrt-table generate` wrote on
// an H100 (2026-12-06): its size, the counts that run printed, and results
// the device gave in the check run of the same call (rsqrt.approx.f32 on
// subnormal inputs, scaled by 2^24; ftz turning them into infinities).
TEST(RsqrtApproxTable, IsTheOneMeasuredOnTheDevice) {
  ASSERT_EQ(rsqrt_approx_table_bytes(), kRsqrtApproxTableBytes);
  uint64_t counts[4] = {};
  const uint8_t* table = rsqrt_approx_table();
  for (size_t i = 0; i < kRsqrtApproxTableBytes; ++i) {
    for (int k = 0; k < 4; ++k) ++counts[(table[i] >> (2 * k)) & 3];
  }
  EXPECT_EQ(counts[0], 8u);         // -2 ulp
  EXPECT_EQ(counts[1], 2344391u);   // -1 ulp
  EXPECT_EQ(counts[2], 13143086u);  // exact
  EXPECT_EQ(counts[3], 1289731u);   // +1 ulp
  EXPECT_EQ(bits_of(rsqrt_approx(float_from_bits(0x00000010u), false)), 0x63B504F2u);
  EXPECT_EQ(bits_of(rsqrt_approx(float_from_bits(0x00000020u), false)), 0x63800000u);
  EXPECT_EQ(bits_of(rsqrt_approx(float_from_bits(0x00000030u), false)), 0x635105EBu);
  EXPECT_EQ(bits_of(rsqrt_approx(float_from_bits(0x80000010u), false)), 0x7FFFFFFFu);
  EXPECT_EQ(bits_of(rsqrt_approx(float_from_bits(0x00000010u), true)), 0x7F800000u);
  EXPECT_EQ(bits_of(rsqrt_approx(float_from_bits(0x80000010u), true)), 0xFF800000u);
}

// Every entry is within the -2..+1 ulp the table can hold, and the model over
// it stays within 2 ulp of the correctly rounded value on a sample of every
// binade (the correction is added to rsqrt_rn's bits, never carried out of
// the result's binade into a wrong exponent).
TEST(RsqrtApproxTable, StaysWithinTwoUlpOfTheCorrectlyRoundedValue) {
  for (uint32_t x = 0x00800000u; x < 0x7F800000u; x += 0x00001F3Fu) {
    const float v = float_from_bits(x);
    const int64_t d = int64_t{bits_of(rsqrt_approx(v, true))} - int64_t{bits_of(rsqrt_rn(v))};
    ASSERT_GE(d, -2) << std::hex << x;
    ASSERT_LE(d, 1) << std::hex << x;
  }
}

}  // namespace
}  // namespace qcheck::spec
