// Each planted bug of the CPU model differs from the oracle on the launches
// chosen to expose it, in the buffers where it must show, and stays silent on
// every launch where it cannot show (e.g. the tail bug with T % 16 == 0).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <iostream>
#include <ostream>
#include <string>
#include <vector>

#include "fuzz/cpu_model.h"
#include "tests/fuzz/launch_tensors.h"
#include "tests/fuzz/model_vs_oracle.h"

namespace qcheck::test {
namespace {

using Names = std::vector<std::string>;

struct Exposure {
  LaunchSpec spec;
  Names must_differ;  // each of these buffers differs
  Names may_differ;   // these may differ too; no other buffer may
};

struct BugCase {
  PlantedCpuBug bug;
  // False when the launch gives the bug no way to show: it must then match.
  std::function<bool(const LaunchSpec&)> can_show;
  std::vector<Exposure> exposures;
  std::vector<LaunchSpec> silent;  // extra launches where it cannot show
};

LaunchSpec with(std::function<void(LaunchSpec&)> edit) {
  LaunchSpec s;
  edit(s);
  return s;
}

const Names kIndexerOut = {"index_q_fp8", "index_weights_out"};

std::vector<BugCase> bug_cases() {
  std::vector<BugCase> cases;
  cases.push_back(
      {PlantedCpuBug::kTruncatingBf16,
       [](const LaunchSpec& s) {
         return s.path != QueryPath::kFp8Packed ||
                (s.has_indexer && s.weights_out == FloatType::kBf16);
       },
       {{with([](LaunchSpec& s) { s.path = QueryPath::kBf16Packed; }), {"query_out"}, {}},
        {with([](LaunchSpec& s) { s.path = QueryPath::kBf16Separate; s.has_indexer = false; }),
         {"query_out"}, {}},
        {with([](LaunchSpec& s) {
           s.path = QueryPath::kFp8Packed;
           s.weights_out = FloatType::kBf16;
         }),
         {"index_weights_out"}, {}}},
       {with([](LaunchSpec& s) { s.path = QueryPath::kFp8Packed; })}});
  cases.push_back(
      {PlantedCpuBug::kSkipLastTailToken,
       [](const LaunchSpec& s) { return s.tokens % 16 != 0; },
       {{with([](LaunchSpec& s) { s.tokens = 17; }), {"query_out", "index_q_fp8", "index_weights_out"}, {}},
        {with([](LaunchSpec& s) { s.tokens = 1; s.path = QueryPath::kFp8Packed; }),
         {"query_out", "index_q_fp8", "index_weights_out"}, {}},
        {with([](LaunchSpec& s) { s.tokens = 15; s.path = QueryPath::kBf16Separate; s.has_indexer = false; }),
         {"query_out"}, {}}},
       {with([](LaunchSpec& s) { s.tokens = 16; }), with([](LaunchSpec& s) { s.tokens = 48; })}});
  cases.push_back(
      {PlantedCpuBug::kSwappedIndexerRope,
       [](const LaunchSpec& s) { return s.has_indexer && s.rope_dim > 2; },
       {{with([](LaunchSpec& s) { s.indexer_rope = RopeStyle::kNeox; }), {"index_q_fp8"}, {"index_weights_out"}},
        {with([](LaunchSpec& s) { s.indexer_rope = RopeStyle::kInterleaved; }), {"index_q_fp8"},
         {"index_weights_out"}}},
       // With R = 2 NeoX and interleaved are the same rotation.
       {with([](LaunchSpec& s) { s.rope_dim = 2; s.index_dim = 16; }),
        with([](LaunchSpec& s) { s.has_indexer = false; })}});
  cases.push_back(
      {PlantedCpuBug::kLog2fScale,
       [](const LaunchSpec& s) { return s.has_indexer && s.recipe == ValueRecipe::kScaleBand; },
       {{with([](LaunchSpec& s) { s.recipe = ValueRecipe::kScaleBand; }), kIndexerOut, {}},
        {with([](LaunchSpec& s) {
           s.recipe = ValueRecipe::kScaleBand;
           s.indexer_rope = RopeStyle::kInterleaved;
           s.weights_in = s.weights_out = FloatType::kBf16;
         }),
         kIndexerOut, {}}},
       // Exact powers of two: log2f is exact there and both ceilings agree.
       {with([](LaunchSpec& s) { s.recipe = ValueRecipe::kScalePow2; }),
        with([](LaunchSpec& s) { s.recipe = ValueRecipe::kScalePow2; s.indexer_rope = RopeStyle::kInterleaved; })}});
  cases.push_back(
      {PlantedCpuBug::kSkipCopyUnaliased,
       [](const LaunchSpec& s) { return s.path == QueryPath::kBf16Packed && !s.alias; },
       {{with([](LaunchSpec& s) { s.path = QueryPath::kBf16Packed; }), {"query_out"}, {}},
        {with([](LaunchSpec& s) {
           s.path = QueryPath::kBf16Packed;
           s.input_layout = Layout::kHeadMajor;
           s.tokens = 1;
         }),
         {"query_out"}, {}}},
       {with([](LaunchSpec& s) { s.path = QueryPath::kBf16Packed; s.alias = true; })}});
  cases.push_back(
      {PlantedCpuBug::kUnitWeightsColumn,
       [](const LaunchSpec& s) {
         // The view's real column stride (a head-major layout has T there).
         return s.has_indexer && s.indexer_heads > 1 &&
                LaunchTensors(s).args().index_weights.head_stride != 1;
       },
       {{with([](LaunchSpec& s) { s.weights_column_stride = 2; }), {"index_weights_out"}, {}},
        {with([](LaunchSpec& s) {
           s.weights_column_stride = 3;
           s.weights_in = FloatType::kBf16;
           s.input_layout = Layout::kPadded;
         }),
         {"index_weights_out"}, {}}},
       // One indexer head: only column 0 is read, where both strides agree.
       {with([](LaunchSpec& s) { s.weights_column_stride = 2; s.indexer_heads = 1; })}});
  return cases;
}

const BugCase* find_case(const std::vector<BugCase>& cases, PlantedCpuBug bug) {
  for (const BugCase& c : cases) {
    if (c.bug == bug) return &c;
  }
  return nullptr;
}

bool contains(const Names& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

class PlantedBugTest : public testing::TestWithParam<PlantedCpuBugInfo> {};

TEST_P(PlantedBugTest, DiffersOnTheLaunchesChosenToExposeIt) {
  const auto cases = bug_cases();
  const BugCase* c = find_case(cases, GetParam().bug);
  ASSERT_NE(c, nullptr) << "no exposing launches listed for " << GetParam().backend_suffix;
  ASSERT_FALSE(c->exposures.empty());
  for (const Exposure& e : c->exposures) {
    ASSERT_TRUE(c->can_show(e.spec)) << e.spec.describe();
    const ModelVsOracle r = run_model_and_oracle(e.spec, c->bug);
    ASSERT_EQ(r.oracle_error, "") << e.spec.describe();
    EXPECT_EQ(r.model_error, "") << e.spec.describe();
    for (const std::string& name : e.must_differ) {
      EXPECT_TRUE(contains(r.differing, name)) << name << " should differ: " << e.spec.describe();
    }
    for (const std::string& name : r.differing) {
      EXPECT_TRUE(contains(e.must_differ, name) || contains(e.may_differ, name))
          << name << " should not differ: " << e.spec.describe() << "\n  " << r.detail;
    }
  }
}

TEST_P(PlantedBugTest, SilentWhereItCannotShow) {
  const auto cases = bug_cases();
  const BugCase* c = find_case(cases, GetParam().bug);
  ASSERT_NE(c, nullptr);
  std::vector<LaunchSpec> launches = covering_grid();
  const size_t grid_size = launches.size();
  for (const LaunchSpec& s : shape_launches()) launches.push_back(s);
  for (const LaunchSpec& s : c->silent) {
    EXPECT_FALSE(c->can_show(s)) << s.describe();
    launches.push_back(s);
  }
  int silent = 0, could_show = 0, showed = 0;
  for (size_t i = 0; i < launches.size(); ++i) {
    const LaunchSpec& spec = launches[i];
    const ModelVsOracle r = run_model_and_oracle(spec, c->bug);
    ASSERT_EQ(r.oracle_error, "") << spec.describe();
    ASSERT_EQ(r.model_error, "") << spec.describe();
    if (c->can_show(spec)) {
      if (i < grid_size) {
        ++could_show;
        showed += r.differing.empty() ? 0 : 1;
      }
      continue;
    }
    ++silent;
    EXPECT_TRUE(r.differing.empty()) << spec.describe() << "\n  " << r.detail;
  }
  std::cout << "[ info     ] " << GetParam().backend_suffix << ": silent on " << silent
            << " launches where it cannot show; differs on " << showed << " of " << could_show
            << " grid launches where it can\n";
  EXPECT_GT(silent, 0);
  if (could_show > 0) {
    EXPECT_GT(showed, 0);
  }
}

std::vector<PlantedCpuBugInfo> planted_bugs_only() {
  std::vector<PlantedCpuBugInfo> bugs;
  for (const PlantedCpuBugInfo& info : planted_cpu_bugs()) {
    if (info.is_a_bug) bugs.push_back(info);
  }
  return bugs;
}

std::string test_name(const testing::TestParamInfo<PlantedCpuBugInfo>& info) {
  std::string name = info.param.backend_suffix;
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(CpuModel, PlantedBugTest, testing::ValuesIn(planted_bugs_only()), test_name);

}  // namespace
}  // namespace qcheck::test

namespace qcheck {
// Names the variant in gtest's messages instead of dumping its bytes.
void PrintTo(const PlantedCpuBugInfo& info, std::ostream* os) { *os << info.backend_suffix; }
}  // namespace qcheck
