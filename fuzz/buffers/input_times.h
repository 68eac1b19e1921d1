// Where building a case's tensor sets spends its time, for --phase-times (the
// fuzz target) and the Python door's summary: by part of the work and by the
// case's value recipe, so that a recipe that costs ten times the others shows.
// Costs two clock reads per part when asked for, nothing otherwise.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "fuzz/case/case.h"

namespace qcheck {

enum class InputPart : int { kBuffers, kCaches, kRows, kWeights, kCopies, kCount };

const char* name_of(InputPart part);

struct InputTimes {
  static constexpr int kRecipes = 12;  // ValueRecipe's values
  int64_t part_ns[static_cast<int>(InputPart::kCount)] = {};
  int64_t recipe_ns[kRecipes] = {};    // the whole build, by the case's recipe
  int64_t recipe_cases[kRecipes] = {};

  void add(InputPart part, int64_t ns) { part_ns[static_cast<int>(part)] += ns; }
  void add_case(ValueRecipe recipe, int64_t ns) {
    recipe_ns[static_cast<int>(recipe)] += ns;
    ++recipe_cases[static_cast<int>(recipe)];
  }
  // Lines under the inputs phase: per part the microseconds per execution,
  // per recipe the cases, microseconds per case and share of the input time.
  std::string text(uint64_t executions) const;
};

// Adds the time from construction to destruction to `part` (nothing when
// `times` is null).
class InputTimer {
 public:
  InputTimer(InputTimes* times, InputPart part) : times_(times), part_(part) {
    if (times_ != nullptr) start_ = std::chrono::steady_clock::now();
  }
  ~InputTimer() {
    if (times_ != nullptr) times_->add(part_, elapsed_ns());
  }
  int64_t elapsed_ns() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_).count();
  }
  InputTimer(const InputTimer&) = delete;
  InputTimer& operator=(const InputTimer&) = delete;

 private:
  InputTimes* times_;
  InputPart part_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace qcheck
