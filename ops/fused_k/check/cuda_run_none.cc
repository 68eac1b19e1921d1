// A build without nvcc has no CUDA kernel to run.
#include "ops/fused_k/check/cuda_run.h"

namespace qcheck::fused_k {

std::string cuda_ready() { return "this build has no CUDA kernels (nvcc was not found when it was configured)"; }

std::string run_on_cuda(const FusedKArgs&, planted::Bug, std::vector<uint8_t>&) { return cuda_ready(); }

}  // namespace qcheck::fused_k
