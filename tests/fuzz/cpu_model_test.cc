// The correct CPU model (and its harmless twin) against the oracle, byte for
// byte, over a covering grid of launches; its variant list; its validation.
#include <gtest/gtest.h>

#include <iostream>
#include <set>
#include <string>

#include "fuzz/cpu_model.h"
#include "reference/fused_q_oracle.h"
#include "reference/profile.h"
#include "reference/row_ops.h"
#include "tests/fuzz/launch_tensors.h"
#include "tests/fuzz/model_vs_oracle.h"

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
    const std::string suffix = info.backend_suffix;
    if (info.bug == PlantedCpuBug::kNone) continue;
    EXPECT_NE(suffix, "");
    // Planted bugs are named "bug-..."; harmless twins are not.
    EXPECT_EQ(suffix.rfind("bug-", 0) == 0, info.is_a_bug) << suffix;
  }
  // Every enumerator from kNone to kUnitWeightsColumn is listed.
  EXPECT_EQ(list.size(), static_cast<size_t>(PlantedCpuBug::kUnitWeightsColumn) + 1);
  for (const PlantedCpuBugInfo& info : list) {
    if (info.bug == PlantedCpuBug::kCopyWhenAliased) {
      EXPECT_FALSE(info.is_a_bug);
    }
  }
}

// The model gives the oracle's bytes on every launch of the grid: every
// buffer, inputs and view padding included, is compared.
void expect_same_as_oracle(const std::vector<LaunchSpec>& launches, PlantedCpuBug bug) {
  int checked = 0;
  for (const LaunchSpec& spec : launches) {
    const ModelVsOracle r = run_model_and_oracle(spec, bug);
    ASSERT_EQ(r.oracle_error, "") << spec.describe();
    EXPECT_EQ(r.model_error, "") << spec.describe();
    EXPECT_TRUE(r.differing.empty()) << spec.describe() << "\n  " << r.detail;
    if (!r.differing.empty()) return;  // one full report is enough
    ++checked;
  }
  std::cout << "[ info     ] " << checked << " launches identical to the oracle\n";
  EXPECT_GT(checked, 0);
}

TEST(CpuModel, CorrectModelMatchesOracleOnCoveringGrid) {
  const auto grid = covering_grid();
  EXPECT_EQ(grid.size(), 5u * 4 * 3 * 4 * 3 * 2);
  expect_same_as_oracle(grid, PlantedCpuBug::kNone);
}

TEST(CpuModel, CorrectModelMatchesOracleOnRealAndEdgeShapes) {
  expect_same_as_oracle(shape_launches(), PlantedCpuBug::kNone);
}

TEST(CpuModel, HarmlessTwinMatchesOracleOnCoveringGridAndShapes) {
  expect_same_as_oracle(covering_grid(), PlantedCpuBug::kCopyWhenAliased);
  expect_same_as_oracle(shape_launches(), PlantedCpuBug::kCopyWhenAliased);
}

// Rows aimed at the UE8M0 scale band (and at exact powers of two): the
// correct model still matches the oracle's exact ceiling.
TEST(CpuModel, CorrectModelMatchesOracleOnScaleBandRows) {
  std::vector<LaunchSpec> launches;
  for (ValueRecipe recipe : {ValueRecipe::kScaleBand, ValueRecipe::kScalePow2}) {
    for (RopeStyle style : {RopeStyle::kNeox, RopeStyle::kInterleaved}) {
      for (FloatType weights : {FloatType::kF32, FloatType::kBf16}) {
        LaunchSpec s;
        s.recipe = recipe;
        s.indexer_rope = style;
        s.weights_in = weights;
        s.weights_out = weights;
        s.indexer_heads = 5;
        s.seed = launches.size() + 500;
        launches.push_back(s);
      }
    }
  }
  expect_same_as_oracle(launches, PlantedCpuBug::kNone);
}

TEST(CpuModel, ZeroTokensIsANoOpForEveryVariant) {
  LaunchSpec spec;
  spec.tokens = 0;
  for (const PlantedCpuBugInfo& info : planted_cpu_bugs()) {
    LaunchTensors untouched(spec);
    LaunchTensors run(spec);
    EXPECT_EQ(run_blocked_model(run.args(), info.bug), "") << info.backend_suffix;
    EXPECT_EQ(compare_buffers(untouched, run), "") << info.backend_suffix;
  }
}

// Each invalid launch is refused by every variant with the oracle's message
// (naming the field and the limit), before anything is written.
TEST(CpuModel, RefusesInvalidLaunchesWithTheOracleMessage) {
  struct Breakage {
    const char* what;
    void (*apply)(FusedQArgs&);
  };
  const Breakage breakages[] = {
      {"position outside the cache", [](FusedQArgs& a) { a.mqa_cache.rows = 1; }},
      {"odd rope_dim", [](FusedQArgs& a) { a.rope_dim = 15; }},
      {"negative num_tokens", [](FusedQArgs& a) { a.num_tokens = -1; }},
      {"null q_pe", [](FusedQArgs& a) { a.q_pe.data = nullptr; }},
      {"q_scale zero on fp8", [](FusedQArgs& a) { a.q_scale_bits = 0; }},
      {"outputs overlap", [](FusedQArgs& a) { a.index_q_fp8.data = a.query_out.data; }},
      {"input overlaps output", [](FusedQArgs& a) { a.q_pe.data = a.query_out.data; }},
      {"ql_nope overlaps with other strides",
       [](FusedQArgs& a) {
         a.ql_nope = {a.query_out.data, a.query_out.token_stride, a.query_out.head_stride + 1};
       }},
      {"query_out overlaps itself", [](FusedQArgs& a) { a.query_out.head_stride = 1; }},
  };
  for (QueryPath path : {QueryPath::kFp8Packed, QueryPath::kBf16Packed}) {
    LaunchSpec spec;
    spec.path = path;
    for (const Breakage& breakage : breakages) {
      LaunchTensors reference_set(spec);
      breakage.apply(reference_set.args());
      const std::string oracle_error =
          run_fused_q_oracle(reference_set.args(), qcheck_profile(), scalar_row_ops());
      if (path != QueryPath::kFp8Packed && std::string(breakage.what) == "q_scale zero on fp8") {
        EXPECT_EQ(oracle_error, "");  // q_scale is not read off the fp8 path
        continue;
      }
      ASSERT_NE(oracle_error, "") << breakage.what;
      for (const PlantedCpuBugInfo& info : planted_cpu_bugs()) {
        LaunchTensors untouched(spec);
        LaunchTensors run(spec);
        breakage.apply(run.args());
        EXPECT_EQ(run_blocked_model(run.args(), info.bug), oracle_error)
            << breakage.what << ", variant " << info.backend_suffix;
        EXPECT_EQ(compare_buffers(untouched, run), "") << breakage.what;
      }
    }
  }
}

}  // namespace
}  // namespace qcheck::test
