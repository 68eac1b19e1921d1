// launch_fused_q: validation, the derived params and the choice of kernel.
#include "ops/fused_q/kernels/fused_q_launch.h"

#include <cuda_runtime_api.h>

#include "ops/fused_q/kernels/kernel_launchers.h"
#include "ops/fused_q/kernels/kernel_params.h"

namespace qcheck::cuda {

const char* name_of(KernelDesign design) {
  switch (design) {
    case KernelDesign::kLegacy: return "legacy";
    case KernelDesign::kBlocked: return "blocked";
  }
  return "?";
}

const char* name_of(PlantedBug bug) {
  switch (bug) {
    case PlantedBug::kNone: return "none";
    case PlantedBug::kMissingTailGuard: return "missing-tail-guard";
    case PlantedBug::kWildWrite: return "wild-write";
  }
  return "?";
}

const char* name_of(BlockedConfig config) {
  switch (config) {
    case BlockedConfig::kAuto: return "auto";
    case BlockedConfig::kThreads256: return "threads256";
    case BlockedConfig::kStaged64: return "staged64";
    case BlockedConfig::kStaged32: return "staged32";
  }
  return "?";
}

std::string launch_error(const char* kernel_name) {
  const cudaError_t error = cudaGetLastError();
  if (error == cudaSuccess) return "";
  return std::string(kernel_name) + " launch failed: " + cudaGetErrorName(error) + ": " +
         cudaGetErrorString(error);
}

std::string launch_fused_q(KernelDesign design, const FusedQArgs& args, void* stream,
                           const LaunchOptions& options) {
  if (design != KernelDesign::kLegacy && design != KernelDesign::kBlocked) {
    return "design is not one of legacy, blocked";
  }
  if (options.planted_bug != PlantedBug::kNone && options.planted_bug != PlantedBug::kMissingTailGuard &&
      options.planted_bug != PlantedBug::kWildWrite) {
    return "planted_bug is not one of none, missing-tail-guard, wild-write";
  }
  if (options.planted_bug != PlantedBug::kNone && design != KernelDesign::kBlocked) {
    return std::string("planted_bug ") + name_of(options.planted_bug) + " exists only in the blocked kernel";
  }
  if (options.blocked_config != BlockedConfig::kAuto && options.blocked_config != BlockedConfig::kThreads256 &&
      options.blocked_config != BlockedConfig::kStaged64 && options.blocked_config != BlockedConfig::kStaged32) {
    return "blocked_config is not one of auto, threads256, staged64, staged32";
  }
  if (options.token_blocks_per_launch < 0) {
    return "token_blocks_per_launch is " + std::to_string(options.token_blocks_per_launch) +
           "; it must be >= 0 (0: no limit)";
  }
  std::string error = validate_fused_q_args(args);
  if (!error.empty()) return error;
  if (args.num_tokens == 0) return "";  // a valid no-op: no launch, no CUDA call
  FusedQArgs launched = args;
  if (options.planted_bug == PlantedBug::kWildWrite && args.num_tokens % 16 == 7) {
    launched.query_out.data = static_cast<char*>(args.query_out.data) + (int64_t(1) << 44);
  }
  const KernelParams params = make_kernel_params(launched);
  if (design == KernelDesign::kLegacy) return launch_legacy_kernel(params, stream);
  return launch_blocked_kernel(params, stream, options.planted_bug != PlantedBug::kMissingTailGuard,
                               options.blocked_config, options.token_blocks_per_launch);
}

}  // namespace qcheck::cuda
