// How often generated cases reach each numeric rule that only some values
// decide: for a case, the output elements where a wrong variant of the rule
// changes the output, the oracle (or the CPU model) with the variant against
// the oracle with the right rule. A variant is a profile change (a
// contraction pattern, the amax NaN rule) or a CPU-model variant
// (ops/fused_q/cpu_model/cpu_model.h: ties away from zero, an all-NaN row's scale).
// qcheck-rules prints the counts over N generated cases; tests assert that
// the recipes aimed at a rule make it decide outputs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/random/prng.h"
#include "fuzz/case/case.h"
#include "fuzz/mutator/case_mutator.h"

namespace qcheck::fuzzing {

// One rule and its wrong variant.
struct ReachRule {
  std::string name;     // "indexer contraction, minus terms"
  std::string variant;  // "unfused"
};
const std::vector<ReachRule>& reach_rules();

struct ReachCounts {
  int64_t cases = 0;          // cases counted
  int64_t indexer_cases = 0;  // of them with the indexer
  int64_t cases_with_all_nan_row = 0;  // indexer cases with an index_q row that is all NaN
  int64_t all_nan_rows = 0;
  // Per reach_rules() entry: cases where the rule applies (its path and
  // task run), cases where it decided an output, output elements it decided.
  std::vector<int64_t> applicable, decided_cases, decided_elements;

  ReachCounts();
  void add(const ReachCounts& other);
};

// Counts one valid case under profile qcheck (the CPU model follows it).
ReachCounts count_reach(Case c);

// The cases a fuzz loop generates from nothing: a seed case, then each case
// a mutation of the one before (as libFuzzer mutates its last input), under
// `budget`'s usual sizes.
class GeneratedCases {
 public:
  GeneratedCases(uint64_t seed, const SizeBudget& budget);
  Case next();

 private:
  Xoshiro256 rng_;
  SizeBudget budget_;
  Case last_;
  bool started_ = false;
};

// The table qcheck-rules prints: per rule, the share of cases it applies to,
// the cases it decided, and the elements it decided per case (over all cases
// and over the applicable ones); then the all-NaN rows.
std::string reach_table(const ReachCounts& counts);

}  // namespace qcheck::fuzzing
