// An in-process fuzz loop that stops at the first finding: the structure-
// aware mutator (case_mutator.h) over a pool of kept cases, a case kept when
// it reaches a semantic bin no earlier case reached (semantic_bins.h), every
// case judged by run_verdict. The same feedback the fused_q target gives
// libFuzzer, without libFuzzer: a fixed seed gives the same cases in the same
// order on every machine, so qcheck-mutants' time-to-find figures are
// reproducible and need no fork, no corpus folder and no sanitizer runtime.
// (The Python front end's qcheck.fuzz is the same loop for kernels called
// from Python.)
#pragma once

#include <cstdint>
#include <string>

#include "fuzz/backends/backend.h"
#include "fuzz/case/case.h"
#include "fuzz/mutator/case_mutator.h"
#include "fuzz/verdict/verdict.h"

namespace qcheck::fuzzing {

struct BinFuzzOptions {
  uint64_t seed = 1;
  int64_t max_executions = 100000;
  double max_seconds = 60;
  SizeBudget budget = kTinyBudget;
  VerdictOptions verdict;  // (its profile empty: the backend's)
};

struct BinFuzzResult {
  bool found = false;
  int64_t executions = 0;  // cases judged, the finding's included
  double seconds = 0;      // to the finding (or the whole budget)
  Case finding;            // when found
  Verdict verdict;         // the finding's
  std::string failure;     // its primary signature, or "runtime error: ..."
  int bins_reached = 0;
};

// Runs until the first mismatch or runtime error, or until a budget ends.
// Invalid cases (none should come from the mutator) are skipped uncounted.
BinFuzzResult fuzz_until_finding(const Backend& backend, const BinFuzzOptions& options);

}  // namespace qcheck::fuzzing
