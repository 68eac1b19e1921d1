#include "ops/fused_k/check/cuda_run.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "ops/fused_k/case/case_launch.h"
#include "ops/fused_k/kernels/fused_k_launch.h"

namespace qcheck::fused_k {
namespace {

std::string cuda_error(const char* what, cudaError_t e) {
  return std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}

struct DeviceArena {
  uint8_t* data = nullptr;
  int64_t capacity = 0;
  ~DeviceArena() { cudaFree(data); }
  std::string reserve(int64_t bytes) {
    if (bytes <= capacity) return "";
    cudaFree(data);
    data = nullptr;
    capacity = 0;
    const int64_t wanted = std::max<int64_t>(bytes, int64_t{16} << 20);
    const cudaError_t e = cudaMalloc(&data, static_cast<size_t>(wanted));
    if (e != cudaSuccess) return cuda_error("cudaMalloc", e);
    capacity = wanted;
    return "";
  }
};

}  // namespace

std::string cuda_ready() {
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess) return cuda_error("no CUDA device", e);
  return devices > 0 ? "" : "no CUDA device";
}

std::string run_on_cuda(const FusedKArgs& args, planted::Bug bug, std::vector<uint8_t>& bytes) {
  thread_local DeviceArena device;
  std::string error = device.reserve(static_cast<int64_t>(bytes.size()));
  if (!error.empty()) return error;
  cudaError_t e = cudaMemcpy(device.data, bytes.data(), bytes.size(), cudaMemcpyHostToDevice);
  if (e != cudaSuccess) return cuda_error("cudaMemcpy to the device", e);
  const FusedKArgs on_device = rebased(args, device.data);
  error = bug == planted::kNone ? launch_fused_k(on_device, nullptr) : launch_fused_k_planted(on_device, bug, nullptr);
  if (!error.empty()) return "launch: " + error;
  e = cudaDeviceSynchronize();
  if (e != cudaSuccess) return cuda_error("the kernel", e);
  e = cudaMemcpy(bytes.data(), device.data, bytes.size(), cudaMemcpyDeviceToHost);
  return e == cudaSuccess ? "" : cuda_error("cudaMemcpy to the host", e);
}

}  // namespace qcheck::fused_k
