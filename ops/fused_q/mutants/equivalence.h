// Proofs that a planted change cannot be seen: where a planted bug survives
// the fuzzer and an argument says it cannot differ from the correct kernel on
// this hardware, a covering comparison with the oracle checks the argument
// (issue: "prove it with the oracle and mark it equivalent instead of
// counting it as missed"). Each check names a witness: a planted bug of the
// same rule on hardware where the rule does show (the CPU model's), which
// the same cases must catch, so the covering set is known to see the change.
#pragma once

#include <string>
#include <vector>

#include "fuzz/backends/backend.h"
#include "fuzz/case/case.h"

namespace qcheck::mutants {

struct EquivalenceCheck {
  std::string backend;   // the planted change the check is for
  std::string witness;   // a bug of the same rule that must be caught
  std::string argument;  // why the change cannot show here
  std::vector<Case> (*cases)();
};

// The check for `backend`, or nullptr when there is none.
const EquivalenceCheck* equivalence_check(const std::string& backend);
const std::vector<EquivalenceCheck>& equivalence_checks();

// Every case where a negative NaN reaches an e4m3 conversion: each of the
// 127 negative bf16 NaN patterns in every element, or half of each row, of
// q_pe, ql_nope and index_q, or negative f32 NaNs in the cos halves of both
// caches; on the fp8 and bf16 packed paths, NeoX and interleaved indexers,
// vector and element loads, q_scale 1 (a multiply) and 0.37 (a division),
// in each of the five configurations a planted-bug plugin runs
// (ops/fused_q/plugins/mutant_config.h). 240 cases of 127 tokens.
std::vector<Case> negative_nan_cases();

struct EquivalenceResult {
  int cases = 0;
  int differ = 0;          // cases whose verdict failed
  std::string first;       // the first failure's signature
};

// Judges every case against the oracle (run_verdict).
EquivalenceResult compare_with_oracle(const Backend& backend, const std::vector<Case>& cases);

}  // namespace qcheck::mutants
