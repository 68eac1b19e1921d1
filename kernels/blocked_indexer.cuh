// Task 2 of the token-blocked kernel: indexer RoPE on the first R of D dims,
// one UE8M0 scale per (token, head) row, e4m3 codes and the scaled weight.
//
// Thread mapping of the vector path: a team of G lanes (G divides 32) owns
// one row; lane l holds chunks l, l + G, ... (KMAX of them, 8 elements each)
// in registers, so the row's amax is reduced with warp shuffles inside the
// team and the codes are written from the same registers. A team handles
// ROWS rows at once (their loads are all in flight together); kThreads / G
// teams cover the 16 tokens.
//   G = 16, KMAX = 1, ROWS = 1 with 256 threads, 2 with 64: D <= 128 (the
//   real models' D = 128)
// Wider rows (D up to 512) and views not aligned for 16-byte vectors (or R
// not a multiple of 8, 16 for NeoX) take the two-pass path: a warp per row
// walks the row twice in chunks of V = 8 or 1 elements, once for the amax
// and once for the codes, recomputing each element's RoPE (the same bits
// both times) instead of holding up to 512 values in registers.
#pragma once

#include "kernels/blocked_tasks.cuh"

namespace qcheck::cuda::blocked {

// RoPE'd (or passed-through) values of the V elements of [t, head] from j0.
template <int V>
__device__ __forceinline__ void indexer_chunk(const FusedQArgs& a, const KernelParams& p,
                                              const uint16_t* in, int64_t cache_start, int j0,
                                              float out[V]) {
  const int R = static_cast<int>(a.rope_dim);
  const int half = R / 2;
  const bool neox = a.indexer_rope == RopeStyle::kNeox;
  const CacheView& cache = a.indexer_cache;
  if constexpr (V == kVectorElements) {
    float x[8];
    load_bf16x8(in + j0, x);
    if (j0 >= R) {
#pragma unroll
      for (int e = 0; e < 8; ++e) out[e] = x[e];  // dims R..D-1 pass through exactly
    } else if (!neox) {
      float cos[4], sin[4];
      load_interleaved_cos_sin(cache, cache_start, half, j0, p.indexer_cache_vectors, cos, sin);
      rope_interleaved_chunk(x, cos, sin, out);
    } else {
      const bool minus = j0 < half;
      const int index = minus ? j0 : j0 - half;
      float partner[8], cos[8], sin[8];
      load_bf16x8(in + (minus ? j0 + half : j0 - half), partner);
      load_cache4(cache, cache_start + index, p.indexer_cache_vectors, cos);
      load_cache4(cache, cache_start + index + 4, p.indexer_cache_vectors, cos + 4);
      load_cache4(cache, cache_start + half + index, p.indexer_cache_vectors, sin);
      load_cache4(cache, cache_start + half + index + 4, p.indexer_cache_vectors, sin + 4);
      rope_neox_chunk(x, partner, cos, sin, minus, out);
    }
  } else {
    static_assert(V == 1, "the element path handles one element");
    const int j = j0;
    const float x = load_bf16(in + j);
    if (j >= R) {
      out[0] = x;
      return;
    }
    bool minus;
    int partner, index;
    if (neox) {
      minus = j < half;
      partner = minus ? j + half : j - half;
      index = minus ? j : j - half;
    } else {
      minus = (j & 1) == 0;
      partner = j ^ 1;
      index = j / 2;
    }
    const float xp = load_bf16(in + partner);
    const float c = load_cache_value(cache, cache_start + index);
    const float s = load_cache_value(cache, cache_start + half + index);
    out[0] = rope_term(x, c, minus ? -xp : xp, s);
  }
}

template <int G, int KMAX, int ROWS, bool kGuardTail, int kThreads>
__device__ void indexer_rows(const KernelParams& p, int64_t first_token, int64_t head) {
  static_assert(32 % G == 0, "a team lives inside one warp");
  constexpr int kTeams = kThreads / G;
  static_assert(kTokensPerBlock % (kTeams * ROWS) == 0, "every warp runs the same passes");
  constexpr int V = kVectorElements;
  const FusedQArgs& a = p.args;
  const int chunks = static_cast<int>(a.index_dim) / V;
  const int team = threadIdx.x / G;
  const int lane = threadIdx.x % G;

  for (int row_base = team; row_base < kTokensPerBlock; row_base += kTeams * ROWS) {
    float v[ROWS][KMAX][V];
    float amax[ROWS], weight[ROWS];
    bool live[ROWS];
#pragma unroll
    for (int rr = 0; rr < ROWS; ++rr) {
      const int64_t t = first_token + row_base + rr * kTeams;
      live[rr] = token_live<kGuardTail>(a, t);
      amax[rr] = 0.0f;
      weight[rr] = 0.0f;
      if (!live[rr]) continue;
      if (lane == 0) weight[rr] = load_weight(a, t, head);
      const uint16_t* in = input_row<uint16_t>(a.index_q, t, head);
      const int64_t cache_start =
          cache_row(a.positions, t, p.indexer_cache_last_row) * a.indexer_cache.row_stride;
#pragma unroll
      for (int k = 0; k < KMAX; ++k) {
        const int chunk = lane + k * G;
        if (chunk >= chunks) continue;
        indexer_chunk<V>(a, p, in, cache_start, chunk * V, v[rr][k]);
#pragma unroll
        for (int e = 0; e < V; ++e) amax[rr] = amax_step(amax[rr], v[rr][k][e]);
      }
    }
    // The row's amax over its team; every lane of the warp takes part.
#pragma unroll
    for (int rr = 0; rr < ROWS; ++rr) {
#pragma unroll
      for (int offset = G / 2; offset > 0; offset /= 2) {
        amax[rr] = fmaxf(amax[rr], __shfl_xor_sync(0xFFFFFFFFu, amax[rr], offset));
      }
    }
#pragma unroll
    for (int rr = 0; rr < ROWS; ++rr) {
      if (!live[rr]) continue;
      const int64_t t = first_token + row_base + rr * kTeams;
      const float scale = ue8m0_scale_from_amax(amax[rr]);
      const float reciprocal = exact_reciprocal_of_pow2(scale);
      uint8_t* out = output_row<uint8_t>(a.index_q_fp8, t, head);
#pragma unroll
      for (int k = 0; k < KMAX; ++k) {
        const int chunk = lane + k * G;
        if (chunk >= chunks) continue;
        float q[V];
#pragma unroll
        for (int e = 0; e < V; ++e) q[e] = __fmul_rn(v[rr][k][e], reciprocal);
        store_e4m3x8(out + chunk * V, q);
      }
      if (lane == 0) {
        store_weight(a, t, head, indexer_weight(weight[rr], scale, p.softmax_scale, p.head_scale));
      }
    }
  }
}

template <int V, bool kGuardTail, int kThreads>
__device__ void indexer_rows_two_pass(const KernelParams& p, int64_t first_token, int64_t head) {
  constexpr int kWarps = kThreads / 32;
  const FusedQArgs& a = p.args;
  const int D = static_cast<int>(a.index_dim);
  const int lane = threadIdx.x % 32;
  for (int row = threadIdx.x / 32; row < kTokensPerBlock; row += kWarps) {
    const int64_t t = first_token + row;
    if (!token_live<kGuardTail>(a, t)) continue;  // uniform across the warp
    const uint16_t* in = input_row<uint16_t>(a.index_q, t, head);
    const int64_t cache_start =
        cache_row(a.positions, t, p.indexer_cache_last_row) * a.indexer_cache.row_stride;
    float amax = 0.0f;
#pragma unroll 1
    for (int j0 = lane * V; j0 < D; j0 += 32 * V) {
      float values[V];
      indexer_chunk<V>(a, p, in, cache_start, j0, values);
#pragma unroll
      for (int e = 0; e < V; ++e) amax = amax_step(amax, values[e]);
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
      amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, offset));
    }
    const float scale = ue8m0_scale_from_amax(amax);
    const float reciprocal = exact_reciprocal_of_pow2(scale);
    uint8_t* out = output_row<uint8_t>(a.index_q_fp8, t, head);
#pragma unroll 1
    for (int j0 = lane * V; j0 < D; j0 += 32 * V) {
      float values[V];
      indexer_chunk<V>(a, p, in, cache_start, j0, values);
#pragma unroll
      for (int e = 0; e < V; ++e) values[e] = __fmul_rn(values[e], reciprocal);
      if constexpr (V == 1) {
        store_e4m3(out + j0, values[0]);
      } else {
        store_e4m3x8(out + j0, values);
      }
    }
    if (lane == 0) {
      const float w = load_weight(a, t, head);
      store_weight(a, t, head, indexer_weight(w, scale, p.softmax_scale, p.head_scale));
    }
  }
}

template <bool kGuardTail, int kThreads>
__device__ void indexer_task(const KernelParams& p, int64_t first_token, int64_t head) {
  if (!p.indexer_vectors) {
    indexer_rows_two_pass<1, kGuardTail, kThreads>(p, first_token, head);
  } else if (p.args.index_dim <= 16 * kVectorElements) {
    // Two rows per team in flight, or one when the block has a team per row.
    constexpr int kRows = kThreads / 16 >= kTokensPerBlock ? 1 : 2;
    indexer_rows<16, 1, kRows, kGuardTail, kThreads>(p, first_token, head);
  } else {
    indexer_rows_two_pass<kVectorElements, kGuardTail, kThreads>(p, first_token, head);
  }
}

}  // namespace qcheck::cuda::blocked
