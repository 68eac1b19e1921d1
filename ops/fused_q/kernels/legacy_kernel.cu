// The per-token fused_q kernel: the design of vLLM's Triton kernel before the
// seed PR (SEMANTICS.md, "Seed 000": grid (tokens, 3, 32), one single-warp
// program per element group). Kept as a faithful test target: reasonable
// code, but the old decomposition:
//   grid (T, 3, Z), Z = max(ceil(H / 2), NI) (ceil(H / 2) without indexer),
//   one warp (32 threads) per program; tokens on grid x.
//   y = 0: MQA q_pe RoPE of heads 2z and 2z + 1 (when < H)
//   y = 1: indexer head z (when has_indexer and z < NI)
//   y = 2: ql_nope front of heads 2z and 2z + 1 (fp8 quantize or bf16 copy;
//          returns at once on the separate path and for the exact alias)
// Lanes stride over a row's elements, so every load and store of a warp is
// coalesced; the indexer row stays in registers (D <= 512: 16 per lane) for
// its warp-shuffle amax. Same numerics as the blocked kernel
// (device_numerics.cuh), so both must give the oracle's bits.
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <string>

#include "ops/fused_q/kernels/device_access.cuh"
#include "ops/fused_q/kernels/kernel_launchers.h"

namespace qcheck::cuda {
namespace legacy {
namespace {

using namespace qcheck::cuda::device;

constexpr int kWarp = 32;

__device__ void mqa_head(const KernelParams& p, int64_t t, int64_t head) {
  const FusedQArgs& a = p.args;
  const int64_t half = a.rope_dim / 2;
  const uint16_t* in = input_row<uint16_t>(a.q_pe, t, head);
  const int64_t cache_start = cache_row(a.positions, t, p.mqa_cache_last_row) * a.mqa_cache.row_stride;
  const int64_t out = row_offset(a.query_out, t, head) +
                      (a.query_path == QueryPath::kBf16Separate ? 0 : a.nope_dim);
  const Divisor q_scale = make_divisor(p.q_scale);
  for (int64_t i = threadIdx.x; i < half; i += kWarp) {  // pair i = elements (2i, 2i+1)
    const float x1 = load_bf16(in + 2 * i);
    const float x2 = load_bf16(in + 2 * i + 1);
    const float c = load_cache_value(a.mqa_cache, cache_start + i);
    const float s = load_cache_value(a.mqa_cache, cache_start + half + i);
    const float r1 = rope_term(x1, c, -x2, s, mqa_r1_unfused(a.query_path == QueryPath::kFp8Packed));
    const float r2 = rope_term(x2, c, x1, s);
    if (a.query_path == QueryPath::kFp8Packed) {
      uint8_t* dst = static_cast<uint8_t*>(a.query_out.data) + out + 2 * i;
      store_e4m3(dst, divide(r1, q_scale));
      store_e4m3(dst + 1, divide(r2, q_scale));
    } else {
      uint16_t* dst = static_cast<uint16_t*>(a.query_out.data) + out + 2 * i;
      dst[0] = bf16_from_f32(r1);
      dst[1] = bf16_from_f32(r2);
    }
  }
}

// kPerLane elements of the row per lane: 4 covers D <= 128, 16 any D <= 512.
template <int kPerLane>
__device__ void indexer_head(const KernelParams& p, int64_t t, int64_t head) {
  const FusedQArgs& a = p.args;
  const int64_t R = a.rope_dim, D = a.index_dim, half = R / 2;
  const bool neox = a.indexer_rope == RopeStyle::kNeox;
  const uint16_t* in = input_row<uint16_t>(a.index_q, t, head);
  const int64_t cache_start =
      cache_row(a.positions, t, p.indexer_cache_last_row) * a.indexer_cache.row_stride;
  float v[kPerLane];
  float amax = amax_start();
#pragma unroll
  for (int k = 0; k < kPerLane; ++k) {
    const int64_t j = threadIdx.x + k * kWarp;
    v[k] = 0.0f;
    if (j >= D) continue;
    const float x = load_bf16(in + j);
    if (j >= R) {
      v[k] = x;  // pass-through dims
    } else {
      const bool minus = neox ? j < half : (j & 1) == 0;
      const int64_t partner = neox ? (minus ? j + half : j - half) : (j ^ 1);
      const int64_t index = neox ? (minus ? j : j - half) : j / 2;
      const float xp = load_bf16(in + partner);
      const float c = load_cache_value(a.indexer_cache, cache_start + index);
      const float s = load_cache_value(a.indexer_cache, cache_start + half + index);
      v[k] = rope_term(x, c, minus ? -xp : xp, s, kIndexerTermsUnfused);
    }
    amax = amax_step(amax, v[k]);
  }
#pragma unroll
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, offset));
  }
  const float scale = ue8m0_scale_from_amax(amax);
  const float reciprocal = reciprocal_of_ue8m0_scale(scale);
  uint8_t* out = output_row<uint8_t>(a.index_q_fp8, t, head);
#pragma unroll
  for (int k = 0; k < kPerLane; ++k) {
    const int64_t j = threadIdx.x + k * kWarp;
    if (j < D) store_e4m3(out + j, __fmul_rn(v[k], reciprocal));
  }
  if (threadIdx.x == 0) {
    const float w = load_weight(a, t, head);
    store_weight(a, t, head, indexer_weight(w, scale, p.softmax_scale, p.head_scale));
  }
}

__device__ void nope_head(const KernelParams& p, int64_t t, int64_t head) {
  const FusedQArgs& a = p.args;
  const uint16_t* in = input_row<uint16_t>(a.ql_nope, t, head);
  const int64_t out = row_offset(a.query_out, t, head);
  if (p.nope_task == KernelParams::NopeTask::kQuantizeFp8) {
    const Divisor q_scale = make_divisor(p.q_scale);
    uint8_t* dst = static_cast<uint8_t*>(a.query_out.data) + out;
    for (int64_t j = threadIdx.x; j < a.nope_dim; j += kWarp) {
      store_e4m3(dst + j, divide(load_bf16(in + j), q_scale));
    }
  } else {
    uint16_t* dst = static_cast<uint16_t*>(a.query_out.data) + out;
    for (int64_t j = threadIdx.x; j < a.nope_dim; j += kWarp) dst[j] = __ldg(in + j);
  }
}

// One program per (token, task, z). A launch covers at most 2^31 - 1 tokens
// on grid x; the host launches again from `first_token` for the rest.
__global__ void __launch_bounds__(kWarp) fused_q_legacy_kernel(const KernelParams p,
                                                               int64_t first_token) {
  const FusedQArgs& a = p.args;
  const int64_t z = blockIdx.z;
  const int64_t heads_end = 2 * z + 2 < a.mqa_heads ? 2 * z + 2 : a.mqa_heads;
  const int64_t t = first_token + (planted::is(planted::kTokensOnGridY) ? blockIdx.y : blockIdx.x);
  const unsigned task = planted::is(planted::kTokensOnGridY) ? blockIdx.x : blockIdx.y;
  if (task == 0) {
    for (int64_t head = 2 * z; head < heads_end; ++head) mqa_head(p, t, head);
  } else if (task == 1) {
    if (!a.has_indexer || z >= a.indexer_heads) return;
    if (a.index_dim <= 4 * kWarp) {
      indexer_head<4>(p, t, z);
    } else {
      indexer_head<DimLimits::kMaxIndexDim / kWarp>(p, t, z);
    }
  } else {
    if (p.nope_task == KernelParams::NopeTask::kNone) return;
    for (int64_t head = 2 * z; head < heads_end; ++head) nope_head(p, t, head);
  }
}

}  // namespace
}  // namespace legacy

std::string launch_legacy_kernel(const KernelParams& params, void* stream) {
  const FusedQArgs& a = params.args;
  const int64_t mqa_pairs = (a.mqa_heads + 1) / 2;
  int64_t z = a.has_indexer ? std::max(mqa_pairs, a.indexer_heads) : mqa_pairs;
  if (planted::is(planted::kGridSizedByNi) && a.has_indexer) z = a.indexer_heads;
  for (int64_t first = 0; first < a.num_tokens; first += INT_MAX) {
    const unsigned tokens = static_cast<unsigned>(std::min<int64_t>(a.num_tokens - first, INT_MAX));
    // (planted kTokensOnGridY: tokens on y, which stops at 65535)
    const dim3 grid = planted::is(planted::kTokensOnGridY) ? dim3(3, tokens, static_cast<unsigned>(z))
                                                           : dim3(tokens, 3, static_cast<unsigned>(z));
    legacy::fused_q_legacy_kernel<<<grid, legacy::kWarp, 0, static_cast<cudaStream_t>(stream)>>>(
        params, first);
    std::string error = launch_error("cuda-legacy");
    if (!error.empty()) return error;
  }
  return "";
}

}  // namespace qcheck::cuda
