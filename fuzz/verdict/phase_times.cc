#include "fuzz/verdict/phase_times.h"

#include <cstdio>

namespace qcheck {

const char* name_of(Phase phase) {
  switch (phase) {
    case Phase::kDecode: return "decode, validate, plan";
    case Phase::kInputs: return "build the tensor sets";
    case Phase::kOracle: return "oracle";
    case Phase::kBackendA: return "backend run (poison A)";
    case Phase::kBackendB: return "backend run (poison B)";
    case Phase::kCompare: return "compare";
    case Phase::kBins: return "semantic bins";
    case Phase::kCount: break;
  }
  return "?";
}

std::string PhaseTimes::text() const {
  int64_t total = 0;
  for (int64_t ns : nanoseconds) total += ns;
  std::string out = "phase times over " + std::to_string(executions) + " executions:\n";
  char line[128];
  for (int i = 0; i < static_cast<int>(Phase::kCount); ++i) {
    const double us = executions == 0 ? 0.0 : nanoseconds[i] / 1e3 / static_cast<double>(executions);
    const double share = total == 0 ? 0.0 : 100.0 * static_cast<double>(nanoseconds[i]) / static_cast<double>(total);
    std::snprintf(line, sizeof line, "  %-24s %9.1f us/exec %5.1f %%\n", name_of(static_cast<Phase>(i)), us, share);
    out += line;
    if (static_cast<Phase>(i) == Phase::kInputs) out += inputs.text(executions);
  }
  std::snprintf(line, sizeof line, "  %-24s %9.1f us/exec\n", "all phases",
                executions == 0 ? 0.0 : total / 1e3 / static_cast<double>(executions));
  return out + line;
}

}  // namespace qcheck
