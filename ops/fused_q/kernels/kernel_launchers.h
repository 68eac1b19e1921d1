// Internal to ops/fused_q/kernels/: the per-design launchers behind launch_fused_q. Each
// takes params of args that already passed validation and T > 0, launches
// on `stream` (a cudaStream_t) and returns "" or the launch's CUDA error.
#pragma once

#include <string>

#include "ops/fused_q/kernels/fused_q_launch.h"
#include "ops/fused_q/kernels/kernel_params.h"

namespace qcheck::cuda {

// token_blocks_per_launch: LaunchOptions' field (0: no limit below the grid's).
std::string launch_blocked_kernel(const KernelParams& params, void* stream, bool guard_tail,
                                  BlockedConfig config, int64_t token_blocks_per_launch);
std::string launch_legacy_kernel(const KernelParams& params, void* stream);

// "" when cudaGetLastError reports success, else one line naming the kernel
// and the CUDA error (the error is consumed, as cudaGetLastError does).
std::string launch_error(const char* kernel_name);

}  // namespace qcheck::cuda
