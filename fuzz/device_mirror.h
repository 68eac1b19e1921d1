// Runs a case on a CUDA device: the same guarded buffers are laid out in
// device memory (device_mirror_cuda.cc says how), every byte (sentinels and
// padding included) is copied to the device, the kernel is launched through
// kernels/fused_q_launch.h, and every byte is copied back, so the verdict checks the device's writes exactly as a
// CPU backend's. Built from device_mirror_cuda.cc when the build has CUDA and
// from device_mirror_none.cc otherwise; this header needs no CUDA.
#pragma once

#include <string>

#include "fuzz/case.h"
#include "fuzz/outcome.h"
#include "fuzz/tensors.h"
#include "kernels/fused_q_launch.h"

namespace qcheck {

// "" when a CUDA device can run kernels here, else why not (no CUDA in this
// build; cudaGetDeviceCount failed or found none). Asked once per process.
std::string cuda_device_problem();

// Every CUDA call is checked; a failure becomes a runtime error naming the
// call. A launch refused by validation is invalid input.
Outcome run_on_cuda_device(cuda::KernelDesign design, const cuda::LaunchOptions& options,
                           const Case& c, TensorSet& tensors);

}  // namespace qcheck
