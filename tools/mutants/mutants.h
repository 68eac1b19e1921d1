// qcheck-mutants' measurements and reports: for each planted bug, the
// in-process fuzz loop (fuzz/mutator/bin_fuzz.h) from an empty corpus with
// fixed seeds until its first finding, the minimized size of that finding,
// and whether the fixed-grid baseline (ops/fused_q/mutants/baseline.h) catches it; the
// harmless twins and the correct kernels must give no finding.
#pragma once

#include <string>
#include <vector>

#include "fuzz/backends/backend.h"
#include "fuzz/mutator/bin_fuzz.h"
#include "ops/fused_q/mutants/baseline.h"
#include "ops/fused_q/mutants/equivalence.h"

namespace qcheck::mutants {

enum class Kind { kBug, kTwin, kCorrect };

struct SeedRun {
  uint64_t seed = 0;
  fuzzing::BinFuzzResult fuzz;
  bool minimized = false;
  Case smallest;              // the minimized finding
  int64_t smallest_bytes = 0;  // its tensors, guards included
};

struct MutantResult {
  std::string backend, description, source_file;
  Kind kind = Kind::kBug;
  std::vector<SeedRun> runs;
  bool baseline_run = false;
  BaselineResult baseline;
  // A bug the fuzzer missed that has an equivalence check (equivalence.h):
  // the covering cases on it, and on the check's witness.
  bool equivalence_run = false;
  EquivalenceResult equivalence, witness;
  std::string witness_name;

  int found() const;
  // The covering cases all agree with the oracle and the witness is caught.
  bool proven_equivalent() const;
  // A bug: found in every seed or proven equivalent; a twin or a correct
  // kernel: found in none.
  bool as_expected() const;
  double median_seconds() const;  // over the seeds that found it (-1: none)
};

// Over the bugs the fuzzer found: the slowest seed's time to find, and the
// median of each bug's median time (0 when none was found).
struct FindTimes {
  double slowest = 0, median = 0;
};
FindTimes find_times(const std::vector<MutantResult>& results);

// The markdown table (one row per backend, the baseline's kill rate under it).
std::string markdown(const std::vector<MutantResult>& results);
std::string csv(const std::vector<MutantResult>& results);
// Stryker's mutation-testing-report JSON (schema version 2): one mutant per
// planted change, Killed or Survived; twins, correct kernels and bugs
// proven equivalent Ignored with the reason (the schema has no status for a
// change that must pass, nor one named Equivalent).
std::string stryker_json(const std::vector<MutantResult>& results);
// JUnit XML (the shape python/qcheck/reports/junit.py writes, python/tests/junit.xsd):
// one testcase per backend. A bug passes when every seed found it, fails
// when a seed missed it, and is skipped when proven equivalent; a twin or a
// correct kernel passes without a finding and fails on one.
std::string junit_xml(const std::vector<MutantResult>& results);

}  // namespace qcheck::mutants
