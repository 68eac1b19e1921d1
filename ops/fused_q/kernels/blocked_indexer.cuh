// Task 2 of the token-blocked kernel: indexer RoPE on the first R of D dims,
// one UE8M0 scale per (token, head) row, e4m3 codes and the scaled weight.
//
// Register path (views aligned for 16-byte vectors, cos/sin rows aligned for
// 4-value loads, D <= 128: the real models): a team of 16 lanes owns one
// row, lane l its chunk l (elements 8l .. 8l + 7) in registers, so the row's
// amax is reduced with warp shuffles inside the team and the codes are
// written from the same registers. A team handles ROWS rows at once (their
// loads all in flight together): 1 with 256 threads (a team per token), 2
// with 64. It is compiled for each RoPE style and cache dtype (4 copies),
// and the 256-thread configuration also has those 4 with the model's R and
// D fixed: at small T the launch's time is this task's chain of dependent
// steps, and run-time branches and arithmetic on the layout and the shape
// inside the chain cost more than the code.
// Everything else (D up to 512, views not aligned for vectors, R not a
// multiple of 8, 16 for NeoX) takes the two-pass path: a warp per row walks
// the row twice in chunks of V = 8 or 1 elements, once for the amax and once
// for the codes, recomputing each element's RoPE (the same bits both times)
// instead of holding up to 512 values in registers.
#pragma once

#include "ops/fused_q/kernels/blocked_tasks.cuh"

namespace qcheck::cuda::blocked {

// The indexer's layout fixed at compile time: RoPE style and cos/sin cache
// dtype, and with kModelShape also R and D (kModelRopeDim, kModelIndexDim;
// the MQA task then takes R from here too). The register path is compiled
// once per layout.
template <bool kNeoxRope, bool kF32CacheRows, bool kModelShapeFixed>
struct IndexerLayout {
  static constexpr bool kFixed = true;
  static constexpr bool kNeox = kNeoxRope;
  static constexpr bool kF32Cache = kF32CacheRows;
  static constexpr bool kModelShape = kModelShapeFixed;
};

// A kernel instance that reads the layout and the shape from the args at
// run time.
struct RuntimeIndexerLayout {
  static constexpr bool kFixed = false;
  static constexpr bool kModelShape = false;
};

// Returns f(IndexerLayout<..., kModelShape>{}) for the args' indexer layout:
// the one place the args are mapped to a compiled layout, on the device
// (run-time kernels, kModelShape false) and on the host (the 256-thread
// configuration picks its kernel, kModelShape true).
#pragma nv_exec_check_disable
template <bool kModelShape, typename F>
__host__ __device__ __forceinline__ auto with_indexer_layout(const FusedQArgs& a, F&& f) {
  const bool neox = a.indexer_rope == RopeStyle::kNeox;
  const bool f32_cache = a.indexer_cache.dtype == FloatType::kF32;
  if (neox) {
    return f32_cache ? f(IndexerLayout<true, true, kModelShape>{}) : f(IndexerLayout<true, false, kModelShape>{});
  }
  return f32_cache ? f(IndexerLayout<false, true, kModelShape>{}) : f(IndexerLayout<false, false, kModelShape>{});
}

// The position-independent half of the 8-element chunk at j0 (a multiple of
// 8) of a row: whether it is RoPE'd, where its cos/sin values sit in a cache
// row, and (NeoX) the bits of its partner chunk j0 +- R/2, loaded here.
// None of it depends on the row's position, so it can be worked out while
// the position's load is in flight.
struct IndexerChunkPlan {
  bool rope;          // j0 < R; else the chunk passes through unchanged
  bool minus;         // NeoX: j0 < R/2 (r = x*c - partner*s)
  int cos_index;      // element of the chunk's first cos in a cache row
  int sin_index;      // cos_index + R/2
  uint4 partner_raw;  // NeoX: the partner chunk's bf16 bits
};

// A pass-through chunk gets a plan that reads the start of the cache row and
// its own bits as partner: every address stays valid, so the chunk's loads
// need no branch (a branch would let the compiler sink the position's load
// behind waits for other values).
template <bool kNeox>
__device__ __forceinline__ IndexerChunkPlan plan_indexer_chunk(int R, const uint16_t* in, int j0) {
  const int half = R / 2;
  IndexerChunkPlan plan;
  plan.rope = j0 < R;
  if constexpr (kNeox) {
    plan.minus = j0 < half;
    plan.cos_index = !plan.rope ? 0 : plan.minus ? j0 : j0 - half;
    plan.partner_raw = load_raw16(in + (!plan.rope ? j0 : plan.minus ? j0 + half : j0 - half));
  } else {
    plan.minus = false;
    plan.cos_index = plan.rope ? j0 / 2 : 0;
    plan.partner_raw = make_uint4(0, 0, 0, 0);
  }
  plan.sin_index = plan.cos_index + half;
  return plan;
}

// The 8 RoPE'd (or passed-through: dims R..D-1 are copied exactly) values of
// a planned chunk with input values x; `cache_start` is the element offset
// of the row's cos/sin row, read with vector loads.
template <typename Layout>
__device__ __forceinline__ void rope_indexer_chunk(const FusedQArgs& a, const IndexerChunkPlan& plan,
                                                   const float x[8], int64_t cache_start, float out[8]) {
  constexpr FloatType kCache = Layout::kF32Cache ? FloatType::kF32 : FloatType::kBf16;
  const CacheView& cache = a.indexer_cache;
  float rotated[8];
  if constexpr (!Layout::kNeox) {
    float cos[4], sin[4];
    load_cache4_vector<kCache>(cache, cache_start + plan.cos_index, cos);
    load_cache4_vector<kCache>(cache, cache_start + plan.sin_index, sin);
    rope_interleaved_chunk(x, cos, sin, rotated, kIndexerTermsUnfused, kIndexerTermsUnfused);
  } else {
    float partner[8], cos[8], sin[8];
    f32_from_bf16x8(plan.partner_raw, partner);
    load_cache4_vector<kCache>(cache, cache_start + plan.cos_index, cos);
    load_cache4_vector<kCache>(cache, cache_start + plan.cos_index + 4, cos + 4);
    load_cache4_vector<kCache>(cache, cache_start + plan.sin_index, sin);
    load_cache4_vector<kCache>(cache, cache_start + plan.sin_index + 4, sin + 4);
    rope_neox_chunk(x, partner, cos, sin, plan.minus, rotated, kIndexerTermsUnfused);
  }
#pragma unroll
  for (int e = 0; e < 8; ++e) out[e] = plan.rope ? rotated[e] : x[e];
}

// RoPE'd (or passed-through) values of the V elements of [t, head] from j0
// (the two-pass path: any layout, chosen at run time).
template <int V>
__device__ __forceinline__ void indexer_chunk(const FusedQArgs& a, const KernelParams& p,
                                              const uint16_t* in, int64_t cache_start, int j0,
                                              float out[V]) {
  if constexpr (V == kVectorElements) {
    if (p.indexer_cache_vectors) {
      float x[8];
      load_bf16x8(in + j0, x);
      with_indexer_layout<false>(a, [&](auto layout) {
        using Layout = decltype(layout);
        const IndexerChunkPlan plan = plan_indexer_chunk<Layout::kNeox>(static_cast<int>(a.rope_dim), in, j0);
        rope_indexer_chunk<Layout>(a, plan, x, cache_start, out);
      });
    } else {
#pragma unroll
      for (int e = 0; e < V; ++e) indexer_chunk<1>(a, p, in, cache_start, j0 + e, out + e);
    }
  } else {
    static_assert(V == 1, "the element path handles one element");
    const int R = static_cast<int>(a.rope_dim);
    const int half = R / 2;
    const int j = j0;
    const float x = load_bf16(in + j);
    if (j >= R) {
      out[0] = x;
      return;
    }
    bool minus;
    int partner, index;
    if (a.indexer_rope == RopeStyle::kNeox) {
      minus = j < half;
      partner = minus ? j + half : j - half;
      index = minus ? j : j - half;
    } else {
      minus = (j & 1) == 0;
      partner = j ^ 1;
      index = j / 2;
    }
    const float xp = load_bf16(in + partner);
    const float c = load_cache_value(a.indexer_cache, cache_start + index);
    const float s = load_cache_value(a.indexer_cache, cache_start + half + index);
    out[0] = rope_term(x, c, minus ? -xp : xp, s, kIndexerTermsUnfused);
  }
}

// Largest |value| of a chunk, NaN ignored (amax_step's rule), as a tree: 3
// dependent steps where a running maximum takes 8. maxNum that ignores
// quiet NaN is associative and commutative, so the order cannot change the
// result (|x| of a NaN is a quiet NaN here: fabsf only clears the sign).
__device__ __forceinline__ float chunk_amax(const float v[8]) {
  const float m01 = fmaxf(fabsf(v[0]), fabsf(v[1])), m23 = fmaxf(fabsf(v[2]), fabsf(v[3]));
  const float m45 = fmaxf(fabsf(v[4]), fabsf(v[5])), m67 = fmaxf(fabsf(v[6]), fabsf(v[7]));
  return fmaxf(fmaxf(m01, m23), fmaxf(m45, m67));
}

// The register path (see the top of the file). Each row's position is
// loaded first: its cos/sin row waits for it, and that chain of two loads
// sets the program's latency at small T.
template <typename Layout, int ROWS, bool kGuardTail, int kThreads>
__device__ void indexer_rows(const KernelParams& p, int64_t first_token, int64_t head) {
  constexpr int G = 16;  // lanes per row: D <= 128 is at most 16 chunks of 8
  constexpr int kTeams = kThreads / G;
  static_assert(kTokensPerBlock % (kTeams * ROWS) == 0, "every warp runs the same passes");
  constexpr int V = kVectorElements;
  const FusedQArgs& a = p.args;
  const int R = rope_dim_of<Layout::kModelShape>(a);
  const int D = Layout::kModelShape ? kModelIndexDim : static_cast<int>(a.index_dim);
  const int team = threadIdx.x / G;
  const int lane = threadIdx.x % G;
  const bool has_chunk = lane * V < D;

  for (int row_base = team; row_base < kTokensPerBlock; row_base += kTeams * ROWS) {
    float v[ROWS][V];
    float amax[ROWS], weight[ROWS];
    bool live[ROWS];
    int64_t out[ROWS], weight_out[ROWS];
#pragma unroll
    for (int rr = 0; rr < ROWS; ++rr) {
      const int64_t t = first_token + row_base + rr * kTeams;
      live[rr] = token_live<kGuardTail>(a, t);
      amax[rr] = amax_start();
      weight[rr] = 0.0f;
      if (!live[rr]) continue;
      const int64_t position = __ldg(a.positions + t);
      const uint16_t* in = input_row<uint16_t>(a.index_q, t, head);
      // Raw bits, unpacked only where used, and no branch around the loads
      // (a lane past D works on chunk 0 and drops it): an unpack inside a
      // branch would make the lane wait for these values there.
      const int j0 = has_chunk ? lane * V : 0;
      const uint4 raw = load_raw16(in + j0);
      const IndexerChunkPlan plan = plan_indexer_chunk<Layout::kNeox>(R, in, j0);
      weight[rr] = load_weight(a, t, head);  // the same element in every lane: one request
      out[rr] = row_offset(a.index_q_fp8, t, head) + lane * V;
      weight_out[rr] = row_offset(a.index_weights_out, t, head);
      float x[V];
      f32_from_bf16x8(raw, x);
      const int64_t cache_start =
          clamp_position(position, p.indexer_cache_last_row) * a.indexer_cache.row_stride;
      rope_indexer_chunk<Layout>(a, plan, x, cache_start, v[rr]);
      if constexpr (planted::is(planted::kBf16BeforeQuant)) {
#pragma unroll
        for (int e = 0; e < V; ++e) v[rr][e] = indexer_value(v[rr][e]);
      }
      if (has_chunk) amax[rr] = chunk_amax(v[rr]);
    }
    // The row's amax over its team; every lane of the warp takes part.
#pragma unroll
    for (int rr = 0; rr < ROWS; ++rr) {
#pragma unroll
      for (int offset = planted::is(planted::kModelShapeHalfAmax) && Layout::kModelShape ? G / 4 : G / 2;
           offset > 0; offset /= 2) {
        amax[rr] = fmaxf(amax[rr], __shfl_xor_sync(0xFFFFFFFFu, amax[rr], offset));
      }
    }
#pragma unroll
    for (int rr = 0; rr < ROWS; ++rr) {
      if (!live[rr]) continue;
      const float scale = ue8m0_scale_from_amax(amax[rr]);
      if (has_chunk) {
        const float reciprocal = reciprocal_of_ue8m0_scale(scale);
        float q[V];
#pragma unroll
        for (int e = 0; e < V; ++e) q[e] = __fmul_rn(v[rr][e], reciprocal);
        store_e4m3x8(static_cast<uint8_t*>(a.index_q_fp8.data) + out[rr], q);
      }
      if (lane == 0) {
        store_weight_at(a, weight_out[rr], indexer_weight(weight[rr], scale, p.softmax_scale, p.head_scale));
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
    float amax = amax_start();
#pragma unroll 1
    for (int j0 = lane * V; j0 < D; j0 += 32 * V) {
      float values[V];
      indexer_chunk<V>(a, p, in, cache_start, j0, values);
#pragma unroll
      for (int e = 0; e < V; ++e) values[e] = indexer_value(values[e]);
#pragma unroll
      for (int e = 0; e < V; ++e) amax = amax_step(amax, values[e]);
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
      amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, offset));
    }
    const float scale = ue8m0_scale_from_amax(amax);
    const float reciprocal = reciprocal_of_ue8m0_scale(scale);
    uint8_t* out = output_row<uint8_t>(a.index_q_fp8, t, head);
#pragma unroll 1
    for (int j0 = lane * V; j0 < D; j0 += 32 * V) {
      float values[V];
      indexer_chunk<V>(a, p, in, cache_start, j0, values);
#pragma unroll
      for (int e = 0; e < V; ++e) values[e] = indexer_value(values[e]);
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

// The indexer task of a kernel instance compiled for `Layout`. A fixed
// layout runs the register path directly: the host chose the kernel
// (blocked_kernel.cu) for the small-T configuration, whose latency the
// run-time choices would lengthen (a chain of uniform branches, each a jump
// to code far away, about 0.1 us at T = 1). RuntimeIndexerLayout chooses here.
template <bool kGuardTail, int kThreads, typename Layout = RuntimeIndexerLayout>
__device__ void indexer_task(const KernelParams& p, int64_t first_token, int64_t head) {
  // Two rows per team in flight, or one when the block has a team per row.
  constexpr int kRows = kThreads / 16 >= kTokensPerBlock ? 1 : 2;
  if constexpr (Layout::kFixed) {
    indexer_rows<Layout, kRows, kGuardTail, kThreads>(p, first_token, head);
  } else if (p.indexer_registers) {
    with_indexer_layout<false>(p.args, [&](auto layout) {
      indexer_rows<decltype(layout), kRows, kGuardTail, kThreads>(p, first_token, head);
    });
  } else if (!p.indexer_vectors) {
    indexer_rows_two_pass<1, kGuardTail, kThreads>(p, first_token, head);
  } else {
    indexer_rows_two_pass<kVectorElements, kGuardTail, kThreads>(p, first_token, head);
  }
}

}  // namespace qcheck::cuda::blocked
