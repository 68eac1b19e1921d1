// shared_scrub.h: one block per SM (each takes all the shared memory a block
// may have, so no two share an SM), twice as many blocks as SMs so every SM
// gets one whatever the order the hardware hands them out.
#include "fuzz/buffers/shared_scrub.h"

#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>

namespace qcheck {
namespace {

// Volatile stores: shared memory that no thread reads again is dead to the
// compiler, which would drop plain stores.
__global__ void fill_shared_memory(uint32_t pattern, int words) {
  extern __shared__ uint32_t shared[];
  volatile uint32_t* out = shared;
  for (int i = threadIdx.x; i < words; i += blockDim.x) out[i] = pattern ^ (static_cast<uint32_t>(i) * 0x9E3779B9u);
}

struct Geometry {
  cudaError_t error = cudaSuccess;
  const char* call = "";
  int blocks = 0;
  int bytes = 0;
};

Geometry geometry() {
  Geometry g;
  int device = 0, sms = 0, bytes = 0;
  if ((g.error = cudaGetDevice(&device)) != cudaSuccess) return g.call = "cudaGetDevice", g;
  if ((g.error = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device)) != cudaSuccess ||
      (g.error = cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device)) != cudaSuccess) {
    return g.call = "cudaDeviceGetAttribute", g;
  }
  if ((g.error = cudaFuncSetAttribute(fill_shared_memory, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)) !=
      cudaSuccess) {
    return g.call = "cudaFuncSetAttribute", g;
  }
  g.blocks = 2 * sms;
  g.bytes = bytes;
  return g;
}

}  // namespace

bool scrub_before_run(int64_t tokens) {
  enum class Policy { kRaceSized, kOff, kAll };
  static const Policy policy = [] {
    const char* v = std::getenv("QCHECK_SHARED_SCRUB");
    if (v != nullptr && std::strcmp(v, "0") == 0) return Policy::kOff;
    if (v != nullptr && std::strcmp(v, "all") == 0) return Policy::kAll;
    return Policy::kRaceSized;
  }();
  return policy == Policy::kAll || (policy == Policy::kRaceSized && tokens >= kRaceSizedTokens);
}

std::string scrub_shared_memory(uint32_t pattern) {
  static const Geometry g = geometry();
  if (g.error != cudaSuccess) return std::string(g.call) + ": " + cudaGetErrorString(g.error);
  fill_shared_memory<<<g.blocks, 1024, g.bytes>>>(pattern, g.bytes / 4);
  const cudaError_t launched = cudaGetLastError();
  if (launched != cudaSuccess) return std::string("scrub_shared_memory launch: ") + cudaGetErrorString(launched);
  return "";
}

}  // namespace qcheck
