#include "fuzz/buffers/input_times.h"

#include <cstdio>

#include "fuzz/case/case_names.h"

namespace qcheck {

static_assert(InputTimes::kRecipes == static_cast<int>(ValueRecipe::kTies) + 1, "one slot per value recipe");

const char* name_of(InputPart part) {
  switch (part) {
    case InputPart::kBuffers: return "buffers and poison";
    case InputPart::kCaches: return "cos/sin caches";
    case InputPart::kRows: return "bf16 input rows";
    case InputPart::kWeights: return "weights, positions, edits";
    case InputPart::kCopies: return "copies for the runs";
    case InputPart::kCount: break;
  }
  return "?";
}

std::string InputTimes::text(uint64_t executions) const {
  std::string out;
  char line[160];
  const double per = executions == 0 ? 0.0 : 1.0 / static_cast<double>(executions);
  for (int i = 0; i < static_cast<int>(InputPart::kCount); ++i) {
    std::snprintf(line, sizeof line, "    %-28s %9.1f us/exec\n", name_of(static_cast<InputPart>(i)),
                  part_ns[i] / 1e3 * per);
    out += line;
  }
  int64_t total = 0;
  for (int64_t ns : recipe_ns) total += ns;
  out += "    by the case's value recipe (cases, us per case, share of the input time):\n";
  for (int r = 0; r < kRecipes; ++r) {
    if (recipe_cases[r] == 0) continue;
    std::snprintf(line, sizeof line, "      %-18s %9lld %9.1f us %5.1f %%\n", name_of(static_cast<ValueRecipe>(r)),
                  static_cast<long long>(recipe_cases[r]), recipe_ns[r] / 1e3 / static_cast<double>(recipe_cases[r]),
                  total == 0 ? 0.0 : 100.0 * static_cast<double>(recipe_ns[r]) / static_cast<double>(total));
    out += line;
  }
  return out;
}

}  // namespace qcheck
