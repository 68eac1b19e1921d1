// One fused_k case through a backend and the oracle, judged on every byte of
// its arena: what the fuzz target, the replay and the minimizer all ask. The
// backend is the CPU model of qcheck's CUDA kernel (ops/fused_k/cpu_model)
// with a planted bug or none; the oracle runs under qcheck_fused_k_rules().
#pragma once

#include <cstdint>
#include <string>

#include "ops/fused_k/case/fused_k_case.h"
#include "ops/fused_k/planted/planted.h"

namespace qcheck::fused_k {

struct FusedKVerdict {
  // 0 the bytes agree, 1 they differ, 2 the case is invalid (validation's
  // line), 3 the oracle or the backend refused a valid case.
  int exit_code = 0;
  std::string text;  // "" on a pass, else the one line above
  // What a minimizer must keep: the exit code and, for a difference, the
  // tensor (or gap) of its first differing byte, e.g. "differs mla_cache".
  std::string failure;
};

// `max_arena_bytes` > 0: a case whose arena is larger is not run (exit 2,
// "over the budget").
FusedKVerdict check_fused_k_case(const FusedKCase& c, planted::Bug bug, int64_t max_arena_bytes = 0);

// The planted bug named `backend`: "cpu-model" is kNone, "cpu-model-bug-NAME"
// the bug NAME. False (and *bug untouched) for any other name.
bool backend_bug(const std::string& backend, planted::Bug* bug);
std::string backend_names();  // "cpu-model, cpu-model-bug-..." for messages

}  // namespace qcheck::fused_k
