// One fused_k case through a backend and the oracle, judged on every byte of
// its arena: what the fuzz target, its replay, qcheck-fused-k and the
// minimizer all ask. A backend is the CPU model of qcheck's CUDA kernel
// (ops/fused_k/cpu_model) or the kernel itself on the GPU (ops/fused_k/
// kernels, in a build with nvcc), each with a planted bug or none; the
// oracle runs under qcheck_fused_k_rules(), its norms on the Highway rows.
#pragma once

#include <cstdint>
#include <string>

#include "ops/fused_k/case/fused_k_case.h"
#include "ops/fused_k/planted/planted.h"

namespace qcheck::fused_k {

enum class FusedKDevice : uint8_t { kCpuModel, kCuda };

struct FusedKBackend {
  FusedKDevice device = FusedKDevice::kCpuModel;
  planted::Bug bug = planted::kNone;
};

// "cpu-model", "cpu-model-bug-NAME", "cuda", "cuda-bug-NAME" (NAME a bug of
// ops/fused_k/planted). False, and *out untouched, for any other name.
bool parse_backend(const std::string& name, FusedKBackend* out);
std::string backend_name(const FusedKBackend& backend);
std::string backend_names();  // the forms above with every NAME, for messages

// "" when the backend can run here, else why not (a build without CUDA, no
// device): a setup error, said once before any case runs.
std::string backend_ready(const FusedKBackend& backend);

struct FusedKVerdict {
  // 0 the bytes agree, 1 they differ, 2 the case is invalid (validation's
  // line) or over the budget, 3 the oracle or the backend refused a valid
  // case, or the device failed.
  int exit_code = 0;
  std::string text;  // "" on a pass, else the one line above
  // What a minimizer must keep: the exit code and, for a difference, the
  // tensor (or gap) of its first differing byte, e.g. "differs mla_cache".
  std::string failure;
};

// `max_arena_bytes` > 0: a case whose arena is larger is not run (exit 2,
// "over the budget").
FusedKVerdict check_fused_k_case(const FusedKCase& c, const FusedKBackend& backend, int64_t max_arena_bytes = 0);

}  // namespace qcheck::fused_k
