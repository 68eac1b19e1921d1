#include "ops/fused_k/check/check.h"

#include <vector>

#include "ops/fused_k/case/case_launch.h"
#include "ops/fused_k/check/cuda_run.h"
#include "ops/fused_k/cpu_model/fused_k_cpu_model.h"
#include "ops/fused_k/oracle/fused_k_oracle.h"

namespace qcheck::fused_k {
namespace {

const char* prefix_of(FusedKDevice device) { return device == FusedKDevice::kCpuModel ? "cpu-model" : "cuda"; }

}  // namespace

bool parse_backend(const std::string& name, FusedKBackend* out) {
  for (const FusedKDevice device : {FusedKDevice::kCpuModel, FusedKDevice::kCuda}) {
    const std::string prefix = prefix_of(device);
    if (name == prefix) {
      *out = FusedKBackend{device, planted::kNone};
      return true;
    }
    if (name.rfind(prefix + "-bug-", 0) != 0) continue;
    const std::string bug = name.substr(prefix.size() + 5);
    for (int b = planted::kNone + 1; b < planted::kCount; ++b) {
      if (bug == planted::name_of(static_cast<planted::Bug>(b))) {
        *out = FusedKBackend{device, static_cast<planted::Bug>(b)};
        return true;
      }
    }
  }
  return false;
}

std::string backend_name(const FusedKBackend& backend) {
  return std::string(prefix_of(backend.device)) +
         (backend.bug == planted::kNone ? "" : std::string("-bug-") + planted::name_of(backend.bug));
}

std::string backend_names() {
  std::string names;
  for (const char* prefix : {"cpu-model", "cuda"}) {
    names += std::string(names.empty() ? "" : "; ") + prefix + ", " + prefix + "-bug-NAME";
  }
  names += " (NAME:";
  for (int b = planted::kNone + 1; b < planted::kCount; ++b) {
    names += std::string(" ") + planted::name_of(static_cast<planted::Bug>(b));
  }
  return names + ")";
}

std::string backend_ready(const FusedKBackend& backend) {
  return backend.device == FusedKDevice::kCuda ? cuda_ready() : "";
}

FusedKVerdict check_fused_k_case(const FusedKCase& c, const FusedKBackend& backend, int64_t max_arena_bytes) {
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
  // The Highway norms: the scalar spec's bits (tests/fused_k/oracle_simd_test), faster.
  const std::string oracle =
      run_fused_k_oracle(rebased(launch.args, want.data()), qcheck_fused_k_rules(), simd_norm_ops());
  if (!oracle.empty()) return stop(3, "the oracle refused a valid case: " + oracle, "oracle refused");
  const std::string error = backend.device == FusedKDevice::kCuda
                                ? run_on_cuda(launch.args, backend.bug, got)
                                : run_fused_k_cpu_model(rebased(launch.args, got.data()), backend.bug);
  if (!error.empty()) return stop(3, backend_name(backend) + " failed on a valid case: " + error, "backend failed");
  const std::string difference = arena_difference(launch.arena, want, got);
  if (difference.empty()) return v;
  int64_t first = 0;
  while (want[static_cast<size_t>(first)] == got[static_cast<size_t>(first)]) ++first;
  return stop(1, difference, "differs " + launch.arena.tensor_at(first));
}

}  // namespace qcheck::fused_k
