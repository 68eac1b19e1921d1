// Device-side memory access shared by both kernels: element pointers with
// 64-bit offsets, vector loads and stores of 8 bf16 / 8 e4m3, cos/sin rows of
// either cache dtype, clamped positions and the indexer weights.
//
// Inputs are read through the non-coherent path (__ldg): no kernel ever
// writes memory it reads (the only permitted input/output overlap is the
// exact ql_nope alias, and then ql_nope is not read at all).
#pragma once

#include <cstdint>

#include "ops/fused_q/kernels/device_numerics.cuh"
#include "ops/fused_q/kernels/kernel_params.h"

namespace qcheck::cuda::device {

// Element offset of [token, head, 0] in a strided view; every factor is
// int64 so H*T*512 >= 2^31 cannot overflow (bug 3 of SEMANTICS.md).
template <typename View>
__device__ __forceinline__ int64_t row_offset(const View& view, int64_t token, int64_t head) {
  if constexpr (planted::is(planted::kOffset32)) {
    return static_cast<uint32_t>(static_cast<uint32_t>(token) * static_cast<uint32_t>(view.token_stride) +
                                 static_cast<uint32_t>(head) * static_cast<uint32_t>(view.head_stride));
  }
  return token * view.token_stride + head * view.head_stride;
}

template <typename T>
__device__ __forceinline__ const T* input_row(const InputView& view, int64_t token, int64_t head) {
  return static_cast<const T*>(view.data) + row_offset(view, token, head);
}

template <typename T>
__device__ __forceinline__ T* output_row(const OutputView& view, int64_t token, int64_t head) {
  return static_cast<T*>(view.data) + row_offset(view, token, head);
}

__device__ __forceinline__ float load_bf16(const uint16_t* p) { return f32_from_bf16(__ldg(p)); }

// bf16 packed two per 32-bit word (the lower address in the low half) ->
// floats, exactly: a bf16's bits are the top half of its f32.
__device__ __forceinline__ void f32_from_bf16x4(uint2 raw, float out[4]) {
  out[0] = __uint_as_float(raw.x << 16), out[1] = __uint_as_float(raw.x & 0xFFFF0000u);
  out[2] = __uint_as_float(raw.y << 16), out[3] = __uint_as_float(raw.y & 0xFFFF0000u);
}
__device__ __forceinline__ void f32_from_bf16x8(uint4 raw, float out[8]) {
  f32_from_bf16x4(make_uint2(raw.x, raw.y), out);
  f32_from_bf16x4(make_uint2(raw.z, raw.w), out + 4);
}

// 8 bf16 (16 bytes, aligned) -> 8 floats.
__device__ __forceinline__ void load_bf16x8(const uint16_t* p, float out[8]) {
  f32_from_bf16x8(__ldg(reinterpret_cast<const uint4*>(p)), out);
}

// 8 raw bf16 (16 bytes, aligned), for copies.
__device__ __forceinline__ uint4 load_raw16(const uint16_t* p) {
  return __ldg(reinterpret_cast<const uint4*>(p));
}

__device__ __forceinline__ void store_raw16(uint16_t* p, uint4 value) {
  *reinterpret_cast<uint4*>(p) = value;
}

// 8 floats -> 8 bf16 (16 bytes, aligned).
__device__ __forceinline__ void store_bf16x8(uint16_t* p, const float in[8]) {
  uint32_t words[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    words[i] = bf16x2_from_f32(in[2 * i], in[2 * i + 1]);
  }
  store_raw16(p, make_uint4(words[0], words[1], words[2], words[3]));
}

// 8 floats -> 8 e4m3 codes (8 bytes, aligned).
__device__ __forceinline__ void store_e4m3x8(uint8_t* p, const float in[8]) {
  const uint32_t low = e4m3x4_from_f32(in[0], in[1], in[2], in[3]);
  const uint32_t high = e4m3x4_from_f32(in[4], in[5], in[6], in[7]);
  *reinterpret_cast<uint2*>(p) = make_uint2(low, high);
}

__device__ __forceinline__ void store_e4m3(uint8_t* p, float value) {
  *p = static_cast<uint8_t>(e4m3x2_from_f32(0.0f, value) & 0xFFu);
}

// The cache row of a token's position, clamped into [0, last_row]: positions
// outside the cache are invalid input (refused on the host by the oracle and
// the harness); clamping keeps a bad position from reading outside the cache.
__device__ __forceinline__ int64_t clamp_position(int64_t position, int64_t last_row) {
  return position < 0 ? 0 : (position > last_row ? last_row : position);
}

__device__ __forceinline__ int64_t cache_row(const int64_t* positions, int64_t token,
                                             int64_t last_row) {
  return clamp_position(__ldg(positions + token), last_row);
}

__device__ __forceinline__ float load_cache_value(const CacheView& cache, int64_t offset) {
  if (cache.dtype == FloatType::kF32) return __ldg(static_cast<const float*>(cache.data) + offset);
  return load_bf16(static_cast<const uint16_t*>(cache.data) + offset);
}

// Four consecutive cache values of dtype kType from `offset`, a multiple of
// 4 in a cache that make_kernel_params found aligned for it: one 16-byte
// (f32) or 8-byte (bf16) load.
template <FloatType kType>
__device__ __forceinline__ void load_cache4_vector(const CacheView& cache, int64_t offset, float out[4]) {
  if constexpr (kType == FloatType::kF32) {
    const float4 v = __ldg(reinterpret_cast<const float4*>(static_cast<const float*>(cache.data) + offset));
    out[0] = v.x, out[1] = v.y, out[2] = v.z, out[3] = v.w;
  } else {
    f32_from_bf16x4(__ldg(reinterpret_cast<const uint2*>(static_cast<const uint16_t*>(cache.data) + offset)), out);
    if constexpr (planted::is(planted::kBf16CachePairSwap)) {
      const float first = out[0], third = out[2];
      out[0] = out[1], out[1] = first, out[2] = out[3], out[3] = third;
    }
  }
}

// Four consecutive cache values from `offset` (a multiple of 4 when
// `vectors`, which make_kernel_params set only when that is aligned).
__device__ __forceinline__ void load_cache4(const CacheView& cache, int64_t offset, bool vectors,
                                            float out[4]) {
  if (vectors && cache.dtype == FloatType::kF32) {
    load_cache4_vector<FloatType::kF32>(cache, offset, out);
  } else if (vectors) {
    load_cache4_vector<FloatType::kBf16>(cache, offset, out);
  } else {
#pragma unroll
    for (int i = 0; i < 4; ++i) out[i] = load_cache_value(cache, offset + i);
  }
}

// index_weights[token, head] (column stride any), as f32.
__device__ __forceinline__ float load_weight(const FusedQArgs& a, int64_t token, int64_t head) {
  const int64_t offset = planted::is(planted::kWeightsUnitColumn) ? token * a.index_weights.token_stride + head
                                                                  : row_offset(a.index_weights, token, head);
  if (a.index_weights_dtype == FloatType::kF32) {
    return __ldg(static_cast<const float*>(a.index_weights.data) + offset);
  }
  return load_bf16(static_cast<const uint16_t*>(a.index_weights.data) + offset);
}

// index_weights_out at element `offset` (row_offset of [token, head]) =
// weight, f32 or bf16_rne (seed 003).
__device__ __forceinline__ void store_weight_at(const FusedQArgs& a, int64_t offset, float weight) {
  if (a.index_weights_out_dtype == FloatType::kF32) {
    static_cast<float*>(a.index_weights_out.data)[offset] = weight;
  } else {
    static_cast<uint16_t*>(a.index_weights_out.data)[offset] =
        planted::is(planted::kWeightsOutTruncated) ? static_cast<uint16_t>(__float_as_uint(weight) >> 16)
                                                   : bf16_from_f32(weight);
  }
}

// index_weights_out[token, head] = weight.
__device__ __forceinline__ void store_weight(const FusedQArgs& a, int64_t token, int64_t head,
                                             float weight) {
  store_weight_at(a, row_offset(a.index_weights_out, token, head), weight);
}

}  // namespace qcheck::cuda::device
