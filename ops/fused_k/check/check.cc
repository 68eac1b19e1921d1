#include "ops/fused_k/check/check.h"

#include <vector>

#include "ops/fused_k/case/case_launch.h"
#include "ops/fused_k/cpu_model/fused_k_cpu_model.h"
#include "ops/fused_k/oracle/fused_k_oracle.h"

namespace qcheck::fused_k {

FusedKVerdict check_fused_k_case(const FusedKCase& c, planted::Bug bug, int64_t max_arena_bytes) {
  FusedKVerdict v;
  const auto stop = [&v](int code, const std::string& text, const std::string& failure) {
    v.exit_code = code, v.text = text, v.failure = failure;
    return v;
  };
  const std::string invalid = validate_fused_k_case(c);
  if (!invalid.empty()) return stop(2, "invalid case: " + invalid, "invalid");
  if (max_arena_bytes > 0 && plan_fused_k_launch(c).arena.size() > max_arena_bytes) {
    return stop(2, "the arena is over the budget of " + std::to_string(max_arena_bytes) + " bytes", "over budget");
  }
  CaseLaunch launch = build_fused_k_launch(c);
  std::vector<uint8_t> want = launch.bytes, got = launch.bytes;
  const std::string oracle = run_fused_k_oracle(rebased(launch.args, want.data()), qcheck_fused_k_rules());
  if (!oracle.empty()) return stop(3, "the oracle refused a valid case: " + oracle, "oracle refused");
  const std::string model = run_fused_k_cpu_model(rebased(launch.args, got.data()), bug);
  if (!model.empty()) return stop(3, "the backend refused a valid case: " + model, "backend refused");
  const std::string difference = arena_difference(launch.arena, want, got);
  if (difference.empty()) return v;
  int64_t first = 0;
  while (want[static_cast<size_t>(first)] == got[static_cast<size_t>(first)]) ++first;
  return stop(1, difference, "differs " + launch.arena.tensor_at(first));
}

bool backend_bug(const std::string& backend, planted::Bug* bug) {
  if (backend == "cpu-model") {
    *bug = planted::kNone;
    return true;
  }
  const std::string prefix = "cpu-model-bug-";
  if (backend.rfind(prefix, 0) != 0) return false;
  for (int b = planted::kNone + 1; b < planted::kCount; ++b) {
    if (backend.substr(prefix.size()) == planted::name_of(static_cast<planted::Bug>(b))) {
      *bug = static_cast<planted::Bug>(b);
      return true;
    }
  }
  return false;
}

std::string backend_names() {
  std::string names = "cpu-model";
  for (int b = planted::kNone + 1; b < planted::kCount; ++b) {
    names += std::string(", cpu-model-bug-") + planted::name_of(static_cast<planted::Bug>(b));
  }
  return names;
}

}  // namespace qcheck::fused_k
