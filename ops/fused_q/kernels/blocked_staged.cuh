// The staged fast path of the token-blocked kernel's MQA and indexer tasks
// (R <= 64, D <= 128, views aligned for 16-byte vectors, cos/sin rows 16-byte
// aligned: the real models). A program first copies its 16 input rows and
// their 16 cos/sin rows into shared memory with cp.async (16 bytes per
// instruction, no registers held while in flight), then computes from there.
// A program's bytes in flight are then bounded by shared memory, not by
// registers, so small blocks (32 or 64 threads, 16 or more programs per SM)
// keep many programs, and their loads, in flight on every SM: these tasks
// move only 2-6 KB per program. Used from T = 512 on (blocked_kernel.cu).
// Same numerics as the register path (device_numerics.cuh, rope_chunks.cuh).
#pragma once

#include "ops/fused_q/kernels/blocked_tasks.cuh"

namespace qcheck::cuda::blocked {

// Largest staged rows: index_q D * 2 <= 256 bytes, q_pe R * 2 <= 128 bytes,
// an f32 cos/sin row R * 4 <= 256 bytes.
constexpr int kStagedMaxRowBytes = 256;

struct Stage {
  alignas(16) uint8_t data[kTokensPerBlock * kStagedMaxRowBytes];
  alignas(16) uint8_t cache[kTokensPerBlock * kStagedMaxRowBytes];
};

__device__ __forceinline__ void cp_async16(void* shared, const void* global) {
  const auto address = static_cast<uint32_t>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(address), "l"(global) : "memory");
}

__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::: "memory");
}

// Tokens of this program that are processed (all 16 without the tail guard:
// the planted bug then reads and writes rows past T).
template <bool kGuardTail>
__device__ __forceinline__ int live_rows(const FusedQArgs& a, int64_t first_token) {
  if (!kGuardTail) return kTokensPerBlock;
  const int64_t left = a.num_tokens - first_token;
  return left < kTokensPerBlock ? static_cast<int>(left) : kTokensPerBlock;
}

// Issues the copies of the program's input rows [t, head, 0..row_bytes) and
// of the cos/sin rows of their positions into `stage`. The caller waits with
// cp_async_wait_all() and __syncthreads().
//
// A row is `chunks` 16-byte pieces, a power of two that divides kThreads
// (make_kernel_params allows the staged path only then), so every thread
// copies one fixed column of rows r0, r0 + step, ...: its source pointer
// advances by a constant instead of being recomputed with 64-bit multiplies
// for every piece (which cost about 20 instructions per 16 bytes).
template <int kThreads>
__device__ __forceinline__ void stage_rows(const InputView& view, int row_bytes, const CacheView& cache,
                                           int rope_dim, int64_t last_row, const int64_t* positions,
                                           int64_t first_token, int64_t head, int rows, Stage& stage) {
  {
    const RowDivider row_of(row_bytes / 16);
    const int r0 = row_of.quotient(threadIdx.x);
    const int column = threadIdx.x - r0 * row_of.divisor;
    const int step = kThreads / row_of.divisor;
    const auto* source = static_cast<const uint8_t*>(view.data) +
                         2 * row_offset(view, first_token + r0, head) + 16 * column;
    const int64_t source_step = 2 * step * view.token_stride;
    for (int r = r0; r < rows; r += step, source += source_step) {
      cp_async16(stage.data + r * row_bytes + 16 * column, source);
    }
  }
  // Lane r < rows of every warp looks up row r's position; every lane runs
  // the same number of iterations, so the shuffle is safe.
  const int lane = threadIdx.x % 32;
  const int64_t my_row = lane < rows ? cache_row(positions, first_token + lane, last_row) : 0;
  const int element_bytes = cache.dtype == FloatType::kF32 ? 4 : 2;
  const int cache_row_bytes = rope_dim * element_bytes;
  const RowDivider row_of(cache_row_bytes / 16);
  const int r0 = row_of.quotient(threadIdx.x);
  const int column = threadIdx.x - r0 * row_of.divisor;
  const int step = kThreads / row_of.divisor;
  const auto* cache_base = static_cast<const uint8_t*>(cache.data) + 16 * column;
  const int64_t cache_row_stride_bytes = cache.row_stride * element_bytes;
  for (int base = 0; base < kTokensPerBlock; base += step) {
    const int r = base + r0;
    const int64_t position_row = __shfl_sync(0xFFFFFFFFu, my_row, r & 31);
    if (r < rows) {
      cp_async16(stage.cache + r * cache_row_bytes + 16 * column, cache_base + position_row * cache_row_stride_bytes);
    }
  }
}

// Four consecutive cache values from a staged cos/sin row.
__device__ __forceinline__ void shared_cache4(const uint8_t* row, bool f32, int index, float out[4]) {
  if (f32) {
    const float4 v = *reinterpret_cast<const float4*>(row + 4 * index);
    out[0] = v.x, out[1] = v.y, out[2] = v.z, out[3] = v.w;
  } else {
    f32_from_bf16x4(*reinterpret_cast<const uint2*>(row + 2 * index), out);
  }
}

__device__ __forceinline__ void shared_bf16x8(const uint8_t* p, float out[8]) {
  f32_from_bf16x8(*reinterpret_cast<const uint4*>(p), out);
}

template <bool kGuardTail, int kThreads>
__device__ void mqa_task_staged(const KernelParams& p, int64_t first_token, int64_t head, Stage& stage) {
  const FusedQArgs& a = p.args;
  const int R = static_cast<int>(a.rope_dim);
  const int rows = live_rows<kGuardTail>(a, first_token);
  stage_rows<kThreads>(a.q_pe, 2 * R, a.mqa_cache, R, p.mqa_cache_last_row, a.positions, first_token,
                       head, rows, stage);
  const Divisor q_scale = make_divisor(p.q_scale);
  const bool fp8 = a.query_path == QueryPath::kFp8Packed;
  const bool f32_cache = a.mqa_cache.dtype == FloatType::kF32;
  const int cache_row_bytes = R * (f32_cache || planted::is(planted::kStagedCacheRowBytes) ? 4 : 2);
  cp_async_wait_all();
  if constexpr (!planted::is(planted::kMissingBarrier)) __syncthreads();
  const int chunks = R / kVectorElements;
  const RowDivider row_of(chunks);
  for (int item = threadIdx.x; item < rows * chunks; item += kThreads) {
    const int r = row_of.quotient(item);
    const int j0 = (item - r * chunks) * kVectorElements;
    float x[8], cos[4], sin[4], out[8];
    shared_bf16x8(stage.data + r * 2 * R + 2 * j0, x);
    shared_cache4(stage.cache + r * cache_row_bytes, f32_cache, j0 / 2, cos);
    shared_cache4(stage.cache + r * cache_row_bytes, f32_cache, R / 2 + j0 / 2, sin);
    rope_interleaved_chunk(x, cos, sin, out, mqa_r1_unfused(fp8));
    store_mqa_chunk(a, fp8, q_scale, mqa_out_offset(a, first_token + r, head, j0), out);
  }
}

// The RoPE'd (or passed-through) values of the staged chunk at j0 of one
// indexer row: `data` is the row's bf16 values, `cs` its cos/sin row.
__device__ __forceinline__ void staged_indexer_chunk(const uint8_t* data, const uint8_t* cs, int j0, int R,
                                                     bool neox, bool f32_cache, float v[8]) {
  const int half = R / 2;
  float x[8];
  shared_bf16x8(data + 2 * j0, x);
  if (j0 >= R) {
#pragma unroll
    for (int e = 0; e < 8; ++e) v[e] = x[e];
  } else if (!neox) {
    float cos[4], sin[4];
    shared_cache4(cs, f32_cache, j0 / 2, cos);
    shared_cache4(cs, f32_cache, half + j0 / 2, sin);
    rope_interleaved_chunk(x, cos, sin, v, kIndexerTermsUnfused, kIndexerTermsUnfused);
  } else {
    const bool minus = j0 < half;
    const int index = minus ? j0 : j0 - half;
    float partner[8], cos[8], sin[8];
    shared_bf16x8(data + 2 * (minus ? j0 + half : j0 - half), partner);
    shared_cache4(cs, f32_cache, index, cos);
    shared_cache4(cs, f32_cache, index + 4, cos + 4);
    shared_cache4(cs, f32_cache, half + index, sin);
    shared_cache4(cs, f32_cache, half + index + 4, sin + 4);
    rope_neox_chunk(x, partner, cos, sin, minus, v, kIndexerTermsUnfused);
  }
}

// Teams of 8 lanes, one row at a time per team; lane l owns chunks l and
// l + 8 of the row (D <= 128 is at most 16 chunks), so the amax reduces over
// 8 lanes. For the real models (D = 128, R = 64) every lane's first chunk is
// in the RoPE part and its second passes through: the lanes of a warp take
// the same branches, and 64 threads cover 8 rows per pass (with one chunk
// per lane and teams of 16, half the lanes sat out the RoPE branch and each
// pass covered 4 rows, about twice the instructions per row).
template <bool kGuardTail, int kThreads>
__device__ void indexer_task_staged(const KernelParams& p, int64_t first_token, int64_t head,
                                    Stage& stage) {
  constexpr int kTeam = 8;
  constexpr int kTeams = kThreads / kTeam;
  static_assert(kTokensPerBlock % kTeams == 0, "every team runs the same rows");
  const FusedQArgs& a = p.args;
  const int R = static_cast<int>(a.rope_dim), D = static_cast<int>(a.index_dim);
  const int rows = live_rows<kGuardTail>(a, first_token);
  stage_rows<kThreads>(a.index_q, 2 * D, a.indexer_cache, R, p.indexer_cache_last_row, a.positions,
                       first_token, head, rows, stage);
  // Lane r < 16 of every warp fetches row r's weight while the copies fly.
  const int lane32 = threadIdx.x % 32;
  const float my_weight = lane32 < rows ? load_weight(a, first_token + lane32, head) : 0.0f;
  const bool f32_cache = a.indexer_cache.dtype == FloatType::kF32;
  const int cache_row_bytes = R * (f32_cache ? 4 : 2);
  const bool neox = a.indexer_rope == RopeStyle::kNeox;
  const int lane = threadIdx.x % kTeam;
  const int j0[2] = {lane * kVectorElements, (lane + kTeam) * kVectorElements};
  cp_async_wait_all();
  if constexpr (!planted::is(planted::kMissingBarrier)) __syncthreads();
  for (int r = threadIdx.x / kTeam; r < kTokensPerBlock; r += kTeams) {
    const bool live = r < rows;
    const uint8_t* data = stage.data + r * 2 * D;
    const uint8_t* cs = stage.cache + r * cache_row_bytes;
    float v[2][8];
    float amax = amax_start();
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      if (!live || j0[k] >= D) continue;
      staged_indexer_chunk(data, cs, j0[k], R, neox, f32_cache, v[k]);
#pragma unroll
      for (int e = 0; e < 8; ++e) amax = amax_step(amax, v[k][e]);
    }
#pragma unroll
    for (int offset = kTeam / 2; offset > 0; offset /= 2) {
      amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, offset));
    }
    const float weight = __shfl_sync(0xFFFFFFFFu, my_weight, r);
    if (!live) continue;
    const int64_t t = first_token + r;
    const float scale = ue8m0_scale_from_amax(amax);
    const float reciprocal = reciprocal_of_ue8m0_scale(scale);
    uint8_t* out = output_row<uint8_t>(a.index_q_fp8, t, head);
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      if (j0[k] >= D) continue;
#pragma unroll
      for (int e = 0; e < 8; ++e) v[k][e] = __fmul_rn(v[k][e], reciprocal);
      store_e4m3x8(out + j0[k], v[k]);
    }
    if (lane == 0) store_weight(a, t, head, indexer_weight(weight, scale, p.softmax_scale, p.head_scale));
  }
}

}  // namespace qcheck::cuda::blocked
