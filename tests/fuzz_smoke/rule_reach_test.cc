// The value recipes aimed at rules that only some values decide
// (fuzz/buffers/value_rows.h: nan-rows, contraction, ties) and the counts of
// ops/fused_q/search/rule_reach.h: the oracle with a wrong variant of each rule
// against the oracle with the right one, so a recipe that stopped reaching
// its rule fails here. Plain unit tests (label cpu).
#include <gtest/gtest.h>

#include <string>

#include "fuzz/case/case_names.h"
#include "fuzz/mutator/case_mutator.h"
#include "ops/fused_q/search/rule_reach.h"

namespace qcheck::fuzzing {
namespace {

// The index of a rule's variant in reach_rules().
size_t rule(const std::string& name, const std::string& variant) {
  for (size_t i = 0; i < reach_rules().size(); ++i) {
    if (reach_rules()[i].name == name && reach_rules()[i].variant == variant) return i;
  }
  ADD_FAILURE() << "no rule " << name << " / " << variant;
  return 0;
}

ReachCounts count(int cases, uint64_t seed, const SizeBudget& budget, bool force, ValueRecipe recipe) {
  GeneratedCases generated(seed, budget);
  ReachCounts total;
  for (int i = 0; i < cases; ++i) {
    Case c = generated.next();
    if (force) c.values = recipe;
    total.add(count_reach(c));
  }
  return total;
}

double per_applicable_case(const ReachCounts& k, size_t i) {
  return k.applicable[i] > 0 ? double(k.decided_elements[i]) / double(k.applicable[i]) : 0.0;
}

const char* const kSites[] = {"indexer contraction, minus terms", "indexer contraction, plus terms",
                              "MQA fp8 r1 contraction", "MQA fp8 r2 contraction", "MQA bf16 r1 contraction",
                              "MQA bf16 r2 contraction"};

// Every case of the contraction recipe with an f32 cache: each pair decides
// one element, so every site decides many outputs per case it applies to.
TEST(RuleReach, ContractionRecipeDecidesEverySite) {
  const ReachCounts k = count(300, 11, kUsualBudget, true, ValueRecipe::kContraction);
  for (const char* site : kSites) {
    for (const char* variant : {"unfused", "sin product fused"}) {
      const size_t i = rule(site, variant);
      EXPECT_GT(k.applicable[i], 20) << site;
      EXPECT_GE(per_applicable_case(k, i), 30.0) << site << " / " << variant << "\n" << reach_table(k);
    }
  }
}

TEST(RuleReach, TiesRecipeDecidesEveryPath) {
  const ReachCounts k = count(300, 12, kUsualBudget, true, ValueRecipe::kTies);
  for (const char* path : {"e4m3 ties, indexer codes", "e4m3 ties, fp8 query_out", "bf16 ties, RoPE'd q_pe"}) {
    const size_t i = rule(path, "ties away from zero");
    EXPECT_GT(k.applicable[i], 20) << path;
    EXPECT_GE(per_applicable_case(k, i), 30.0) << path << "\n" << reach_table(k);
  }
}

TEST(RuleReach, NanRowsRecipeHoldsAllNanRows) {
  const ReachCounts k = count(300, 13, kUsualBudget, true, ValueRecipe::kNanRows);
  EXPECT_GT(k.indexer_cases, 50);
  EXPECT_GT(k.cases_with_all_nan_row * 2, k.indexer_cases) << reach_table(k);
  const size_t i = rule("all-NaN indexer row's scale", "NaN, not the floor's");
  EXPECT_GT(k.decided_cases[i] * 2, k.applicable[i]) << reach_table(k);
}

// The generator and the mutator as the fuzz loops run them (1,000 usual
// cases, no recipe forced): every contraction site decides at least 10
// outputs per case it applies to, all-NaN rows come in at least 1 % of the
// indexer cases, and ties decide outputs on every path.
TEST(RuleReach, GeneratedCasesReachEveryRule) {
  const ReachCounts k = count(1000, 1, kUsualBudget, false, ValueRecipe::kNormal);
  for (const char* site : kSites) {
    for (const char* variant : {"unfused", "sin product fused"}) {
      EXPECT_GE(per_applicable_case(k, rule(site, variant)), 10.0) << site << " / " << variant << "\n"
                                                                   << reach_table(k);
    }
  }
  EXPECT_GE(k.cases_with_all_nan_row * 100, k.indexer_cases) << reach_table(k);
  for (const char* path : {"e4m3 ties, indexer codes", "e4m3 ties, fp8 query_out", "bf16 ties, RoPE'd q_pe"}) {
    EXPECT_GT(k.decided_cases[rule(path, "ties away from zero")], 10) << path << "\n" << reach_table(k);
  }
}

}  // namespace
}  // namespace qcheck::fuzzing
