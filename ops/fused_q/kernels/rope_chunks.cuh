// RoPE of 8-element chunks, shared by the kernels' vector paths
// (numerics/rope.h is the definition; the contraction is kFuseCos through
// device::rope_term). A chunk starts at a multiple of 8, so it holds four
// whole interleaved pairs, and (when R is a multiple of 16) a NeoX chunk and
// its partner chunk j +- R/2 line up element for element.
#pragma once

#include "ops/fused_q/kernels/device_access.cuh"

namespace qcheck::cuda::device {

// Interleaved (GPT-J) pairs (2i, 2i+1) inside one chunk:
//   r_2i = x_2i*c_i - x_2i+1*s_i,  r_2i+1 = x_2i+1*c_i + x_2i*s_i.
// cos[i], sin[i] belong to the chunk's pair i.
// unfused_minus / unfused_plus: rope_term's planted flag for r_2i / r_2i+1.
__device__ __forceinline__ void rope_interleaved_chunk(const float x[8], const float cos[4],
                                                       const float sin[4], float out[8],
                                                       bool unfused_minus = false, bool unfused_plus = false) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    out[2 * i] = rope_term(x[2 * i], cos[i], -x[2 * i + 1], sin[i], unfused_minus);
    out[2 * i + 1] = rope_term(x[2 * i + 1], cos[i], x[2 * i], sin[i], unfused_plus);
  }
}

// The cos/sin of an interleaved chunk starting at element j0: indices
// j0/2 .. j0/2 + 3 of a cache row (cos at [0, R/2), sin at [R/2, R)).
__device__ __forceinline__ void load_interleaved_cos_sin(const CacheView& cache, int64_t row_start,
                                                         int64_t half, int j0, bool vectors,
                                                         float cos[4], float sin[4]) {
  const bool swapped = planted::is(planted::kCosSinSwapped) && vectors;
  load_cache4(cache, row_start + (swapped ? half : 0) + j0 / 2, vectors, cos);
  load_cache4(cache, row_start + (swapped ? 0 : half) + j0 / 2, vectors, sin);
}

// NeoX chunk at j0 < R with its partner chunk `partner`:
//   j < h:  r_j = x_j*c_j     - x_(j+h)*s_j      (minus = true)
//   j >= h: r_j = x_j*c_(j-h) + x_(j-h)*s_(j-h)  (minus = false)
// cos[e], sin[e] belong to element e of the chunk (index j0 + e, or
// j0 - h + e).
__device__ __forceinline__ void rope_neox_chunk(const float x[8], const float partner[8],
                                                const float cos[8], const float sin[8], bool minus,
                                                float out[8], bool unfused = false) {
#pragma unroll
  for (int e = 0; e < 8; ++e) {
    out[e] = rope_term(x[e], cos[e], minus ? -partner[e] : partner[e], sin[e], unfused);
  }
}

}  // namespace qcheck::cuda::device
