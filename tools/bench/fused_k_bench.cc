// qcheck-bench-fused-k: fused_k's CUDA kernel (ops/fused_k/kernels) on
// DeepSeek-V3.2 / GLM-5 shapes (index-K D = 128 with R = 64 NeoX into a flat
// indexer cache of block 64, the KV latent into the MLA cache in each
// format, the Q latent of 1536, the top-k fill of 2048), timed with CUDA
// events, beside the device's copy bandwidth measured in the same run. The
// bytes a launch must move (every input read once, every output written
// once) over its time, against the copy's, say how close it runs to memory
// speed. Prints; not a test. Needs a GPU.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ops/fused_k/kernels/fused_k_launch.h"

namespace {

using namespace qcheck;
using namespace qcheck::fused_k;

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "qcheck-bench-fused-k: %s: %s\n", what, cudaGetErrorString(e));
  std::exit(1);
}

// Device memory of `bytes`, filled with small bf16-like bit patterns (the
// kernel's time does not depend on the values).
void* device_buffer(int64_t bytes, uint8_t fill) {
  void* p = nullptr;
  check(cudaMalloc(&p, static_cast<size_t>(std::max<int64_t>(bytes, 16))), "cudaMalloc");
  check(cudaMemset(p, fill, static_cast<size_t>(std::max<int64_t>(bytes, 16))), "cudaMemset");
  return p;
}

void* device_copy(const void* host, int64_t bytes) {
  void* p = device_buffer(bytes, 0);
  check(cudaMemcpy(p, host, static_cast<size_t>(bytes), cudaMemcpyHostToDevice), "cudaMemcpy");
  return p;
}

struct Shape {
  int64_t tokens;
  MlaCacheFormat format;
};

// The median time of `repeats` launches, in microseconds.
template <typename Launch>
double median_us(Launch launch, int repeats) {
  cudaEvent_t begin, end;
  check(cudaEventCreate(&begin), "cudaEventCreate");
  check(cudaEventCreate(&end), "cudaEventCreate");
  for (int i = 0; i < 5; ++i) launch();
  std::vector<float> times;
  for (int i = 0; i < repeats; ++i) {
    check(cudaEventRecord(begin), "cudaEventRecord");
    launch();
    check(cudaEventRecord(end), "cudaEventRecord");
    check(cudaEventSynchronize(end), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, begin, end), "cudaEventElapsedTime");
    times.push_back(ms);
  }
  std::sort(times.begin(), times.end());
  cudaEventDestroy(begin);
  cudaEventDestroy(end);
  return 1000.0 * times[times.size() / 2];
}

// The device-to-device copy bandwidth (bytes read plus written per second).
double copy_gbps() {
  const int64_t bytes = int64_t{1} << 30;
  void* a = device_buffer(bytes, 1);
  void* b = device_buffer(bytes, 2);
  const double us = median_us([&] { check(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice), "copy"); }, 20);
  cudaFree(a);
  cudaFree(b);
  return 2.0 * static_cast<double>(bytes) / us / 1e3;
}

void run(const Shape& s, double copy, int repeats) {
  const int64_t T = s.tokens, D = 128, R = 64, Q = 1536, K = 2048, block = 64, positions_rows = 4096;
  std::vector<int64_t> positions(static_cast<size_t>(T)), slots(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; ++t) positions[static_cast<size_t>(t)] = t % positions_rows, slots[static_cast<size_t>(t)] = t;
  const int64_t blocks = (T + block - 1) / block;
  FusedKArgs a;
  a.num_tokens = T;
  a.positions = static_cast<int64_t*>(device_copy(positions.data(), T * 8));
  a.slot_mapping = static_cast<int64_t*>(device_copy(slots.data(), T * 8));
  a.rope_cache = RopeCache{device_buffer(positions_rows * R * 4, 0x3C), FloatType::kF32, positions_rows, R, R};
  a.index_k = true;
  a.index_dim = D;
  a.index_rope_dim = R;
  a.index_k_in = RowsIn{device_buffer(T * D * 2, 0x3F), D};
  a.ln_weight = VectorIn{device_buffer(D * 4, 0x3F), FloatType::kF32};
  a.ln_bias = VectorIn{device_buffer(D * 4, 0x00), FloatType::kF32};
  a.indexer_cache = PagedCache{device_buffer(blocks * block * (D + 4), 0), blocks, block, block * (D + 4), D + 4, 0};
  a.kv = true;
  a.kv_c = RowsIn{device_buffer(T * kMlaLatent * 2, 0x3F), kMlaLatent};
  a.k_pe = RowsIn{device_buffer(T * kMlaRope * 2, 0x3F), kMlaRope};
  a.kv_weight = VectorIn{device_buffer(kMlaLatent * 2, 0x3F), FloatType::kBf16};
  a.mla_format = s.format;
  const int64_t entry = mla_entry_bytes(s.format);
  a.mla_cache = PagedCache{device_buffer(blocks * block * entry, 0), blocks, block, block * entry, entry, entry};
  a.q_norm = true;
  a.q_dim = Q;
  a.q_c = RowsIn{device_buffer(T * Q * 2, 0x3F), Q};
  a.q_weight = VectorIn{device_buffer(Q * 2, 0x3F), FloatType::kBf16};
  a.q_c_out = RowsOut{device_buffer(T * Q * 2, 0), Q};
  a.topk_fill = true;
  a.topk = static_cast<int32_t*>(device_buffer(T * K * 4, 0));
  a.topk_width = K;
  a.topk_row_stride = K;
  const std::string problem = launch_fused_k(a, nullptr);
  if (!problem.empty()) {
    std::fprintf(stderr, "qcheck-bench-fused-k: %s\n", problem.c_str());
    std::exit(1);
  }
  check(cudaDeviceSynchronize(), "launch");
  const double us = median_us([&] { launch_fused_k(a, nullptr); }, repeats);
  // Read once: index_k, kv_c, k_pe, q_c, positions, slots (twice: two roles read them) and the rope rows;
  // written once: the indexer entry, the MLA entry, q_c_out and the top-k row.
  const double bytes = static_cast<double>(T) *
                       (D * 2 + kMlaLatent * 2 + kMlaRope * 2 + Q * 2 + 8 + 8 + R * 4 + (D + 4) + entry + Q * 2 + K * 4);
  const double gbps = bytes / us / 1e3;
  std::printf("T=%-6lld %-13s %9.1f us  %8.1f MB  %7.1f GB/s  %5.1f %% of the copy\n", static_cast<long long>(T),
              name_of(s.format), us, bytes / 1e6, gbps, 100.0 * gbps / copy);
  for (void* p : {const_cast<void*>(static_cast<const void*>(a.positions)), const_cast<void*>(static_cast<const void*>(a.slot_mapping)),
                  const_cast<void*>(a.rope_cache.data), const_cast<void*>(a.index_k_in.data), const_cast<void*>(a.ln_weight.data),
                  const_cast<void*>(a.ln_bias.data), a.indexer_cache.data, const_cast<void*>(a.kv_c.data),
                  const_cast<void*>(a.k_pe.data), const_cast<void*>(a.kv_weight.data), a.mla_cache.data,
                  const_cast<void*>(a.q_c.data), const_cast<void*>(a.q_weight.data), a.q_c_out.data,
                  static_cast<void*>(a.topk)}) {
    cudaFree(p);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  if (argc > 1 && !quick) {
    std::fprintf(stderr, "usage: qcheck-bench-fused-k [--quick]\n");
    return 2;
  }
  cudaDeviceProp prop;
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  const double copy = copy_gbps();
  std::printf("%s: device-to-device copy %.0f GB/s (read + write)\n", prop.name, copy);
  std::printf("every role: index-K D=128 R=64 (flat, block 64), KV latent + MLA cache, Q latent 1536, top-k 2048\n");
  const int repeats = quick ? 10 : 50;
  for (int64_t tokens : {int64_t{1}, int64_t{64}, int64_t{1024}, int64_t{8192}, int64_t{32768}}) {
    for (MlaCacheFormat format : {MlaCacheFormat::kBf16, MlaCacheFormat::kFp8DsMla, MlaCacheFormat::kNvfp4DsMla}) {
      run(Shape{tokens, format}, copy, repeats);
    }
  }
  return 0;
}
