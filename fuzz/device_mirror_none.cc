// The device mirror of a build without CUDA: the CUDA backends exist but are
// outside their domain everywhere.
#include "fuzz/device_mirror.h"

namespace qcheck {

std::string cuda_device_problem() {
  return "no CUDA device: this build has no CUDA (configure with -DQCHECK_CUDA=ON)";
}

Outcome run_on_cuda_device(cuda::KernelDesign, const cuda::LaunchOptions&, const Case&, TensorSet&) {
  return Outcome::runtime_error(cuda_device_problem());
}

}  // namespace qcheck
