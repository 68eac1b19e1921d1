// SIMD rows vs the scalar spec, per Highway target: every row function, every
// count from 0 to 2 * lanes + 3 (RoPE: that many pairs), pointers offset by
// 0..3 elements from an aligned base, values mixing noise with specials (NaN
// of both signs and several payloads, +-Inf, +-0, subnormals, 448/464/480,
// the bf16 maximum). Outputs are compared as bits, and the elements around
// each output row must keep their fill pattern (no write outside the row).
// A RoPE pattern the target computes on the scalar spec itself (no hardware
// FMA, or no vectors) is left out and counted apart.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "numerics/conversions.h"
#include "numerics/float_bits.h"
#include "numerics/rope.h"
#include "numerics/simd_rows.h"
#include "numerics/ue8m0.h"
#include "tests/reference/f32_sweep.h"
#include "tests/reference/row_checks.h"
#include "tests/reference/row_values.h"
#include "tests/reference/target_fixture.h"

namespace qcheck::test {
namespace {

class SimdRows : public SimdTargetTest {
 protected:
  size_t max_count() const { return 2 * simd_row_dispatched_lanes() + 3; }
  std::string where(const char* what, size_t count, size_t offset) const {
    return std::string(target_name()) + " " + what + " count " + std::to_string(count) + " offset " + std::to_string(offset);
  }
  void expect_none(const Differences& d) {
    EXPECT_EQ(d.count(), 0u) << target_name() << ": SIMD differs from the scalar spec:\n" << d.lines();
  }
  SplitMix64 rng_{0x51D0C0DEu};
};
QCHECK_INSTANTIATE_PER_TARGET(SimdRows);

TEST_P(SimdRows, DirectTableIsTheDispatchedTarget) {
  const RowOps* direct = simd_row_ops_for_target(GetParam());
  ASSERT_NE(direct, nullptr);
  EXPECT_STREQ(direct->name, target_name());
}

TEST_P(SimdRows, F32FromBf16) {
  Differences d;
  for (size_t count = 0; count <= max_count(); ++count) {
    for (size_t offset = 0; offset <= kMaxOffset; ++offset) {
      OffsetRow<uint16_t> in(count, offset, 0);
      OffsetRow<float> out(count, (offset + 1) % 4, float_from_bits(0x7FBADBAD));
      for (size_t i = 0; i < count; ++i) in.data()[i] = uint16_t(rng_.next());
      simd().f32_from_bf16_row(in.data(), out.data(), count);
      const std::string w = where("f32_from_bf16", count, offset);
      for (size_t i = 0; i < count; ++i) d.compare(w, i, in[i], spec::f32_from_bf16(in[i]), out[i]);
      d.outside(w, out.written_outside());
    }
  }
  expect_none(d);
}

TEST_P(SimdRows, Bf16FromF32EveryNanRule) {
  Differences d;
  for (Bf16Nan rule : {Bf16Nan::k7FFF, Bf16Nan::k7FC0, Bf16Nan::kKeepSignQuiet}) {
    for (size_t count = 0; count <= max_count(); ++count) {
      for (size_t offset = 0; offset <= kMaxOffset; ++offset) {
        OffsetRow<float> in(count, offset, 0.0f);
        OffsetRow<uint16_t> out(count, (offset + 2) % 4, 0xBADB);
        fill_mixed_row(rng_, in.data(), count, 0, 64);
        simd().bf16_from_f32_row(in.data(), out.data(), count, rule);
        const std::string w = where("bf16_from_f32", count, offset) + " rule " + std::to_string(int(rule));
        for (size_t i = 0; i < count; ++i) d.compare(w, i, bits_of(in[i]), spec::bf16_from_f32(in[i], rule), out[i]);
        d.outside(w, out.written_outside());
      }
    }
  }
  expect_none(d);
}

// Divisors: 1, vLLM's q_scale 0.37, powers of two (the UE8M0 scales, taking
// the reciprocal path) up to 2^126 and 2^127 (division path), +Inf (a row
// with an Inf), and a subnormal.
TEST_P(SimdRows, QuantizeEveryOverflowRule) {
  const float divisors[] = {1.0f, 0.37f, 0x1p-7f, 0x1p-22f, 0x1p20f, 0x1p126f, 0x1p127f,
                            float_from_bits(kF32InfBits), float_from_bits(0x00000003)};
  Differences d;
  for (E4m3Overflow rule : {E4m3Overflow::kSatFinite, E4m3Overflow::kNan}) {
    for (float divisor : divisors) {
      // Scale the noise so the quotients land around the e4m3 range.
      const int scale = std::isinf(divisor) ? 0 : int(std::ilogb(divisor)) + 6;
      for (size_t count = 0; count <= max_count(); ++count) {
        for (size_t offset = 0; offset <= kMaxOffset; ++offset) {
          OffsetRow<float> in(count, offset, 0.0f);
          OffsetRow<uint8_t> out(count, (offset + 3) % 4, 0xA5);
          fill_mixed_row(rng_, in.data(), count, std::max(-100, std::min(scale, 110)), 48);
          simd().quantize_row(in.data(), divisor, out.data(), count, rule);
          const std::string w = where("quantize", count, offset) + " divisor " + hex(bits_of(divisor), 8);
          for (size_t i = 0; i < count; ++i) {
            d.compare(w, i, bits_of(in[i]), spec::e4m3_from_f32(in[i] / divisor, rule), out[i]);
          }
          d.outside(w, out.written_outside());
        }
      }
    }
  }
  expect_none(d);
}

TEST_P(SimdRows, AmaxIgnoresNan) {
  Differences d;
  for (uint32_t special_rate : {0u, 40u, 128u, 256u}) {
    for (size_t count = 0; count <= max_count(); ++count) {
      for (size_t offset = 0; offset <= kMaxOffset; ++offset) {
        OffsetRow<float> in(count, offset, 0.0f);
        fill_mixed_row(rng_, in.data(), count, 3, special_rate);
        const float actual = simd().amax_row(in.data(), count);
        d.compare(where("amax", count, offset), 0, special_rate, spec::row_amax(in.data(), count), actual);
      }
    }
  }
  // All-NaN rows: 0 (no lane counts), whatever the signs and payloads.
  for (size_t count = 0; count <= max_count(); ++count) {
    std::vector<float> nan_row(count);
    for (size_t i = 0; i < count; ++i) nan_row[i] = float_from_bits(i % 2 ? 0xFFC00001u : 0x7F800001u + uint32_t(i));
    d.compare(where("amax all-NaN", count, 0), 0, 0, 0.0f, simd().amax_row(nan_row.data(), count));
  }
  expect_none(d);
}

// Every style x contraction pair (r1 terms, r2 terms), every even count.
// Only the pairs this target computes in vectors are compared: a fused
// pattern without a hardware FMA (SSSE3, SSE4, EMU128), and every pattern on
// SCALAR, takes the scalar spec itself (simd_rows.h). Those pairs are counted
// apart and printed; on SCALAR, where no pair is in vectors, all nine are
// compared (the row function must then be the spec itself).
TEST_P(SimdRows, RopeEveryStyleAndContraction) {
  const Contraction contractions[] = {Contraction::kNone, Contraction::kFuseCos, Contraction::kFuseSin};
  std::vector<std::pair<Contraction, Contraction>> in_vectors, on_the_spec;
  for (Contraction minus : contractions) {
    for (Contraction plus : contractions) {
      const bool fused = minus != Contraction::kNone || plus != Contraction::kNone;
      (simd_row_dispatched_rope_in_vectors(fused) ? in_vectors : on_the_spec).emplace_back(minus, plus);
    }
  }
  std::printf("%s: %zu of 9 contraction pairs computed in vectors, %zu take the scalar spec here\n", target_name(),
              in_vectors.size(), on_the_spec.size());
  // A target with no pair in vectors (SCALAR) still has its rows checked:
  // every pair's row function must be the scalar spec, bit for bit (the
  // dispatch's claim that it takes the spec, tested rather than trusted).
  const auto& compared = in_vectors.empty() ? on_the_spec : in_vectors;
  Differences d;
  size_t nan_results = 0, rows = 0;
  for (RopeStyle style : {RopeStyle::kNeox, RopeStyle::kInterleaved}) {
    for (const auto& [minus, plus] : compared) {
      for (size_t pairs = 0; pairs <= max_count(); ++pairs) {
        for (size_t offset = 0; offset <= kMaxOffset; ++offset) {
          const size_t count = 2 * pairs;
          OffsetRow<float> x(count, offset, 0.0f), cos(pairs, (offset + 1) % 4, 0.0f);
          OffsetRow<float> sin(pairs, (offset + 2) % 4, 0.0f);
          OffsetRow<float> out(count, (offset + 3) % 4, float_from_bits(0x7FBADBAD));
          fill_mixed_row(rng_, x.data(), count, 2, 32);
          fill_mixed_row(rng_, cos.data(), pairs, -1, 8);
          fill_mixed_row(rng_, sin.data(), pairs, -1, 8);
          std::vector<float> expected(count);
          spec::rope_row(x.data(), cos.data(), sin.data(), count, style, minus, plus, expected.data());
          simd().rope_row(x.data(), cos.data(), sin.data(), count, style, minus, plus, out.data());
          const std::string w = where("rope", count, offset) + " style " + name_of(style) + " contraction " +
                                std::to_string(int(minus)) + "/" + std::to_string(int(plus));
          for (size_t i = 0; i < count; ++i) {
            nan_results += std::isnan(expected[i]) ? 1 : 0;
            d.compare(w, i, bits_of(x[i]), expected[i], out[i]);
          }
          d.outside(w, out.written_outside());
          ++rows;
        }
      }
    }
  }
  expect_none(d);
  EXPECT_EQ(rows, 2 * compared.size() * (max_count() + 1) * (kMaxOffset + 1));
  // NaN results are canonical in both (spec::rope_term), so they compare
  // bit for bit like every other result.
  EXPECT_GT(nan_results, 0u) << "the inputs should produce NaN results too";
}

}  // namespace
}  // namespace qcheck::test
