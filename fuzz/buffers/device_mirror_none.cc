// The device mirror of a build without CUDA: the CUDA backends exist but are
// outside their domain everywhere.
#include "fuzz/buffers/device_mirror.h"

namespace qcheck {

std::string cuda_device_problem() {
  return "no CUDA device: this build has no CUDA (configure with -DQCHECK_CUDA=ON)";
}

Outcome run_on_cuda_device(const std::string&, const DeviceLaunch&, const Case&, TensorSet&, LaunchMode) {
  return Outcome::runtime_error(cuda_device_problem());
}

DeviceLaunch project_kernel_launch(cuda::KernelDesign, const cuda::LaunchOptions&) {
  return [](const FusedQArgs&, void*) { return cuda_device_problem(); };
}

std::string project_kernel_launch_name(cuda::KernelDesign) { return "launch_fused_q"; }

uint64_t cuda_memory_retries() { return 0; }

void set_device_wait_reporter(std::function<void(const std::string&)>) {}

}  // namespace qcheck
