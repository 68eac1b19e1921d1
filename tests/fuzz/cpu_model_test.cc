// The correct CPU model (and its harmless twin) through the harness: every
// case of the model grid and of the real/edge dims passes the verdict (every
// output bit against the oracle on its scalar rows; sentinels, padding,
// inputs and the two poison runs checked too). Also the variant list and its
// registration as backends.
//
// tests/harness already runs the real backends (cpu-model included) over its
// one-change-at-a-time grid against the SIMD oracle; this grid is the full
// product of the axes the blocked decomposition depends on.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "fuzz/backends/backend.h"
#include "ops/fused_q/cpu_model/cpu_model.h"
#include "fuzz/verdict/verdict.h"
#include "tests/fuzz/model_cases.h"

namespace qcheck::test {
namespace {

TEST(CpuModelVariants, CorrectModelFirstThenEveryVariantOnceWithUniqueNames) {
  const auto& list = planted_cpu_bugs();
  ASSERT_FALSE(list.empty());
  EXPECT_EQ(list[0].bug, PlantedCpuBug::kNone);
  EXPECT_STREQ(list[0].backend_suffix, "");
  EXPECT_FALSE(list[0].is_a_bug);
  std::set<int> bugs;
  std::set<std::string> suffixes;
  for (const PlantedCpuBugInfo& info : list) {
    EXPECT_TRUE(bugs.insert(static_cast<int>(info.bug)).second) << info.backend_suffix;
    EXPECT_TRUE(suffixes.insert(info.backend_suffix).second) << info.backend_suffix;
    EXPECT_NE(std::string(info.description), "");
    if (info.bug == PlantedCpuBug::kNone) continue;
    const std::string suffix = info.backend_suffix;
    EXPECT_NE(suffix, "");
    // Planted bugs are named "bug-..."; harmless twins are not.
    EXPECT_EQ(suffix.rfind("bug-", 0) == 0, info.is_a_bug) << suffix;
  }
  // Every enumerator from kNone to kMqaGridSizedByNi is listed.
  EXPECT_EQ(list.size(), static_cast<size_t>(PlantedCpuBug::kNanRowScaleNan) + 1);
  EXPECT_EQ(suffixes.count("copy-when-aliased"), 1u);
}

// Each variant is a backend "cpu-model[-suffix]" whose planted_bug flag is
// the variant's is_a_bug, so the verdict tools expect the right outcome.
TEST(CpuModelVariants, EveryVariantIsARegisteredBackend) {
  int model_backends = 0;
  for (const Backend& b : backends()) model_backends += b.name.rfind("cpu-model", 0) == 0;
  EXPECT_EQ(model_backends, static_cast<int>(planted_cpu_bugs().size()));
  for (const PlantedCpuBugInfo& info : planted_cpu_bugs()) {
    const Backend* b = find_backend(model_backend_name(info.backend_suffix));
    ASSERT_NE(b, nullptr) << model_backend_name(info.backend_suffix);
    EXPECT_EQ(b->planted_bug, info.is_a_bug) << b->name;
    EXPECT_EQ(b->domain(model_base_case()), "") << b->name;
  }
}

TEST(CpuModelGrid, CoversTheAxesItPromises) {
  const std::vector<Case> grid = model_grid();
  // The product of the axes, then the three aimed recipes once per query mode.
  EXPECT_EQ(grid.size(), 5u * 4 * 3 * 4 * 3 * 2 + 3 * 4);
  std::set<int64_t> tokens;
  std::set<std::string> seen;
  std::map<ValueRecipe, int> recipes;
  for (const Case& c : grid) {
    ++recipes[c.values];
    ASSERT_EQ(validate_case(c), "") << describe(c);
    tokens.insert(c.num_tokens);
    seen.insert(name_of(c.query_path));
    if (c.alias == AliasMode::kExactFront) seen.insert("alias");
    seen.insert(c.has_indexer ? name_of(c.indexer_rope) : "no indexer");
    if (c.mqa_cache_dtype == FloatType::kBf16) seen.insert("bf16 mqa cache");
    if (c.indexer_cache_dtype == FloatType::kBf16) seen.insert("bf16 indexer cache");
    if (c.weights_dtype == FloatType::kBf16) seen.insert("bf16 weights in");
    if (c.weights_out_dtype == FloatType::kBf16) seen.insert("bf16 weights out");
    if (c.index_q_layout == Layout::kPaddedRows) seen.insert("padded rows");
    if (c.q_pe_layout == Layout::kWideRowView) seen.insert("wide-row q_pe");
    if (c.ql_nope_layout == Layout::kHeadMajor) seen.insert("head-major ql_nope");
    if (c.weights_column_stride > 1) seen.insert("column stride");
    if (c.q_scale_bits == kQScale037 && c.query_path == QueryPath::kFp8Packed) seen.insert("0.37");
    if (c.has_indexer && c.head_scale_bits != default_head_scale_bits(c.indexer_heads)) {
      seen.insert("head_scale argument");
    }
  }
  EXPECT_EQ(tokens, (std::set<int64_t>{1, 15, 16, 17, 33}));
  EXPECT_EQ(seen.size(), 3u + 1 + 3 + 4 + 4 + 1 + 1) << ::testing::PrintToString(seen);
  for (ValueRecipe r : {ValueRecipe::kNanRows, ValueRecipe::kContraction, ValueRecipe::kTies}) EXPECT_EQ(recipes[r], 4);
  for (const Case& c : real_and_edge_dims()) EXPECT_EQ(validate_case(c), "") << describe(c);
}

// Every case passes: one full report for the first failure is enough.
void expect_passes(const std::string& backend, const std::vector<Case>& cases) {
  int passed = 0;
  for (const Case& c : cases) {
    const Verdict v = verdict_of(backend, c);
    ASSERT_TRUE(v.passed()) << verdict_text(v, c);
    ++passed;
  }
  EXPECT_EQ(passed, static_cast<int>(cases.size()));
}

TEST(CpuModel, CorrectModelPassesTheGrid) { expect_passes("cpu-model", model_grid()); }

TEST(CpuModel, CorrectModelPassesRealAndEdgeDims) {
  expect_passes("cpu-model", real_and_edge_dims());
}

TEST(CpuModel, HarmlessTwinPassesTheGridAndDims) {
  expect_passes("cpu-model-copy-when-aliased", model_grid());
  expect_passes("cpu-model-copy-when-aliased", real_and_edge_dims());
}

// Rows aimed at the UE8M0 band on every indexer style and weights dtype: the
// correct model keeps the exact ceiling.
TEST(CpuModel, CorrectModelPassesScaleBandRows) {
  std::vector<Case> cases;
  for (RopeStyle style : {RopeStyle::kNeox, RopeStyle::kInterleaved}) {
    for (FloatType weights : {FloatType::kF32, FloatType::kBf16}) {
      cases.push_back(model_case([&](Case& c) {
        c.values = ValueRecipe::kScaleBand;
        c.indexer_rope = style;
        c.weights_dtype = c.weights_out_dtype = weights;
        c.indexer_heads = 5;
        c.seed = 500 + cases.size();
      }));
    }
  }
  expect_passes("cpu-model", cases);
}

// T = 0: nothing to write, so no variant may touch a byte (the verdict
// checks every sentinel, padding and poison byte).
TEST(CpuModel, ZeroTokensPassesForEveryVariant) {
  for (QueryPath path :
       {QueryPath::kFp8Packed, QueryPath::kBf16Packed, QueryPath::kBf16Separate}) {
    const Case c = model_case([&](Case& c) {
      c.num_tokens = 0;
      c.query_path = path;
    });
    for (const PlantedCpuBugInfo& info : planted_cpu_bugs()) {
      const Verdict v = verdict_of(model_backend_name(info.backend_suffix), c);
      EXPECT_TRUE(v.passed()) << verdict_text(v, c);
    }
  }
}

}  // namespace
}  // namespace qcheck::test
