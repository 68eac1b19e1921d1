// SIMD vs scalar spec over every f32 bit pattern (QCHECK_EXHAUSTIVE=ON) or a
// strided sample plus every rounding boundary (sanitizer builds), for each
// Highway target compiled in and supported: f32 -> bf16 under each NaN rule
// and f32 -> e4m3 under both overflow rules.
//
// The spec is evaluated once per block of patterns and every target's table
// (simd_row_ops_for_target: that target's code, called directly) is compared
// with it, so the sweep costs one spec pass plus one SIMD pass per target.
// One assertion per target and sweep; the first mismatches are printed.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "numerics/conversions.h"
#include "numerics/float_bits.h"
#include "numerics/simd_rows.h"
#include "tests/reference/f32_sweep.h"
#include "tests/reference/target_fixture.h"

namespace qcheck::test {
namespace {

using Clock = std::chrono::steady_clock;

void report(const char* what, const std::vector<const RowOps*>& tables, const SweepOutcome& outcome,
            int hex_digits) {
  std::printf("[qcheck] %s over %s: %.2f s wall on %d threads\n", what,
              default_f32_sweep_plan().describe().c_str(), outcome.seconds, kSweepThreads);
  for (size_t t = 0; t < tables.size(); ++t) {
    const Tally& tally = outcome.tallies[t];
    std::printf("[qcheck]   %-8s SIMD %.2f thread-s, %llu mismatches\n", tables[t]->name, tally.seconds,
                static_cast<unsigned long long>(tally.mismatches.count()));
    EXPECT_EQ(tally.mismatches.count(), 0u)
        << tables[t]->name << " " << what << " differs from the scalar spec; first differences:\n"
        << tally.mismatches.describe(hex_digits);
  }
}

// Runs simd(table, values, out, count) for every target and compares out
// with spec(value) element by element.
template <typename Out, class Simd, class Spec>
void sweep(const char* what, int hex_digits, const Simd& simd, const Spec& spec_of) {
  const std::vector<const RowOps*> tables = direct_target_tables();
  ASSERT_FALSE(tables.empty());
  const SweepOutcome outcome = run_f32_sweep(
      default_f32_sweep_plan(), kSweepThreads, tables.size(),
      [&](const float* values, size_t count, Tally* tallies) {
        thread_local std::vector<Out> expected(kSweepBlock), actual(kSweepBlock);
        for (size_t i = 0; i < count; ++i) expected[i] = spec_of(values[i]);
        for (size_t t = 0; t < tables.size(); ++t) {
          const auto start = Clock::now();
          simd(*tables[t], values, actual.data(), count);
          tallies[t].seconds += std::chrono::duration<double>(Clock::now() - start).count();
          if (std::memcmp(actual.data(), expected.data(), count * sizeof(Out)) == 0) continue;
          for (size_t i = 0; i < count; ++i) {
            if (actual[i] != expected[i]) tallies[t].mismatches.add(bits_of(values[i]), expected[i], actual[i]);
          }
        }
      });
  report(what, tables, outcome, hex_digits);
}

void sweep_bf16(Bf16Nan rule, const char* what) {
  sweep<uint16_t>(
      what, 4,
      [rule](const RowOps& ops, const float* in, uint16_t* out, size_t n) { ops.bf16_from_f32_row(in, out, n, rule); },
      [rule](float value) { return spec::bf16_from_f32(value, rule); });
}

// quantize_row divides by 1 first: exact for every non-NaN value, and a NaN
// stays a NaN of the same sign, which is all the e4m3 rules look at.
void sweep_e4m3(E4m3Overflow rule, const char* what) {
  sweep<uint8_t>(
      what, 2,
      [rule](const RowOps& ops, const float* in, uint8_t* out, size_t n) { ops.quantize_row(in, 1.0f, out, n, rule); },
      [rule](float value) { return spec::e4m3_from_f32(value, rule); });
}

TEST(ConversionSweep, Bf16NanTo7FFF) { sweep_bf16(Bf16Nan::k7FFF, "f32->bf16 (NaN 0x7FFF)"); }
TEST(ConversionSweep, Bf16NanTo7FC0) { sweep_bf16(Bf16Nan::k7FC0, "f32->bf16 (NaN 0x7FC0)"); }
TEST(ConversionSweep, Bf16NanKeepSign) { sweep_bf16(Bf16Nan::kKeepSignQuiet, "f32->bf16 (NaN keep sign)"); }
TEST(ConversionSweep, E4m3SatFinite) { sweep_e4m3(E4m3Overflow::kSatFinite, "f32->e4m3 (satfinite)"); }
TEST(ConversionSweep, E4m3OverflowNan) { sweep_e4m3(E4m3Overflow::kNan, "f32->e4m3 (overflow NaN)"); }

}  // namespace
}  // namespace qcheck::test
