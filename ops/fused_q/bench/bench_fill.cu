// Device-side fills of the bench inputs: deterministic, never all zeros.
#include <cuda_runtime.h>

#include <string>

#include "ops/fused_q/bench/bench_launch.h"
#include "ops/fused_q/kernels/kernel_params.h"

namespace qcheck::bench {
namespace {

__device__ uint32_t mix(uint64_t i, uint32_t seed) {
  uint64_t z = i * 0x9E3779B97F4A7C15ull + seed;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return static_cast<uint32_t>(z ^ (z >> 31));
}

// bf16 values with exponents in [2^-8, 2) and either sign: never zero.
__global__ void fill_bf16_kernel(uint16_t* out, size_t count, uint32_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x) {
    const uint32_t r = mix(i, seed);
    out[i] = static_cast<uint16_t>((r & 0x807F) | (0x3B80 + ((r >> 8) & 0x7) * 0x80));
  }
}

// f32 in [-1, 1] away from 0, or cos/sin-like values.
__global__ void fill_f32_kernel(float* out, size_t count, uint32_t seed, bool rotary_like) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x) {
    const uint32_t r = mix(i, seed);
    const float u = (static_cast<float>(r >> 8) + 1.0f) * (1.0f / 16777216.0f);
    out[i] = rotary_like ? __cosf(u * 6.2831853f) : ((r & 1) ? u : -u);
  }
}

__global__ void fill_positions_kernel(int64_t* out, size_t count, int64_t rows) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x) {
    out[i] = static_cast<int64_t>(i) % rows;
  }
}

std::string check(const char* what) {
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  return e == cudaSuccess ? "" : std::string(what) + ": " + cudaGetErrorString(e);
}

}  // namespace

std::string fill_bf16(void* data, size_t count, uint32_t seed) {
  fill_bf16_kernel<<<1024, 256>>>(static_cast<uint16_t*>(data), count, seed);
  return check("fill_bf16_kernel");
}

std::string fill_f32(void* data, size_t count, uint32_t seed, bool rotary_like) {
  fill_f32_kernel<<<1024, 256>>>(static_cast<float*>(data), count, seed, rotary_like);
  return check("fill_f32_kernel");
}

std::string fill_positions(int64_t* data, size_t count, int64_t rows) {
  fill_positions_kernel<<<1024, 256>>>(data, count, rows);
  return check("fill_positions_kernel");
}

}  // namespace qcheck::bench

namespace qcheck::bench {
namespace {
__global__ void empty_kernel(const cuda::KernelParams) {}
}  // namespace

std::string launch_empty_kernel(unsigned grid_x, unsigned grid_y, unsigned threads, void* stream) {
  empty_kernel<<<dim3(grid_x, grid_y), threads, 0, static_cast<cudaStream_t>(stream)>>>(cuda::KernelParams{});
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? "" : std::string("empty_kernel: ") + cudaGetErrorString(e);
}

}  // namespace qcheck::bench
