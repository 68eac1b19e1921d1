// Device side of the conversion sweeps: thin kernels around the functions of
// ops/fused_q/kernels/device_numerics.cuh, the same functions the fused_q kernels call.
#include "tests/gpu/device_sweeps.h"

#include <cuda_runtime.h>

#include "numerics/device/e4m3fnuz_via_ocp.h"
#include "ops/fused_q/kernels/device_numerics.cuh"

namespace qcheck::gpu_test {
namespace {

using namespace qcheck::cuda::device;

// The instruction itself, whatever the compiler would choose for rsqrtf.
__device__ float rsqrt_approx_ftz(float x) {
  float r;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}

__global__ void sweep_kernel(Sweep sweep, SweepRange range, float parameter, uint32_t* out) {
  const Divisor divisor = make_divisor(parameter);
  const uint64_t step = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < range.count;
       i += step) {
    const uint32_t bits = range.first + static_cast<uint32_t>(i) * range.stride;
    const float x = __uint_as_float(bits);
    uint32_t result = 0;
    switch (sweep) {
      case Sweep::kBf16: result = bf16_from_f32(x); break;
      case Sweep::kBf16Pair: result = bf16x2_from_f32(x, __uint_as_float(~bits)); break;
      case Sweep::kE4m3Pair: result = e4m3x2_from_f32(x, __uint_as_float(~bits)); break;
      case Sweep::kUe8m0Scale: result = __float_as_uint(ue8m0_scale_from_amax(x)); break;
      case Sweep::kQuantize: result = e4m3x2_from_f32(0.0f, divide(x, divisor)) & 0xFFu; break;
      case Sweep::kReciprocal: result = __float_as_uint(exact_reciprocal_of_pow2(x)); break;
      case Sweep::kUe8m0Reciprocal: result = __float_as_uint(reciprocal_of_ue8m0_scale(x)); break;
      case Sweep::kRsqrtApproxFtz: result = __float_as_uint(rsqrt_approx_ftz(x)); break;
      case Sweep::kRsqrtApprox: result = __float_as_uint(qcheck::device::rsqrt_approx(x)); break;
      case Sweep::kRsqrtf: result = __float_as_uint(rsqrtf(x)); break;
      case Sweep::kE2m1: result = qcheck::device::e2m1_from_f32(x); break;
      case Sweep::kE4m3fnuz:
        result = qcheck::device::e4m3fnuz_via_ocp(x, [](float v) { return qcheck::device::e4m3_from_f32(v); });
        break;
    }
    out[i] = result;
  }
}

__global__ void composites_kernel(const uint32_t* a, const uint32_t* b, const uint32_t* c,
                                  const uint32_t* d, uint64_t count, uint32_t* rope,
                                  uint32_t* weight) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const float fa = __uint_as_float(a[i]), fb = __uint_as_float(b[i]);
  const float fc = __uint_as_float(c[i]), fd = __uint_as_float(d[i]);
  rope[i] = __float_as_uint(rope_term(fa, fb, fc, fd));
  weight[i] = __float_as_uint(indexer_weight(fa, fb, fc, fd));
}

__global__ void e4m3x4_kernel(const uint32_t* v0, const uint32_t* v1, const uint32_t* v2,
                              const uint32_t* v3, uint64_t count, uint32_t* packed) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  packed[i] = e4m3x4_from_f32(__uint_as_float(v0[i]), __uint_as_float(v1[i]),
                              __uint_as_float(v2[i]), __uint_as_float(v3[i]));
}

// Device buffers freed on every path.
class DeviceBuffers {
 public:
  ~DeviceBuffers() {
    for (void* p : pointers_) cudaFree(p);
  }
  std::string allocate(uint32_t** out, uint64_t count) {
    void* p = nullptr;
    const cudaError_t e = cudaMalloc(&p, count * sizeof(uint32_t) + 4);
    if (e != cudaSuccess) return std::string("cudaMalloc: ") + cudaGetErrorString(e);
    pointers_.push_back(p);
    *out = static_cast<uint32_t*>(p);
    return "";
  }
  std::string upload(uint32_t** out, const std::vector<uint32_t>& host) {
    std::string error = allocate(out, host.size());
    if (!error.empty()) return error;
    const cudaError_t e = cudaMemcpy(*out, host.data(), host.size() * sizeof(uint32_t),
                                     cudaMemcpyHostToDevice);
    return e == cudaSuccess ? "" : std::string("cudaMemcpy to device: ") + cudaGetErrorString(e);
  }

 private:
  std::vector<void*> pointers_;
};

std::string finish(const char* what, uint32_t* device, uint64_t count, std::vector<uint32_t>* host) {
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) return std::string(what) + ": " + cudaGetErrorString(e);
  host->resize(count);
  e = cudaMemcpy(host->data(), device, count * sizeof(uint32_t), cudaMemcpyDeviceToHost);
  return e == cudaSuccess ? "" : std::string("cudaMemcpy to host: ") + cudaGetErrorString(e);
}

unsigned blocks_for(uint64_t count, unsigned threads) {
  return static_cast<unsigned>((count + threads - 1) / threads);
}

}  // namespace

std::string cuda_device_problem() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) return std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(e);
  if (count == 0) return "cudaGetDeviceCount found 0 devices";
  return "";
}

std::string run_device_sweep(Sweep sweep, const SweepRange& range, float parameter,
                             std::vector<uint32_t>* results) {
  DeviceBuffers buffers;
  uint32_t* out = nullptr;
  std::string error = buffers.allocate(&out, range.count);
  if (!error.empty()) return error;
  sweep_kernel<<<132 * 16, 256>>>(sweep, range, parameter, out);
  return finish("sweep_kernel", out, range.count, results);
}

std::string run_device_composites(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b,
                                  const std::vector<uint32_t>& c, const std::vector<uint32_t>& d,
                                  std::vector<uint32_t>* rope, std::vector<uint32_t>* weight) {
  const uint64_t count = a.size();
  DeviceBuffers buffers;
  uint32_t *da, *db, *dc, *dd, *drope, *dweight;
  for (std::string error : {buffers.upload(&da, a), buffers.upload(&db, b), buffers.upload(&dc, c),
                            buffers.upload(&dd, d), buffers.allocate(&drope, count),
                            buffers.allocate(&dweight, count)}) {
    if (!error.empty()) return error;
  }
  composites_kernel<<<blocks_for(count, 256), 256>>>(da, db, dc, dd, count, drope, dweight);
  std::string error = finish("composites_kernel", drope, count, rope);
  if (!error.empty()) return error;
  return finish("composites_kernel", dweight, count, weight);
}

std::string run_device_e4m3x4(const std::vector<uint32_t> (&lanes)[4],
                              std::vector<uint32_t>* packed) {
  const uint64_t count = lanes[0].size();
  DeviceBuffers buffers;
  uint32_t *d0, *d1, *d2, *d3, *dout;
  for (std::string error : {buffers.upload(&d0, lanes[0]), buffers.upload(&d1, lanes[1]),
                            buffers.upload(&d2, lanes[2]), buffers.upload(&d3, lanes[3]),
                            buffers.allocate(&dout, count)}) {
    if (!error.empty()) return error;
  }
  e4m3x4_kernel<<<blocks_for(count, 256), 256>>>(d0, d1, d2, d3, count, dout);
  return finish("e4m3x4_kernel", dout, count, packed);
}

}  // namespace qcheck::gpu_test
