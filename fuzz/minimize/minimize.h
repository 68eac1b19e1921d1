// The minimizer: shrinks a failing case to a small one that fails the same
// way. It works on the decoded Case, never on bytes (DESIGN.md, after
// Hypothesis' shrinker): every candidate is a valid case, derived from the
// best so far by one simplification (fuzz/minimize/shrink.h), and is kept only when
// the backend still fails with the same primary failure, so the result
// cannot slip to another bug. Passes repeat until none changes the case (a
// fixpoint) or the time budget ends; then an explain phase changes each
// field of the result alone and records whether the failure stays.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fuzz/case/case.h"
#include "fuzz/verdict/verdict.h"

namespace qcheck {

// What one verdict showed, reduced to what must stay the same: the exit
// code (0 pass, 1 mismatch, 2 invalid input, 3 runtime error) and the
// primary failure: the primary signature of a mismatch
// ("index_q_fp8/rope part/off-by-one"), or the runtime error's reason with
// its digits masked ("runtime error: ... cudaErrorIllegalAddress ..."), or
// "crash: signal 11" from a process that died.
struct Observation {
  int exit_code = 0;
  std::string failure;  // empty on a pass
  // Every signature of a mismatch's report (the primary among them).
  std::vector<std::string> signatures;

  bool operator==(const Observation& o) const { return exit_code == o.exit_code && failure == o.failure; }
  bool operator!=(const Observation& o) const { return !(*this == o); }
  std::string text() const;  // "pass", "mismatch index_q_fp8/...", "runtime error: ..."
};

Observation observe(const Verdict& verdict);

// Runs the backend on a case and says what it showed. In process
// (run_verdict) for kernels that return; in a fresh process for one whose
// failure ends the process or its CUDA context (the tool provides that).
using Evaluate = std::function<Observation(const Case&)>;
Evaluate evaluate_in_process(const Backend& backend, const VerdictOptions& options);

struct MinimizeOptions {
  double budget_seconds = 60;  // wall time for the shrink passes and the explain phase together
  bool explain = true;
  std::function<void(const std::string&)> log;  // one line per accepted step, when set
  // "" when the kernel supports a candidate, else why not (its domain,
  // Backend::outside): a candidate outside is never evaluated.
  std::function<std::string(const Case&)> outside;
  // Moves a case inside the domain (fit_to_domain, Backend::fit): a
  // candidate outside is repaired and tried when it is still smaller.
  std::function<void(Case&)> fit;
};

// One field of the result changed alone: does the failure stay?
struct FieldEffect {
  std::string field;    // "T", "H", "query_path", "edits[2]", ...
  std::string change;   // "T 1 -> 2"
  bool matters = false;  // the changed case no longer fails the same way
  Observation observed;  // what the changed case showed
};

struct MinimizeResult {
  Case original, minimized;
  Observation original_failure;   // what the original showed
  Observation target;             // the failure the result keeps (the original's, or where it moved)
  std::vector<std::string> steps;  // accepted simplifications, in order
  std::vector<FieldEffect> explain;
  int evaluations = 0;            // verdicts run (each runs the oracle once)
  int candidates = 0;             // simplifications tried (valid and different)
  int outside_domain = 0;         // candidates left untried: outside the kernel's domain, even repaired
  double seconds = 0;             // shrinking and explaining
  bool budget_exhausted = false;  // stopped before the fixpoint, or before every field was explained
  int64_t elements_before = 0, elements_after = 0;  // tensor elements of the two cases
};

// The original must fail (the caller checked: observe(...) is not a pass).
MinimizeResult minimize(const Case& original, const Observation& target, const Evaluate& evaluate,
                        const MinimizeOptions& options = {});

// The determinism gate's rule for a case whose runs of the same inputs
// wrote different bytes: it is minimized when its failure does not depend
// on that, that is when the original, run again, fails as `first` every
// time (`again`) and the failure is not runs-that-differ (a race is not a
// fixed bug). A kernel that writes past a tensor writes there what it read
// past another, and its out-of-bounds writes race with the in-bounds writes
// of the buffers it lands in: its bytes differ from run to run, its failure
// (the guard bytes it overwrites) does not.
bool failure_holds_across_runs(const Observation& first, const std::vector<Observation>& again);

// Elements of every tensor of a valid case, inputs and outputs.
int64_t tensor_elements(const Case& c);

}  // namespace qcheck
