// How a run ended before any comparison: it ran (ok), the case or launch was
// refused (invalid input), or the backend could not run it (runtime error: a
// CUDA error, no device, a backend outside its domain). Each carries one line.
#pragma once

#include <string>
#include <utility>

namespace qcheck {

enum class OutcomeKind { kOk, kInvalidInput, kRuntimeError };

struct Outcome {
  OutcomeKind kind = OutcomeKind::kOk;
  std::string reason;  // one line; empty when ok

  static Outcome ok() { return {}; }
  static Outcome invalid_input(std::string why) {
    return {OutcomeKind::kInvalidInput, std::move(why)};
  }
  static Outcome runtime_error(std::string why) {
    return {OutcomeKind::kRuntimeError, std::move(why)};
  }
  bool is_ok() const { return kind == OutcomeKind::kOk; }
};

// Process exit codes of the tools: invalid input 2, runtime error 3 (a
// finished run exits 0 on a pass and 1 on a mismatch).
inline int exit_code_of(OutcomeKind kind) {
  return kind == OutcomeKind::kOk ? 0 : kind == OutcomeKind::kInvalidInput ? 2 : 3;
}

inline const char* name_of(OutcomeKind kind) {
  return kind == OutcomeKind::kOk             ? "ok"
         : kind == OutcomeKind::kInvalidInput ? "invalid input"
                                              : "runtime error";
}

}  // namespace qcheck
