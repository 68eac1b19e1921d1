// Runs a case on a CUDA device: the same guarded buffers are laid out in
// device memory (device_mirror_cuda.cc says how), every byte (sentinels and
// padding included) is copied to the device, the kernel is launched (this
// project's through ops/fused_q/kernels/fused_q_launch.h, a plugin's through its own
// launch), and every byte is copied back, so the verdict checks the device's
// writes exactly as a CPU backend's. Built from device_mirror_cuda.cc when the build has CUDA and
// from device_mirror_none.cc otherwise; this header needs no CUDA.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "fuzz/buffers/tensors.h"
#include "fuzz/case/case.h"
#include "fuzz/case/outcome.h"
#include "ops/fused_q/kernels/fused_q_launch.h"

namespace qcheck {

// "" when a CUDA device can run kernels here, else why not (no CUDA in this
// build; cudaGetDeviceCount failed or found none). Asked once per process.
std::string cuda_device_problem();

// One launch over device pointers on `stream` (a cudaStream_t): "" when
// launched, else one line. It need not synchronize.
using DeviceLaunch = std::function<std::string(const FusedQArgs& args, void* stream)>;

// kGraph captures the launch into a CUDA graph on a stream of its own,
// instantiates and replays it (vLLM runs decode under CUDA graphs): the
// verdict compares those bits with an eager launch's.
enum class LaunchMode { kEager, kGraph };

// Every CUDA call is checked; a failure becomes a runtime error naming the
// call. A launch refused by validation is invalid input; a launch that
// returns an error is a runtime error "`what`: error".
//
// Memory the harness exhausts is not a bug of the kernel: with
// QCHECK_GPU_LEDGER set, every run waits for its turn in the GPU ledger
// (fuzz/admission/gpu_ledger.h) with the case's device bytes and
// kMirrorSlackBytes; a run that runs out of memory (cudaErrorMemoryAllocation
// from the mirror's own allocations or the launch's) is retried alone on the
// device (the arena given back first). Passing alone it is counted
// (cuda_memory_retries) and is the run's outcome; failing alone it is a
// runtime error whose reason starts with kNeedsMoreMemory, with the planned
// and the free bytes: a fuzz target notes it, not a finding.
Outcome run_on_cuda_device(const std::string& what, const DeviceLaunch& launch, const Case& c, TensorSet& tensors,
                           LaunchMode mode = LaunchMode::kEager);

// The device bytes a run may hold beyond the case's buffers: a graph's
// instantiation, a plugin's workspace, the context's growth.
constexpr uint64_t kMirrorSlackBytes = uint64_t(64) << 20;
// How the reason of a run that failed alone for lack of memory starts.
constexpr const char* kNeedsMoreMemory = "needs more memory than the device has";
// Whether a runtime error's reason says the device ran out of memory.
inline bool is_out_of_memory(const std::string& reason) {
  return reason.find("cudaErrorMemoryAllocation") != std::string::npos ||
         reason.find("out of memory") != std::string::npos ||
         reason.find("CUDA_ERROR_OUT_OF_MEMORY") != std::string::npos;
}
// The runs that ran out of memory and passed alone, in this process.
uint64_t cuda_memory_retries();
// Called about once a second while a run waits in the GPU ledger with what it
// waits for, and with "" when the wait ends (a fuzz target's status file).
void set_device_wait_reporter(std::function<void(const std::string&)> report);

// The launch of this project's kernels (ops/fused_q/kernels/fused_q_launch.h), and its
// name for messages ("launch_fused_q(blocked)").
DeviceLaunch project_kernel_launch(cuda::KernelDesign design, const cuda::LaunchOptions& options);
std::string project_kernel_launch_name(cuda::KernelDesign design);

}  // namespace qcheck
