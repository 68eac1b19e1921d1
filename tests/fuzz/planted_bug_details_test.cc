// What each planted bug does to the bits, read element by element from the
// verdict's report (every mismatch listed, with its coordinates and both bit
// patterns): the shape of the damage, beyond its signature. Expected values
// are the oracle's (from the report); the checks only relate them to the
// bits the variant wrote.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>
#include <utility>

#include "fuzz/verdict/verdict.h"
#include "numerics/conversions.h"
#include "numerics/float_bits.h"
#include "numerics/ue8m0.h"
#include "tests/fuzz/model_cases.h"

namespace qcheck::test {
namespace {

using MC = MismatchClass;

// Truncation instead of round-to-nearest-even: a differing bf16 is one code
// nearer zero than the rounded one (same sign), or the NaN's own bits where
// profile qcheck writes 0x7FFF (SEMANTICS.md, bf16 NaN).
TEST(PlantedBugDetails, TruncatingBf16IsOneCodeNearerZeroOrAnotherNaN) {
  const Case c = model_case([](Case& c) {
    c.query_path = QueryPath::kBf16Separate;
    c.has_indexer = false;
    c.values = ValueRecipe::kSpecials;
  });
  const Verdict v = verdict_of("cpu-model-bug-truncating-bf16", c, kListAll);
  ASSERT_EQ(v.exit_code(), 1) << verdict_text(v, c);
  ASSERT_EQ(v.report.first.size(), static_cast<size_t>(v.report.total));
  int shorter = 0, nan_payloads = 0;
  for (const Mismatch& m : v.report.first) {
    ASSERT_EQ(m.signature.tensor, "query_out");
    if (m.signature.mismatch == MC::kNanBits) {
      EXPECT_EQ(m.expected_bits, 0x7FFFu) << m.token << "," << m.head << "," << m.dim;
      ++nan_payloads;
      continue;
    }
    ASSERT_EQ(m.signature.mismatch, MC::kOffByOne);
    EXPECT_EQ(m.expected_bits & 0x8000u, m.got_bits & 0x8000u);
    EXPECT_EQ(m.expected_bits & 0x7FFFu, (m.got_bits & 0x7FFFu) + 1)
        << m.token << "," << m.head << "," << m.dim;
    ++shorter;
  }
  EXPECT_GT(shorter, 0);
  // RoPE NaN results are canonical 0x7FFFFFFF: truncated they are 0x7FFF too.
  EXPECT_EQ(nan_payloads, 0);
}

// The tail block handles T % 16 - 1 tokens: exactly the last token is
// unwritten, every element of it in every output, and nothing else differs.
TEST(PlantedBugDetails, SkipLastTailTokenLeavesOnlyTheLastTokenUnwritten) {
  for (int64_t tokens : {17, 31, 33}) {
    const Case c = model_case([&](Case& c) {
      c.num_tokens = tokens;
      c.query_path = QueryPath::kFp8Packed;
      apply_layout_mix(LayoutMix::kPadded, c);
    });
    const Verdict v = verdict_of("cpu-model-bug-skip-last-tail-token", c, kListAll);
    ASSERT_EQ(v.exit_code(), 1) << verdict_text(v, c);
    const int64_t per_token = c.mqa_heads * (c.nope_dim + c.rope_dim) +
                              c.indexer_heads * c.index_dim + c.indexer_heads;
    EXPECT_EQ(v.report.total, per_token) << "T = " << tokens;
    ASSERT_EQ(v.report.first.size(), static_cast<size_t>(v.report.total));
    for (const Mismatch& m : v.report.first) {
      EXPECT_EQ(m.signature.mismatch, MC::kUnwritten) << m.signature.text();
      EXPECT_EQ(m.token, tokens - 1) << m.signature.text();
    }
  }
}

// In the band the log2f ceiling keeps half the scale: every normal code of
// every indexer row doubles (the row's largest saturates to 448, 0x7E, where the
// exact scale gives 224, 0x76) and every weight halves (one exponent step,
// same mantissa). SEMANTICS.md variant (A).
TEST(PlantedBugDetails, Log2fScaleDoublesEveryCodeAndHalvesEveryWeight) {
  const Case c = model_case([](Case& c) {
    c.values = ValueRecipe::kScaleBand;
    c.indexer_heads = 5;
  });
  const Verdict v = verdict_of("cpu-model-bug-log2f-scale", c, kListAll);
  ASSERT_EQ(v.exit_code(), 1) << verdict_text(v, c);
  ASSERT_EQ(v.report.first.size(), static_cast<size_t>(v.report.total));
  std::map<std::pair<int64_t, int64_t>, std::pair<uint32_t, uint32_t>> row_max;  // expected, got
  int weights = 0, doubled = 0;
  for (const Mismatch& m : v.report.first) {
    ASSERT_EQ(m.signature.mismatch, MC::kRowPowerOfTwo) << m.signature.text();
    if (m.signature.tensor == "index_weights_out") {
      ASSERT_GT((m.expected_bits >> 23) & 0xFFu, 1u);  // a normal weight: halving is exact
      EXPECT_EQ(m.got_bits + 0x00800000u, m.expected_bits) << m.token << "," << m.head;
      ++weights;
      continue;
    }
    ASSERT_EQ(m.signature.tensor, "index_q_fp8");
    // Above e4m3's smallest normal (2^-6, code 0x08) rounding commutes with
    // doubling; a subnormal code has fewer mantissa bits, so it need not
    // double exactly (the verdict's row rule skips those too).
    if ((m.expected_bits & 0x7Fu) > 0x08u) {
      const float expected = spec::f32_from_e4m3(static_cast<uint8_t>(m.expected_bits));
      const float got = spec::f32_from_e4m3(static_cast<uint8_t>(m.got_bits));
      EXPECT_EQ(bits_of(got), bits_of(2.0f * expected))
          << m.token << "," << m.head << "," << m.dim;
      ++doubled;
    }
    auto& max = row_max[{m.token, m.head}];
    max.first = std::max(max.first, m.expected_bits & 0x7Fu);
    max.second = std::max(max.second, m.got_bits & 0x7Fu);
  }
  const int64_t rows = c.num_tokens * c.indexer_heads;
  EXPECT_EQ(weights, rows);
  EXPECT_GT(doubled, rows);
  EXPECT_EQ(static_cast<int64_t>(row_max.size()), rows);
  for (const auto& [row, max] : row_max) {
    EXPECT_EQ(max.first, 0x76u) << "row " << row.first << "," << row.second;
    EXPECT_EQ(max.second, 0x7Eu) << "row " << row.first << "," << row.second;
  }
}

// Skipping the copy leaves the whole nope front as poison (every element of
// every row, in the production layouts too) and nothing else.
TEST(PlantedBugDetails, SkipCopyUnaliasedLeavesTheWholeFrontUnwritten) {
  for (LayoutMix mix : {LayoutMix::kContiguous, LayoutMix::kProduction}) {
    const Case c = model_case([&](Case& c) { apply_layout_mix(mix, c); });
    const Verdict v = verdict_of("cpu-model-bug-skip-copy-unaliased", c);
    ASSERT_EQ(v.exit_code(), 1) << verdict_text(v, c);
    const Signature front{"query_out", "nope front", MC::kUnwritten};
    ASSERT_EQ(v.report.counts.size(), 1u) << verdict_text(v, c);
    EXPECT_EQ(v.report.counts.begin()->first, front);
    EXPECT_EQ(v.report.total, c.num_tokens * c.mqa_heads * c.nope_dim);
  }
}

// With column stride 2 a unit stride reads head h's weight at column h
// instead of 2h: head 0 stays right, every other head reads view padding or
// another head's weight.
TEST(PlantedBugDetails, UnitWeightsColumnIsRightOnlyForHeadZero) {
  const Case c = model_case([](Case& c) {
    c.weights_column_stride = 2;
    c.indexer_heads = 4;
  });
  const Verdict v = verdict_of("cpu-model-bug-unit-weights-column", c, kListAll);
  ASSERT_EQ(v.exit_code(), 1) << verdict_text(v, c);
  ASSERT_EQ(v.report.first.size(), static_cast<size_t>(v.report.total));
  std::set<int64_t> wrong_heads;
  for (const Mismatch& m : v.report.first) {
    EXPECT_EQ(m.signature.tensor, "index_weights_out");
    EXPECT_NE(m.head, 0) << "token " << m.token;
    wrong_heads.insert(m.head);
  }
  EXPECT_EQ(wrong_heads, (std::set<int64_t>{1, 2, 3}));
}

// Saturation lost: every differing code is +-448 in the oracle and the NaN
// of the same sign in the variant, and only the MQA fp8 output differs (an
// indexer code cannot overflow: planted_bugs_test.cc).
TEST(PlantedBugDetails, NonSaturatingE4m3TurnsOnlyMqaSaturationsIntoNaN) {
  const Case c = model_case([](Case& c) {
    c.query_path = QueryPath::kFp8Packed;
    c.values = ValueRecipe::kSpecials;
  });
  const Verdict v = verdict_of("cpu-model-bug-non-saturating-e4m3", c, kListAll);
  ASSERT_EQ(v.exit_code(), 1) << verdict_text(v, c);
  ASSERT_EQ(v.report.first.size(), static_cast<size_t>(v.report.total));
  for (const Mismatch& m : v.report.first) {
    ASSERT_EQ(m.signature.tensor, "query_out") << m.signature.text();
    EXPECT_EQ(m.expected_bits & 0x7Fu, 0x7Eu) << m.token << "," << m.head << "," << m.dim;
    EXPECT_EQ(m.got_bits, m.expected_bits | 0x01u) << m.token << "," << m.head << "," << m.dim;
  }
}

// A negative NaN keeps its sign: every differing code is 0x7F in the oracle
// and 0xFF in the variant.
TEST(PlantedBugDetails, E4m3NanSignGivesTheNegativeNaNOnly) {
  for (QueryPath path : {QueryPath::kFp8Packed, QueryPath::kBf16Packed}) {
    const Case c = model_case([&](Case& c) {
      c.query_path = path;
      c.values = ValueRecipe::kSpecials;
    });
    const Verdict v = verdict_of("cpu-model-bug-e4m3-nan-sign", c, kListAll);
    ASSERT_EQ(v.exit_code(), 1) << verdict_text(v, c);
    ASSERT_EQ(v.report.first.size(), static_cast<size_t>(v.report.total));
    for (const Mismatch& m : v.report.first) {
      EXPECT_EQ(m.signature.mismatch, MC::kNanBits) << m.signature.text();
      EXPECT_EQ(m.expected_bits, 0x7Fu) << m.signature.text();
      EXPECT_EQ(m.got_bits, 0xFFu) << m.signature.text();
    }
  }
}

// Flushing to zero: on rows of subnormals every differing element of the
// variant is a zero (a flushed rope result, or the code of one: the
// indexer's codes are zero either way, only their sign can differ). (On the
// specials a flushed operand also moves normal results: a subnormal cos
// times a bf16 max, a subnormal times Inf, which gives NaN once flushed.)
TEST(PlantedBugDetails, FastMathFtzWritesZerosOnSubnormalRows) {
  for (QueryPath path : {QueryPath::kBf16Separate, QueryPath::kBf16Packed}) {
    Case c = model_case([&](Case& c) { c.query_path = path; });
    for (TensorId tensor : {TensorId::kQPe, TensorId::kIndexQ}) {
      ValueEdit subnormals;
      subnormals.tensor = tensor;
      subnormals.rows = -1;
      subnormals.bits = 0x0001;  // 2^-133, the smallest bf16 subnormal
      c.edits.push_back(subnormals);
    }
    const Verdict v = verdict_of("cpu-model-bug-fast-math-ftz", c, kListAll);
    ASSERT_EQ(v.exit_code(), 1) << verdict_text(v, c);
    ASSERT_EQ(v.report.first.size(), static_cast<size_t>(v.report.total));
    int rope = 0;
    for (const Mismatch& m : v.report.first) {
      const uint32_t magnitude = m.type == ElementType::kBf16 ? 0x7FFFu : 0x7Fu;
      EXPECT_EQ(m.got_bits & magnitude, 0u) << m.signature.text() << " " << m.token << "," << m.head << ","
                                            << m.dim;
      if (m.signature.tensor == "query_out") ++rope;
    }
    EXPECT_GT(rope, 0);
  }
}

// The scale rounded down is half the right one on every row whose s0 is
// not a power of two: each weight halves exactly (one exponent step).
TEST(PlantedBugDetails, FloorScaleHalvesEveryWeight) {
  const Case c = model_case([](Case& c) { c.indexer_heads = 5; });
  const Verdict v = verdict_of("cpu-model-bug-floor-scale", c, kListAll);
  ASSERT_EQ(v.exit_code(), 1) << verdict_text(v, c);
  int weights = 0;
  for (const Mismatch& m : v.report.first) {
    if (m.signature.tensor != "index_weights_out") continue;
    ASSERT_GT((m.expected_bits >> 23) & 0xFFu, 1u);  // normal: halving is exact
    EXPECT_EQ(m.got_bits + 0x00800000u, m.expected_bits) << m.token << "," << m.head;
    ++weights;
  }
  EXPECT_EQ(weights, c.num_tokens * c.indexer_heads);
}

// On all-zero rows (amax 0) the floor decides the scale alone: 2^-22 from
// max(0, 1e-4) / 448; 2^-13 when the floor applies to the scale; 2^-42 with
// the floor 1e-10. Only those rows' weights differ, by exactly that factor.
TEST(PlantedBugDetails, ScaleFloorsMoveOnlyTheWeightsOfZeroRows) {
  const struct {
    const char* backend;
    ScaleFloor floor;
  } variants[] = {{"cpu-model-bug-floor-on-scale", ScaleFloor::kScale1e4},
                  {"cpu-model-bug-eps-1e-10", ScaleFloor::kAmax1e10}};
  const Case c = model_case([](Case& c) {
    c.values = ValueRecipe::kZeroRows;
    c.indexer_heads = 4;
  });
  const float right = spec::ue8m0_scale(0.0f, ScaleCeiling::kExactBits, ScaleFloor::kAmax1e4);
  EXPECT_EQ(bits_of(right), bits_of(std::ldexp(1.0f, -22)));
  for (const auto& variant : variants) {
    const float wrong = spec::ue8m0_scale(0.0f, ScaleCeiling::kExactBits, variant.floor);
    int exponent = 0;
    ASSERT_EQ(std::frexp(wrong / right, &exponent), 0.5f);
    const uint32_t step = static_cast<uint32_t>(std::abs(exponent - 1)) << 23;
    const Verdict v = verdict_of(variant.backend, c, kListAll);
    ASSERT_EQ(v.exit_code(), 1) << verdict_text(v, c);
    ASSERT_EQ(v.report.first.size(), static_cast<size_t>(v.report.total));
    for (const Mismatch& m : v.report.first) {
      ASSERT_EQ(m.signature.tensor, "index_weights_out") << variant.backend;
      ASSERT_GT((m.expected_bits >> 23) & 0xFFu, 20u);  // far from the subnormals either way
      EXPECT_EQ(m.got_bits, exponent > 1 ? m.expected_bits + step : m.expected_bits - step)
          << variant.backend << " " << m.token << "," << m.head;
    }
  }
}

// The argument twice the default: the recomputed head_scale halves every
// weight, and nothing else moves.
TEST(PlantedBugDetails, RecomputedHeadScaleIgnoresTheArgument) {
  Case c = model_base_case();
  c.head_scale_bits = bits_of(2.0f * float_from_bits(default_head_scale_bits(c.indexer_heads)));
  const Verdict v = verdict_of("cpu-model-bug-recomputed-head-scale", c, kListAll);
  ASSERT_EQ(v.exit_code(), 1) << verdict_text(v, c);
  EXPECT_EQ(v.report.total, c.num_tokens * c.indexer_heads);
  for (const Mismatch& m : v.report.first) {
    ASSERT_EQ(m.signature.tensor, "index_weights_out");
    EXPECT_EQ(m.got_bits + 0x00800000u, m.expected_bits) << m.token << "," << m.head;
  }
}

// The heads a program grid misses: exactly those, every element of them, in
// every token; nothing else differs.
TEST(PlantedBugDetails, HeadCoverageBugsLeaveExactlyTheMissedHeadsUnwritten) {
  const struct {
    const char* backend;
    int64_t heads, indexer_heads;
    bool has_indexer;
    std::set<int64_t> missed;
  } launches[] = {{"cpu-model-bug-odd-heads-drop-last", 5, 2, true, {4}},
                  {"cpu-model-bug-odd-heads-drop-last", 1, 2, false, {0}},
                  {"cpu-model-bug-mqa-grid-sized-by-ni", 7, 2, true, {4, 5, 6}},
                  {"cpu-model-bug-mqa-grid-sized-by-ni", 3, 2, false, {0, 1, 2}}};
  for (const auto& launch : launches) {
    const Case c = model_case([&](Case& c) {
      c.mqa_heads = launch.heads;
      c.indexer_heads = launch.indexer_heads;
      c.has_indexer = launch.has_indexer;
      c.query_path = QueryPath::kFp8Packed;
      apply_layout_mix(LayoutMix::kPadded, c);
    });
    const Verdict v = verdict_of(launch.backend, c, kListAll);
    ASSERT_EQ(v.exit_code(), 1) << verdict_text(v, c);
    EXPECT_EQ(v.report.total,
              c.num_tokens * static_cast<int64_t>(launch.missed.size()) * (c.nope_dim + c.rope_dim))
        << launch.backend;
    std::set<int64_t> heads;
    for (const Mismatch& m : v.report.first) {
      EXPECT_EQ(m.signature.tensor, "query_out") << m.signature.text();
      EXPECT_EQ(m.signature.mismatch, MC::kUnwritten) << m.signature.text();
      heads.insert(m.head);
    }
    EXPECT_EQ(heads, launch.missed) << launch.backend << " H = " << launch.heads;
  }
}

// A shared layer's indexer outputs: the ignoring twin writes zero codes and
// +0 weights into every element of both, and touches nothing else.
TEST(PlantedBugDetails, HasIndexerIgnoredWritesZerosIntoTheIndexerOutputs) {
  for (FloatType weights_out : {FloatType::kF32, FloatType::kBf16}) {
    const Case c = model_case([&](Case& c) {
      c.has_indexer = false;
      c.weights_out_dtype = weights_out;
    });
    const Verdict v = verdict_of("cpu-model-bug-has-indexer-ignored", c, kListAll);
    ASSERT_EQ(v.exit_code(), 1) << verdict_text(v, c);
    EXPECT_EQ(v.report.total, c.num_tokens * c.indexer_heads * (c.index_dim + 1));
    for (const Mismatch& m : v.report.first) {
      EXPECT_EQ(m.signature.mismatch, MC::kWrittenWhenDisabled) << m.signature.text();
      EXPECT_EQ(m.got_bits, 0u) << m.signature.text();
    }
  }
}

}  // namespace
}  // namespace qcheck::test
