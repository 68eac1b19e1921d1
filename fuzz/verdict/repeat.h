// Runs of one backend on the same inputs, compared with each other: a
// deterministic kernel writes the same bytes every time. Used by
// qcheck-replay --repeat (the gate's "corpus 1000 times, 0 differences") and
// by the minimizer's determinism gate (a race must not be shrunk as if it
// were a fixed bug).
#pragma once

#include "fuzz/backends/backend.h"
#include "fuzz/case/case.h"
#include "fuzz/case/outcome.h"
#include "fuzz/verdict/report.h"
#include "numerics/profile.h"

namespace qcheck {

struct RepeatResult {
  Outcome outcome;            // not ok: a run failed (the runs stopped there) or the case is invalid
  int runs = 0;               // runs made
  int differing_runs = 0;     // runs whose bytes differ from the first run's
  int first_differing = -1;   // index of the first such run (the first run is 0)
  // The first run (as expected) against the first differing run (as got):
  // where and how they differ, element by element.
  Report difference;
};

// `runs` >= 1 runs of `backend` on one tensor set built from the valid case
// `c` with Poison::kA (every run starts from the same bytes); every byte of
// every buffer (outputs, inputs, guards) is compared with the first run's.
RepeatResult repeat_backend(const Case& c, const Backend& backend, const Profile& profile, int runs);

}  // namespace qcheck
