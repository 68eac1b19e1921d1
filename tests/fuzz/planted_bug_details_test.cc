// What each planted bug does to the bits, read element by element from the
// verdict's report (every mismatch listed, with its coordinates and both bit
// patterns): the shape of the damage, beyond its signature. Expected values
// are the oracle's (from the report); the checks only relate them to the
// bits the variant wrote.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <utility>

#include "fuzz/verdict.h"
#include "reference/conversions.h"
#include "reference/float_bits.h"
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

}  // namespace
}  // namespace qcheck::test
