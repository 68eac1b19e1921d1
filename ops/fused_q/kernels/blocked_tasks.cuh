// The three tasks of the token-blocked kernel (ops/fused_q/kernels/blocked_kernel.cu).
// One CUDA block of kThreads threads (a multiple of 32) runs one program:
// 16 tokens x one head of one task. Each task has an 8-element vector path (16-byte loads)
// and an element path for views that are not aligned for it; both give the
// oracle's bits. kGuardTail = false is the planted bug kMissingTailGuard:
// the last block then reads and writes the rows of tokens past T.
#pragma once

#include "ops/fused_q/kernels/rope_chunks.cuh"

namespace qcheck::cuda::blocked {

using namespace qcheck::cuda::device;

constexpr int kTokensPerBlock = 16;

// i / divisor for the small non-negative indices of the staging and compute
// loops: a shift when the divisor is a power of two (the row lengths of every
// real model), else a division. A division by a run-time int costs about 20
// instructions, a visible share of a program that moves only a few KB.
struct RowDivider {
  int divisor;
  int shift;  // log2(divisor), or -1 when it is not a power of two
  __device__ __forceinline__ explicit RowDivider(int d) : divisor(d), shift(-1) {
#ifdef __CUDA_ARCH__  // __ffs exists only in the device pass
    if ((d & (d - 1)) == 0) shift = __ffs(d) - 1;
#endif
  }
  __device__ __forceinline__ int quotient(int i) const { return shift >= 0 ? i >> shift : i / divisor; }
};

// R of a launch: the model's in a kernel compiled for the model shape
// (kernel_params.h model_shape_kernel), where it is then a constant.
template <bool kModelShape>
__device__ __forceinline__ int rope_dim_of(const FusedQArgs& a) {
  return kModelShape ? kModelRopeDim : static_cast<int>(a.rope_dim);
}

template <bool kGuardTail>
__device__ __forceinline__ bool token_live(const FusedQArgs& a, int64_t token) {
  return !kGuardTail || token < a.num_tokens;
}

// ---- Task 1: MQA q_pe RoPE (interleaved) into query_out's rope part. -------

// Writes 8 (or 1) RoPE'd values of [token, head, j0..] to query_out.
__device__ __forceinline__ int64_t mqa_out_offset(const FusedQArgs& a, int64_t token,
                                                  int64_t head, int j0) {
  const int64_t front = a.query_path == QueryPath::kBf16Separate ? 0 : a.nope_dim;
  return row_offset(a.query_out, token, head) + front + j0;
}

// Stores 8 RoPE'd values at element `out` of query_out: e4m3 of value /
// q_scale on the fp8 path, bf16 otherwise.
__device__ __forceinline__ void store_mqa_chunk(const FusedQArgs& a, bool fp8, const Divisor& q_scale, int64_t out,
                                                float r[8]) {
  if (fp8) {
#pragma unroll
    for (int e = 0; e < 8; ++e) r[e] = divide(r[e], q_scale);
    store_e4m3x8(static_cast<uint8_t*>(a.query_out.data) + out, r);
  } else {
    store_bf16x8(static_cast<uint16_t*>(a.query_out.data) + out, r);
  }
}

// Planted kHasIndexerIgnored: a shared (no-indexer) layer's MQA program
// still writes the weight of "its" indexer head (a zero).
__device__ __forceinline__ void planted_weight_write(const FusedQArgs& a, int64_t token, int64_t head) {
  if constexpr (planted::is(planted::kHasIndexerIgnored)) {
    if (!a.has_indexer && head < a.indexer_heads) store_weight(a, token, head, 0.0f);
  }
}

template <bool kGuardTail, int kThreads, bool kModelShape = false>
__device__ void mqa_task(const KernelParams& p, int64_t first_token, int64_t head) {
  const FusedQArgs& a = p.args;
  const int R = rope_dim_of<kModelShape>(a);
  const int64_t half = R / 2;
  const bool fp8 = a.query_path == QueryPath::kFp8Packed;
  // Only the fp8 path divides; the bf16 paths skip the reciprocal's
  // branches, which would otherwise open every program's dependent chain.
  const Divisor q_scale = fp8 ? make_divisor(p.q_scale) : Divisor{1.0f, 1.0f, true};
  if (p.mqa_vectors) {
    const int chunks = R / kVectorElements;
    const RowDivider row_of(chunks);
    for (int item = threadIdx.x; item < kTokensPerBlock * chunks; item += kThreads) {
      const int row = row_of.quotient(item);
      const int j0 = (item - row * chunks) * kVectorElements;
      const int64_t t = first_token + row;
      if (!token_live<kGuardTail>(a, t)) continue;
      // In the order of the dependent chain (indexer_rows says why).
      const int64_t position = __ldg(a.positions + t);
      float x[8], cos[4], sin[4], r[8];
      load_bf16x8(input_row<uint16_t>(a.q_pe, t, head) + j0, x);
      const int64_t out = mqa_out_offset(a, t, head, j0);
      const int64_t cache_start = clamp_position(position, p.mqa_cache_last_row) * a.mqa_cache.row_stride;
      load_interleaved_cos_sin(a.mqa_cache, cache_start, half, j0, p.mqa_cache_vectors, cos, sin);
      if constexpr (planted::is(planted::kMqaPairsWrong)) {
#pragma unroll
        for (int e = 0; e < 8; ++e) r[e] = rope_term(x[e], cos[e % 4], e < 4 ? -x[e + 4] : x[e - 4], sin[e % 4]);
      } else {
        rope_interleaved_chunk(x, cos, sin, r, mqa_r1_unfused(fp8));
      }
      store_mqa_chunk(a, fp8, q_scale, out, r);
      planted_weight_write(a, t, head);
    }
    return;
  }
  for (int item = threadIdx.x; item < kTokensPerBlock * R; item += kThreads) {
    const int row = item / R;
    const int j = item - row * R;
    const int64_t t = first_token + row;
    if (!token_live<kGuardTail>(a, t)) continue;
    const uint16_t* in = input_row<uint16_t>(a.q_pe, t, head);
    const float x = load_bf16(in + j);
    const int partner_j = planted::is(planted::kMqaPairsWrong) && (j ^ 4) < R ? (j ^ 4) : (j ^ 1);
    const float partner = load_bf16(in + partner_j);
    const int64_t cache_start = cache_row(a.positions, t, p.mqa_cache_last_row) * a.mqa_cache.row_stride;
    const float c = load_cache_value(a.mqa_cache, cache_start + j / 2);
    const float s = load_cache_value(a.mqa_cache, cache_start + half + j / 2);
    const float r = rope_term(x, c, (j & 1) == 0 ? -partner : partner, s, (j & 1) == 0 && mqa_r1_unfused(fp8));
    const int64_t out = mqa_out_offset(a, t, head, j);
    if (fp8) {
      store_e4m3(static_cast<uint8_t*>(a.query_out.data) + out, divide(r, q_scale));
    } else {
      static_cast<uint16_t*>(a.query_out.data)[out] = bf16_from_f32(r);
    }
    if (j == 0) planted_weight_write(a, t, head);
  }
}

// ---- Task 3: ql_nope into query_out's front (fp8 quantize or bf16 copy). ---

template <bool kGuardTail, int kThreads>
__device__ void nope_task(const KernelParams& p, int64_t first_token, int64_t head) {
  const FusedQArgs& a = p.args;
  const int L = static_cast<int>(a.nope_dim);
  const bool fp8 = p.nope_task == KernelParams::NopeTask::kQuantizeFp8;
  const Divisor q_scale = make_divisor(p.q_scale);
  if (p.nope_vectors) {
    // Four 16-byte loads in flight per thread before the first store.
    constexpr int kUnroll = 4;
    const int chunks = L / kVectorElements;
    const RowDivider row_of(chunks);
    const int items = kTokensPerBlock * chunks;
    for (int base = threadIdx.x; base < items; base += kUnroll * kThreads) {
      uint4 raw[kUnroll];
      int64_t in_offset[kUnroll], out_offset[kUnroll];
      bool live[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int item = base + u * kThreads;
        const int row = row_of.quotient(item);
        const int j0 = (item - row * chunks) * kVectorElements;
        const int64_t t = first_token + row;
        live[u] = item < items && token_live<kGuardTail>(a, t);
        in_offset[u] = planted::is(planted::kNopeContiguousAssumed) ? (t * a.mqa_heads + head) * L + j0
                                                                     : row_offset(a.ql_nope, t, head) + j0;
        out_offset[u] = row_offset(a.query_out, t, head) + j0;
        if (live[u]) raw[u] = load_raw16(static_cast<const uint16_t*>(a.ql_nope.data) + in_offset[u]);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if (!live[u]) continue;
        if (fp8) {
          float v[8];
          f32_from_bf16x8(raw[u], v);
#pragma unroll
          for (int i = 0; i < 8; ++i) v[i] = divide(v[i], q_scale);
          store_e4m3x8(static_cast<uint8_t*>(a.query_out.data) + out_offset[u], v);
        } else {
          store_raw16(static_cast<uint16_t*>(a.query_out.data) + out_offset[u], raw[u]);
        }
      }
    }
    return;
  }
  for (int item = threadIdx.x; item < kTokensPerBlock * L; item += kThreads) {
    const int row = item / L;
    const int j = item - row * L;
    const int64_t t = first_token + row;
    if (!token_live<kGuardTail>(a, t)) continue;
    const uint16_t bits = __ldg(input_row<uint16_t>(a.ql_nope, t, head) + j);
    const int64_t out = row_offset(a.query_out, t, head) + j;
    if (fp8) {
      store_e4m3(static_cast<uint8_t*>(a.query_out.data) + out, divide(f32_from_bf16(bits), q_scale));
    } else {
      static_cast<uint16_t*>(a.query_out.data)[out] = bits;
    }
  }
}

}  // namespace qcheck::cuda::blocked
