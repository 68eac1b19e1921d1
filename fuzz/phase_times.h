// Where the time of a verdict goes, phase by phase, summed over many
// executions: the fuzz target prints it at exit when asked (--phase-times),
// so a slow campaign on a GPU host can be explained without a profiler
// there. Costs two clock reads per phase when on, nothing when off.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace qcheck {

enum class Phase : int { kDecode, kInputs, kOracle, kBackendA, kBackendB, kCompare, kBins, kCount };

const char* name_of(Phase phase);

struct PhaseTimes {
  int64_t nanoseconds[static_cast<int>(Phase::kCount)] = {};
  uint64_t executions = 0;

  void add(Phase phase, int64_t ns) { nanoseconds[static_cast<int>(phase)] += ns; }
  // Time spent in `inner` while `outer` was being timed: counted once, in
  // `inner`.
  void move(Phase outer, Phase inner, int64_t ns) {
    add(outer, -ns);
    add(inner, ns);
  }
  // A table: per phase the microseconds per execution and the share.
  std::string text() const;
};

// Adds the time from construction to destruction to `phase`; does nothing
// when `times` is null.
class PhaseTimer {
 public:
  PhaseTimer(PhaseTimes* times, Phase phase) : times_(times), phase_(phase) {
    if (times_ != nullptr) start_ = std::chrono::steady_clock::now();
  }
  ~PhaseTimer() {
    if (times_ != nullptr) times_->add(phase_, elapsed_ns());
  }
  int64_t elapsed_ns() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_).count();
  }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  PhaseTimes* times_;
  Phase phase_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace qcheck
