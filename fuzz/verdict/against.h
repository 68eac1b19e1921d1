// Kernel against kernel: two backends on the same case (the same inputs,
// guards and poison), each judged against the oracle (by default under
// auto, which names the profiles it follows), and the outputs of the two
// compared with each other element by element, the first backend's run A
// taking the oracle's place in fuzz/verdict/compare.h. For a new kernel against the
// one it replaces.
#pragma once

#include <string>

#include "fuzz/backends/backend.h"
#include "fuzz/case/case.h"
#include "fuzz/verdict/report.h"
#include "fuzz/verdict/verdict.h"

namespace qcheck {

struct AgainstResult {
  Verdict first, second;
  Report difference;  // "expected" = first's outputs, "got" = second's
  bool compared = false;  // both runs completed (else a verdict says why not)

  // 0 when both ran and their outputs agree bit for bit; else the worst of
  // the verdicts' runtime and input errors, and 1 for a difference.
  int exit_code() const;
};

// options.profile empty: each backend is judged under auto.
AgainstResult run_against(const Case& c, const Backend& first, const Backend& second, VerdictOptions options);

// The header line ("AGAINST a vs b: ..."), both verdicts, the differences.
std::string against_text(const AgainstResult& result, const Case& c);

}  // namespace qcheck
