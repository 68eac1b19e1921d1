// The SIMD norms vs the scalar spec (numerics/simd_norm.h), per Highway
// target: RMSNorm and LayerNorm over lengths around every vector width and
// the real rows (128, 512, 1536), rows of noise over 40 binades, rows with
// specials (NaN of several payloads, +-Inf, +-0, subnormals), all-zero rows
// and rows that cancel, under every order (strided and blocked lanes from 1
// to 128), with and without a padded block, each rsqrt (the approximate ones
// over a table of random corrections), both weight steps and both affine
// steps, eps 0 and 1e-6. The returned r or (mean, variance, rstd) and every
// output are compared as bits (a NaN as a NaN).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "numerics/float_bits.h"
#include "numerics/rsqrt_approx.h"
#include "numerics/simd_norm.h"
#include "tests/reference/row_values.h"
#include "tests/reference/target_fixture.h"

namespace qcheck::test {
namespace {

using spec::LayerNormAffine;
using spec::NormRules;
using spec::RmsWeight;
using spec::RsqrtKind;

// Equal bits, or both NaN: a NaN's payload and sign are not specified
// (numerics/norm.h): which operand's NaN an x86 multiply or fused step
// passes on depends on the operand order the compiler picks.
bool same(float a, float b) { return bits_of(a) == bits_of(b) || (std::isnan(a) && std::isnan(b)); }

std::string first_difference(const std::vector<float>& want, const std::vector<float>& got) {
  for (size_t i = 0; i < want.size(); ++i) {
    if (!same(want[i], got[i])) {
      char line[96];
      std::snprintf(line, sizeof line, "element %zu: spec 0x%08X, simd 0x%08X", i, bits_of(want[i]), bits_of(got[i]));
      return line;
    }
  }
  return "";
}

class SimdNorm : public SimdTargetTest {
 protected:
  float noise() {
    const float unit = static_cast<float>(static_cast<int64_t>(rng_.next() >> 40) - (int64_t{1} << 23)) / 8388608.0f;
    return std::ldexp(unit, static_cast<int>(rng_.below(41)) - 20);
  }
  // kind 0: noise; 1: noise with specials; 2: zeros; 3: values that cancel.
  std::vector<float> row(size_t n, int kind) {
    static const uint32_t specials[] = {0x7FC00000u, 0xFFC00001u, 0x7F800001u, 0x7F800000u, 0xFF800000u,
                                        0x80000000u, 0x00000000u, 0x00000001u, 0x807FFFFFu, 0x7F7FFFFFu};
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) {
      switch (kind) {
        case 0: v[i] = noise(); break;
        case 1: v[i] = rng_.below(8) == 0 ? float_from_bits(specials[rng_.below(10)]) : noise(); break;
        case 2: v[i] = rng_.below(2) ? 0.0f : -0.0f; break;
        default: v[i] = (i % 2 ? -1.0f : 1.0f) * std::ldexp(1.0f + static_cast<float>(rng_.below(8)) / 8, 20) +
                        static_cast<float>(rng_.below(3)); break;
      }
    }
    return v;
  }
  SplitMix64 rng_{0x4E0A3D00u};
};
QCHECK_INSTANTIATE_PER_TARGET(SimdNorm);

TEST_P(SimdNorm, DirectTableIsTheTarget) {
  const NormOps* direct = simd_norm_ops_for_target(GetParam());
  ASSERT_NE(direct, nullptr);
  EXPECT_STREQ(direct->name, target_name());
}

// An order's parameters: its lanes, or a Triton block's layout.
std::string layout(const spec::Reduction& r) {
  if (r.order != ReductionOrder::kTritonBlock) return std::to_string(r.lanes);
  return std::to_string(r.size_per_thread) + "x32x" + std::to_string(r.warps);
}

TEST_P(SimdNorm, EqualsTheSpecBitForBit) {
  std::vector<uint8_t> table(spec::kRsqrtApproxTableBytes);
  for (uint8_t& byte : table) byte = static_cast<uint8_t>(rng_.next());
  std::vector<spec::Reduction> orders = {{ReductionOrder::kSequential, 1}, {ReductionOrder::kPairwise, 1}};
  for (int lanes = 1; lanes <= 128; lanes *= 2) {
    orders.push_back({ReductionOrder::kStridedLanes, lanes});
    orders.push_back({ReductionOrder::kBlockedLanes, lanes});
  }
  for (int size_per_thread = 1; size_per_thread <= 8; size_per_thread *= 2) {
    for (int warps = 1; warps <= 8; warps *= 2) orders.push_back({ReductionOrder::kTritonBlock, 0, size_per_thread, warps});
  }
  const size_t lengths[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 128, 129, 255, 512, 1536};
  const NormOps& scalar = scalar_norm_ops();
  int rows = 0, differing = 0;
  for (const NormOps* simd : {&simd_norm_ops(), simd_norm_ops_for_target(GetParam())}) {
    ASSERT_NE(simd, nullptr);
    for (size_t n : lengths) {
      for (int kind = 0; kind < 4; ++kind) {
        for (const spec::Reduction& reduction : orders) {
          for (const bool padded : {false, true}) {
            NormRules rules;
            rules.reduction = reduction;
            rules.reduction.squares = static_cast<SquareStep>(rng_.below(2));
            rules.divide = static_cast<spec::WidthDivision>(rng_.below(2));
            if (padded) {
              rules.sum_width = 1;
              while (rules.sum_width < static_cast<int64_t>(n)) rules.sum_width *= 2;
              if (rng_.below(2)) rules.sum_width *= 2;  // a block wider than it needs
            }
            rules.rsqrt = static_cast<RsqrtKind>(rng_.below(4));
            rules.rsqrt_table = table.data();
            const float eps = rng_.below(2) ? 1e-6f : 0.0f;
            const std::vector<float> x = row(n, kind), w = row(n, rng_.below(2)), b = row(n, rng_.below(2));
            const std::string where = std::string(simd->name) + " n " + std::to_string(n) + " kind " +
                                      std::to_string(kind) + " " + name_of(reduction.order) + "/" + layout(reduction) + " " +
                                      name_of(rules.reduction.squares) +
                                      " width " + std::to_string(rules.sum_width) + " " + name_of(rules.rsqrt);
            std::vector<float> want(n), got(n);
            const RmsWeight weight = static_cast<RmsWeight>(rng_.below(2));
            const float r_want = scalar.rms_norm_row(x.data(), w.data(), int64_t(n), eps, weight, rules, want.data());
            const float r_got = simd->rms_norm_row(x.data(), w.data(), int64_t(n), eps, weight, rules, got.data());
            const bool same_rms = same(r_want, r_got) && first_difference(want, got).empty();
            EXPECT_TRUE(same_rms) << "rms " << name_of(weight) << " " << where << ": r 0x" << std::hex
                                  << bits_of(r_want) << " / 0x" << bits_of(r_got) << std::dec << ", "
                                  << first_difference(want, got);
            const LayerNormAffine affine = static_cast<LayerNormAffine>(rng_.below(2));
            const spec::LayerNormStats s_want =
                scalar.layer_norm_row(x.data(), w.data(), b.data(), int64_t(n), eps, affine, rules, want.data());
            const spec::LayerNormStats s_got =
                simd->layer_norm_row(x.data(), w.data(), b.data(), int64_t(n), eps, affine, rules, got.data());
            const bool same_ln = same(s_want.mean, s_got.mean) && same(s_want.variance, s_got.variance) &&
                                 same(s_want.rstd, s_got.rstd) && first_difference(want, got).empty();
            EXPECT_TRUE(same_ln) << "layer " << name_of(affine) << " " << where << ": mean 0x" << std::hex
                                 << bits_of(s_want.mean) << " / 0x" << bits_of(s_got.mean) << ", variance 0x"
                                 << bits_of(s_want.variance) << " / 0x" << bits_of(s_got.variance) << std::dec
                                 << ", " << first_difference(want, got);
            rows += 2;
            differing += !same_rms + !same_ln;
            if (differing > 20) FAIL() << "more than 20 rows differ";
          }
        }
      }
    }
  }
  EXPECT_GT(rows, 10000);
}

}  // namespace
}  // namespace qcheck::test
