// Where the time of a verdict goes, phase by phase, summed over many
// executions: the fuzz target prints it at exit when asked (--phase-times),
// so a slow campaign on a GPU host can be explained without a profiler
// there. Costs two clock reads per phase when on, nothing when off.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "fuzz/buffers/input_times.h"

namespace qcheck {

enum class Phase : int { kDecode, kInputs, kOracle, kBackendA, kBackendB, kCompare, kBins, kCount };

const char* name_of(Phase phase);

struct PhaseTimes {
  int64_t nanoseconds[static_cast<int>(Phase::kCount)] = {};
  uint64_t executions = 0;
  InputTimes inputs;  // the inputs phase, split

  void add(Phase phase, int64_t ns) { nanoseconds[static_cast<int>(phase)] += ns; }
  // A table: per phase the microseconds per execution and the share.
  std::string text() const;
};

// Adds the time from construction to destruction to `phase`; does nothing
// when `times` is null. With `inside` (a phase being timed around this one),
// the time is moved out of `inside`, so it is counted once.
class PhaseTimer {
 public:
  PhaseTimer(PhaseTimes* times, Phase phase, Phase inside = Phase::kCount)
      : times_(times), phase_(phase), inside_(inside) {
    if (times_ != nullptr) start_ = std::chrono::steady_clock::now();
  }
  ~PhaseTimer() {
    if (times_ == nullptr) return;
    const int64_t ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_).count();
    if (inside_ != Phase::kCount) times_->add(inside_, -ns);
    times_->add(phase_, ns);
  }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  PhaseTimes* times_;
  Phase phase_;
  Phase inside_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace qcheck
