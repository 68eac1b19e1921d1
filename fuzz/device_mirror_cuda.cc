// The device mirror with the CUDA runtime (compiled only when QCHECK_HAVE_CUDA).
#include <cuda_runtime.h>

#include <vector>

#include "fuzz/device_mirror.h"

namespace qcheck {
namespace {

std::string cuda_error(const char* call, cudaError_t error) {
  return std::string(call) + " failed: " + cudaGetErrorName(error) + " (" +
         cudaGetErrorString(error) + ")";
}

// Frees whatever was allocated, also on an early return.
struct DeviceBuffers {
  std::vector<uint8_t*> pointers;
  ~DeviceBuffers() {
    for (uint8_t* p : pointers) cudaFree(p);
  }
};

}  // namespace

std::string cuda_device_problem() {
  static const std::string problem = [] {
    int count = 0;
    const cudaError_t error = cudaGetDeviceCount(&count);
    if (error != cudaSuccess) return "no CUDA device: " + cuda_error("cudaGetDeviceCount", error);
    if (count == 0) return std::string("no CUDA device: cudaGetDeviceCount found 0 devices");
    return std::string();
  }();
  return problem;
}

Outcome run_on_cuda_device(cuda::KernelDesign design, cuda::PlantedBug bug, const Case& c,
                           TensorSet& tensors) {
  const std::string problem = cuda_device_problem();
  if (!problem.empty()) return Outcome::runtime_error(problem);
#define QCHECK_CUDA_CHECK(call)                                                          \
  do {                                                                                   \
    const cudaError_t error_ = (call);                                                   \
    if (error_ != cudaSuccess) return Outcome::runtime_error(cuda_error(#call, error_)); \
  } while (0)

  DeviceBuffers device;
  std::vector<uint8_t*> payloads;
  for (GuardedBuffer& host : tensors.buffers) {
    void* p = nullptr;
    QCHECK_CUDA_CHECK(cudaMalloc(&p, host.size()));
    device.pointers.push_back(static_cast<uint8_t*>(p));
    QCHECK_CUDA_CHECK(cudaMemcpy(p, host.data(), host.size(), cudaMemcpyHostToDevice));
    payloads.push_back(static_cast<uint8_t*>(p) + GuardedBuffer::kSentinelBytes);
  }
  const FusedQArgs args = make_fused_q_args(c, tensors.plan, payloads);
  const std::string invalid = validate_fused_q_args(args);
  if (!invalid.empty()) return Outcome::invalid_input(invalid);

  cuda::LaunchOptions options;
  options.planted_bug = bug;
  const std::string launch = cuda::launch_fused_q(design, args, nullptr, options);
  if (!launch.empty()) {
    return Outcome::runtime_error(std::string("launch_fused_q(") + cuda::name_of(design) +
                                  "): " + launch);
  }
  QCHECK_CUDA_CHECK(cudaDeviceSynchronize());
  for (size_t i = 0; i < tensors.buffers.size(); ++i) {
    GuardedBuffer& host = tensors.buffers[i];
    QCHECK_CUDA_CHECK(
        cudaMemcpy(host.data(), device.pointers[i], host.size(), cudaMemcpyDeviceToHost));
  }
  for (uint8_t*& p : device.pointers) {
    uint8_t* freed = p;
    p = nullptr;
    QCHECK_CUDA_CHECK(cudaFree(freed));
  }
#undef QCHECK_CUDA_CHECK
  return Outcome::ok();
}

}  // namespace qcheck
