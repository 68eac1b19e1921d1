// What each planted bug does to the bytes, element by element, on launches
// with contiguous layouts (so element offsets are plain index arithmetic):
// the shape of the damage is what a verdict's classifier has to recognise.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "fuzz/cpu_model.h"
#include "reference/float_bits.h"
#include "reference/fused_q_oracle.h"
#include "reference/profile.h"
#include "reference/row_ops.h"
#include "reference/ue8m0.h"
#include "tests/fuzz/launch_tensors.h"

namespace qcheck::test {
namespace {

uint16_t u16_at(const TensorBuffer& b, size_t index) {
  uint16_t v;
  std::memcpy(&v, &b.bytes[index * 2], 2);
  return v;
}
uint32_t u32_at(const TensorBuffer& b, size_t index) {
  uint32_t v;
  std::memcpy(&v, &b.bytes[index * 4], 4);
  return v;
}

// Runs the oracle on one tensor set and the variant on another.
struct Pair {
  LaunchTensors expected, got;
  Pair(const LaunchSpec& spec, PlantedCpuBug bug) : expected(spec), got(spec) {
    EXPECT_EQ(run_fused_q_oracle(expected.args(), qcheck_profile(), scalar_row_ops()), "");
    EXPECT_EQ(run_blocked_model(got.args(), bug), "");
  }
};

// Truncation instead of round-to-nearest-even: every differing bf16 is one
// code below the rounded one in magnitude, or a NaN that is not 0x7FFF.
TEST(PlantedBugDetails, TruncatingBf16IsOneCodeShortOrAnotherNaN) {
  LaunchSpec spec;
  spec.path = QueryPath::kBf16Separate;
  spec.has_indexer = false;
  Pair run(spec, PlantedCpuBug::kTruncatingBf16);
  const TensorBuffer& e = run.expected.buffer("query_out");
  const TensorBuffer& g = run.got.buffer("query_out");
  int rounded_up = 0;
  for (size_t i = 0; i < e.bytes.size() / 2; ++i) {
    const uint16_t want = u16_at(e, i), have = u16_at(g, i);
    if (want == have) continue;
    if (want == 0x7FFF) {
      EXPECT_TRUE((have & 0x7F80) == 0x7F80 && (have & 0x7F) != 0) << "element " << i;
      continue;
    }
    EXPECT_EQ(want & 0x8000, have & 0x8000) << "element " << i;
    EXPECT_EQ(want & 0x7FFF, (have & 0x7FFF) + 1) << "element " << i;
    ++rounded_up;
  }
  EXPECT_GT(rounded_up, 0);
}

// T = 17: block 1 holds one live token; the bug leaves token 16 unwritten
// (poison) and every earlier token right.
TEST(PlantedBugDetails, SkipLastTailTokenLeavesOnlyTheLastTokenUnwritten) {
  LaunchSpec spec;
  spec.tokens = 17;
  spec.path = QueryPath::kFp8Packed;
  Pair run(spec, PlantedCpuBug::kSkipLastTailToken);
  const struct {
    const char* name;
    size_t bytes_per_token;
  } outputs[] = {{"query_out", size_t(spec.mqa_heads * (spec.nope_dim + spec.rope_dim))},
                 {"index_q_fp8", size_t(spec.indexer_heads * spec.index_dim)},
                 {"index_weights_out", size_t(spec.indexer_heads * 4)}};
  for (const auto& out : outputs) {
    const auto& e = run.expected.buffer(out.name).bytes;
    const auto& g = run.got.buffer(out.name).bytes;
    const size_t last = 16 * out.bytes_per_token;
    ASSERT_EQ(e.size(), last + out.bytes_per_token) << out.name;
    EXPECT_TRUE(std::equal(e.begin(), e.begin() + last, g.begin())) << out.name;
    for (size_t k = last; k < g.size(); ++k) {
      EXPECT_EQ(g[k], kOutputPoisonByte) << out.name << " byte " << k;
    }
  }
}

// The crafted rows are inside the band: by the scalar spec, the log2f
// ceiling of s0 = RN(RN(448 * 2^k * (1 + 2^-23)) / 448) is half the exact one.
TEST(PlantedBugDetails, CraftedScaleBandRowsAreInTheBand) {
  for (int k : {4, 5, 6, 7, -5, -8, 9, 20, -12}) {
    const float lead = std::ldexp(448.0f, k);
    const float amax = lead * (1.0f + 0x1p-23f);  // the RoPE of the lead element with sin = 0
    const float exact = spec::ue8m0_scale(amax, ScaleCeiling::kExactBits, ScaleFloor::kAmax1e4);
    const float log2f = spec::ue8m0_scale(amax, ScaleCeiling::kLog2f, ScaleFloor::kAmax1e4);
    EXPECT_EQ(bits_of(exact), bits_of(std::ldexp(1.0f, k + 1))) << "k = " << k;
    EXPECT_EQ(bits_of(log2f), bits_of(std::ldexp(1.0f, k))) << "k = " << k;
  }
}

// In the band the log2f ceiling keeps half the scale: the lead element of
// every row saturates to 448 (0x7E) where the exact scale gives 224 (0x76),
// and every weight halves (one exponent step, same mantissa).
TEST(PlantedBugDetails, Log2fScaleSaturatesTheLeadAndHalvesTheWeight) {
  LaunchSpec spec;
  spec.recipe = ValueRecipe::kScaleBand;
  spec.indexer_heads = 5;
  Pair run(spec, PlantedCpuBug::kLog2fScale);
  const TensorBuffer& ec = run.expected.buffer("index_q_fp8");
  const TensorBuffer& gc = run.got.buffer("index_q_fp8");
  const TensorBuffer& ew = run.expected.buffer("index_weights_out");
  const TensorBuffer& gw = run.got.buffer("index_weights_out");
  for (int64_t row = 0; row < spec.tokens * spec.indexer_heads; ++row) {
    const size_t lead = size_t(row * spec.index_dim);
    const uint8_t sign = ec.bytes[lead] & 0x80;
    EXPECT_EQ(ec.bytes[lead], sign | 0x76) << "row " << row;
    EXPECT_EQ(gc.bytes[lead], sign | 0x7E) << "row " << row;
    const uint32_t want = u32_at(ew, row), have = u32_at(gw, row);
    ASSERT_GT((want >> 23) & 0xFF, 1u) << "row " << row;  // a normal weight
    EXPECT_EQ(have + 0x00800000u, want) << "row " << row;
  }
}

// Skipping the copy leaves the front (columns 0..L-1) as poison; the RoPE
// tail is right.
TEST(PlantedBugDetails, SkipCopyUnaliasedLeavesTheFrontUnwritten) {
  LaunchSpec spec;
  spec.path = QueryPath::kBf16Packed;
  Pair run(spec, PlantedCpuBug::kSkipCopyUnaliased);
  const TensorBuffer& e = run.expected.buffer("query_out");
  const TensorBuffer& g = run.got.buffer("query_out");
  const int64_t width = spec.nope_dim + spec.rope_dim;
  const uint16_t poison = uint16_t(kOutputPoisonByte) << 8 | kOutputPoisonByte;
  for (int64_t row = 0; row < spec.tokens * spec.mqa_heads; ++row) {
    for (int64_t col = 0; col < width; ++col) {
      const size_t i = size_t(row * width + col);
      if (col < spec.nope_dim) {
        EXPECT_EQ(u16_at(g, i), poison) << "row " << row << " col " << col;
      } else {
        EXPECT_EQ(u16_at(g, i), u16_at(e, i)) << "row " << row << " col " << col;
      }
    }
  }
}

// With column stride 2 a unit stride reads head h's weight from column
// offset h instead of 2h: head 0 is still right, the others read padding or
// another head's weight.
TEST(PlantedBugDetails, UnitWeightsColumnIsRightOnlyForHeadZero) {
  LaunchSpec spec;
  spec.weights_column_stride = 2;
  spec.indexer_heads = 4;
  Pair run(spec, PlantedCpuBug::kUnitWeightsColumn);
  const TensorBuffer& e = run.expected.buffer("index_weights_out");
  const TensorBuffer& g = run.got.buffer("index_weights_out");
  int wrong = 0;
  for (int64_t t = 0; t < spec.tokens; ++t) {
    for (int64_t h = 0; h < spec.indexer_heads; ++h) {
      const size_t i = size_t(t * spec.indexer_heads + h);
      if (h == 0) {
        EXPECT_EQ(u32_at(g, i), u32_at(e, i)) << "token " << t;
      }
      wrong += u32_at(g, i) != u32_at(e, i);
    }
  }
  EXPECT_GT(wrong, 0);
  EXPECT_EQ(run.expected.buffer("index_q_fp8").bytes, run.got.buffer("index_q_fp8").bytes);
}

}  // namespace
}  // namespace qcheck::test
