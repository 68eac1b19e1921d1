// fused_k on the GPU: one launch, every role the args turn on. A warp does
// one (token, role) task at a time and the warps of the grid stride over all
// T * roles tasks with 64-bit indices, so no token count needs a second grid
// dimension and every byte offset is 64-bit.
//
// Its conventions (qcheck_fused_k_rules(), ops/fused_k/oracle):
// - every sum over a row in the blocked-lanes order of 32 lanes: lane l folds
//   its contiguous chunk of ceil(n / 32) elements from +0, the squares fused
//   (acc = fma(x, x, acc)), then the butterfly 16 .. 1 (ReductionOrder::
//   kBlockedLanes, SquareStep::kFused);
// - S / n by IEEE division, the rsqrt the GPU's rsqrt.approx.f32;
// - RMSNorm's weight multiplied in f32, LayerNorm's affine one fma;
// - RoPE terms fma(a, cos, RN(b * sin));
// - UE8M0 scales (index-K rows and fp8_ds_mla tiles) from the exact bits of
//   RN(max(amax, 1e-4) / 448); on an FNUZ indexer cache twice that (the
//   ceiling of RN(amax / 224)) and e4m3fnuz codes through the OCP cvt
//   (numerics/device/e4m3fnuz_via_ocp.h); fp8 codes of x / k_scale by IEEE division;
//   nvfp4 tiles as numerics' cvt-rn e2m1 without the +0 add.
// Every function is a template over a planted bug (ops/fused_k/planted); `if constexpr
// (B == kX)` branches compile away in the kernel under test, B = kNone.
#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <utility>

#include "numerics/device/conversions.cuh"
#include "numerics/device/e4m3fnuz_via_ocp.h"
#include "ops/fused_k/kernels/fused_k_launch.h"

namespace qcheck::fused_k {
namespace {

namespace dev = qcheck::device;
using namespace planted;  // the catalogue's Bug names

constexpr unsigned kFullMask = 0xFFFFFFFFu;
constexpr int kWarpsPerBlock = 4;
constexpr int kLanes = 32;
constexpr int kRowChunk = 16;  // the most elements a lane holds: index_dim 512 / 32, the latent 512 / 32

enum Role : int { kIndexKRole = 0, kKvRole = 1, kQNormRole = 2, kTopkRole = 3 };

struct Roles {
  int count = 0;
  int list[4] = {0, 0, 0, 0};
};

// The butterfly over the warp's partial sums, offsets 16 .. 1: lane l and
// lane l ^ offset add the same two values, so every lane ends with lane 0's.
__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = kLanes / 2; offset >= 1; offset /= 2) v = __fadd_rn(v, __shfl_xor_sync(kFullMask, v, offset));
  return v;
}

// The largest of `width` neighbouring lanes' values (a maximum has no order).
template <int B>
__device__ __forceinline__ float group_max(float v, int width) {
  if constexpr (B == kTwinMaxOtherOrder) {
    for (int offset = 1; offset < width; offset *= 2) v = fmaxf(v, __shfl_xor_sync(kFullMask, v, offset));
  } else {
    for (int offset = width / 2; offset >= 1; offset /= 2) v = fmaxf(v, __shfl_xor_sync(kFullMask, v, offset));
  }
  return v;
}

__device__ __forceinline__ float value_at(const void* data, FloatType type, int64_t i) {
  if (type == FloatType::kF32) return static_cast<const float*>(data)[i];
  return dev::f32_from_bf16(static_cast<const uint16_t*>(data)[i]);
}

// A weight or bias read as bf16 whatever its dtype (its top half when f32).
__device__ __forceinline__ float value_as_bf16(const void* data, FloatType type, int64_t i) {
  if (type == FloatType::kF32) return dev::f32_from_bf16(static_cast<uint16_t>(__float_as_uint(static_cast<const float*>(data)[i]) >> 16));
  return value_at(data, type, i);
}

template <int B>
__device__ __forceinline__ uint8_t e4m3(float value) {
  if constexpr (B == kNoSaturation) {
    if (fabsf(value) >= 464.0f && !isnan(value)) return 0x7F;
  }
  return dev::e4m3_from_f32(value);
}

// An index-K code: OCP e4m3, or e4m3fnuz on an FNUZ cache.
template <int B>
__device__ __forceinline__ uint8_t index_code(float value, bool fnuz) {
  if (!fnuz || B == kOcpBytesOnFnuz) return e4m3<B>(value);
  return dev::e4m3fnuz_via_ocp(value, [](float v) { return dev::e4m3_from_f32(v); });
}

// The rsqrt of a norm: of its mean (square) plus eps.
template <int B>
__device__ __forceinline__ float norm_rsqrt(float mean, uint32_t eps_bits) {
  if constexpr (B == kEpsAfterRsqrt) return __fadd_rn(dev::rsqrt_approx(mean), __uint_as_float(eps_bits));
  return dev::rsqrt_approx(__fadd_rn(mean, __uint_as_float(eps_bits)));
}

// RMSNorm's output from x, r and the weight w.
template <int B>
__device__ __forceinline__ float rms_output(float x, float r, float w) {
  if constexpr (B == kRmsBf16BeforeWeight) return __fmul_rn(dev::f32_from_bf16(dev::bf16_from_f32(__fmul_rn(x, r))), w);
  return __fmul_rn(__fmul_rn(x, r), w);
}

__device__ __forceinline__ const uint16_t* bf16_row(const RowsIn& rows, int64_t t) {
  return static_cast<const uint16_t*>(rows.data) + t * rows.row_stride;
}

__device__ __forceinline__ void store_bf16(const RowsOut& out, int64_t t, int64_t i, float value) {
  if (out.data != nullptr) static_cast<uint16_t*>(out.data)[t * out.row_stride + i] = dev::bf16_from_f32(value);
}

// One RoPE term a * c + b * s with the product by cos fused (kFuseCos); the
// formula's sign is folded into b.
template <int B>
__device__ __forceinline__ float rope_term(float a, float c, float b, float s) {
  if constexpr (B == kTwinFmaOperandsSwapped) return __fmaf_rn(c, a, __fmul_rn(s, b));
  return __fmaf_rn(a, c, __fmul_rn(b, s));
}

// A byte offset into a cache: 64-bit (kOffset32: wrapped to 32 bits, as an
// int32 product computes it).
template <int B>
__device__ __forceinline__ int64_t byte_offset(int64_t offset) {
  if constexpr (B == kOffset32) return static_cast<int32_t>(static_cast<uint32_t>(offset));
  return offset;
}

__device__ __forceinline__ void store_u32(uint8_t* at, uint32_t word) {
  for (int i = 0; i < 4; ++i) at[i] = static_cast<uint8_t>(word >> (8 * i));
}

// Index-K prep of token t (index_k_row.h): LayerNorm, RoPE on the first R
// elements, the UE8M0 scale and codes into the paged indexer cache.
// `shared` holds the warp's normalized row (index_dim floats): RoPE pairs
// an element with one in another lane.
template <int B>
__device__ void index_k_task(const FusedKArgs& a, int64_t t, int lane, float* shared) {
  const int64_t dim = a.index_dim;
  const int64_t chunk = (dim + kLanes - 1) / kLanes, begin = lane * chunk;
  const uint16_t* row = bf16_row(a.index_k_in, t);
  float x[kRowChunk];
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < kRowChunk; ++k) {
    x[k] = 0.0f;
    if (k < chunk && begin + k < dim) x[k] = dev::f32_from_bf16(row[begin + k]), sum = __fadd_rn(sum, x[k]);
  }
  const float mean = __fdiv_rn(warp_sum(sum), static_cast<float>(dim));
  float squares = 0.0f, raw_squares = 0.0f;
#pragma unroll
  for (int k = 0; k < kRowChunk; ++k) {
    if (k < chunk && begin + k < dim) {
      if constexpr (B == kVarianceUncentred) raw_squares = __fmaf_rn(x[k], x[k], raw_squares);
      x[k] = __fsub_rn(x[k], mean), squares = __fmaf_rn(x[k], x[k], squares);
    }
  }
  float variance = __fdiv_rn(warp_sum(squares), static_cast<float>(dim));
  if constexpr (B == kVarianceUncentred) {
    variance = __fsub_rn(__fdiv_rn(warp_sum(raw_squares), static_cast<float>(dim)), __fmul_rn(mean, mean));
  }
  const float rstd = norm_rsqrt<B>(variance, a.ln_eps_bits);
#pragma unroll
  for (int k = 0; k < kRowChunk; ++k) {
    const int64_t i = begin + k;
    if (k < chunk && i < dim) {
      const float p = __fmul_rn(x[k], rstd);
      const float w = B == kLnWeightReadAsBf16 ? value_as_bf16(a.ln_weight.data, a.ln_weight.dtype, i)
                                               : value_at(a.ln_weight.data, a.ln_weight.dtype, i);
      const float bias = B == kLnBiasReadAsBf16 ? value_as_bf16(a.ln_bias.data, a.ln_bias.dtype, i)
                                                : value_at(a.ln_bias.data, a.ln_bias.dtype, i);
      shared[i] = __fmaf_rn(p, w, bias);
    }
  }
  __syncwarp();
  const int64_t rope_dim = a.index_rope_dim, half = rope_dim / 2;
  const RopeCache& rc = a.rope_cache;
  const int64_t rope_row = a.positions[t] * rc.row_stride;
  float amax = 0.0f;
#pragma unroll
  for (int k = 0; k < kRowChunk; ++k) {
    const int64_t i = begin + k;
    if (k >= chunk || i >= dim) continue;
    float r = shared[i];
    if (i < rope_dim) {
      int64_t partner, index;
      bool minus;
      const bool interleaved = (a.index_rope == RopeStyle::kInterleaved) != (B == kIndexRopeStyleSwapped);
      if (interleaved) {
        partner = i ^ 1, index = i / 2, minus = (i % 2) == 0;
      } else {
        minus = i < half, partner = minus ? i + half : i - half, index = minus ? i : i - half;
      }
      const float b = minus ? -shared[partner] : shared[partner];
      r = rope_term<B>(r, value_at(rc.data, rc.dtype, rope_row + index), b,
                    value_at(rc.data, rc.dtype, rope_row + half + index));
    }
    x[k] = r;
    amax = fmaxf(amax, fabsf(r));  // fmaxf skips a NaN lane
    store_bf16(a.index_k_out, t, i, r);
  }
  amax = group_max<B>(amax, kLanes);
  // FNUZ divides by 224: RN(amax / 224) is exactly 2 RN(amax / 448), so its ceiling is twice OCP's.
  const bool fnuz = a.index_fp8 == IndexKFp8::kFnuz;
  float scale = dev::ue8m0_scale_from_amax(amax);
  if constexpr (B == kTwinScaleTimesReciprocal448) {
    const uint32_t bits = __float_as_uint(__fmul_rn(fmaxf(amax, 1e-4f), __uint_as_float(0x3B124925u)));  // RN(1/448)
    scale = __uint_as_float(bits >= 0x7F800000u ? bits : (bits + 0x7FFFFFu) & 0x7F800000u);
  }
  if (fnuz && B != kFnuzScaleOf448) scale = __fmul_rn(scale, 2.0f);
  if constexpr (B == kUe8m0Skipped) scale = __fdiv_rn(fmaxf(amax, 1e-4f), 448.0f);
  if constexpr (B == kNoAmaxFloor) {
    if (amax == 0.0f) scale = 0.0f;
  }
  const float reciprocal = dev::reciprocal_of_ue8m0_scale(scale);
  const int64_t* slots = a.index_slot_mapping != nullptr ? a.index_slot_mapping : a.slot_mapping;
  if constexpr (B == kIndexSlotsIgnored) slots = a.slot_mapping != nullptr ? a.slot_mapping : slots;
  const int64_t slot = slots[t];
  if (slot >= 0) {
    const PagedCache& c = a.indexer_cache;
    const int64_t block_stride = B == kDenseBlockStride ? c.block_size * (dim + 4) : c.block_stride;
    uint8_t* block = static_cast<uint8_t*>(c.data) + byte_offset<B>((slot / c.block_size) * block_stride);
    const int64_t token = slot % c.block_size;
    bool shuffled = a.indexer_layout == IndexerKLayout::kShuffled;
    if constexpr (B == kShuffledWrittenFlat) shuffled = shuffled && c.block_size > 64;
#pragma unroll
    for (int k = 0; k < kRowChunk; ++k) {
      const int64_t i = begin + k;
      if (k >= chunk || i >= dim) continue;
      const int64_t byte = !shuffled ? token * dim + i
                                     : (token / 16) * 16 * dim + (i / 16) * 256 + (token % 16) * 16 + i % 16;
      float quotient = __fmul_rn(x[k], reciprocal);
      if constexpr (B == kUe8m0Skipped || B == kTwinDivideByPow2) quotient = __fdiv_rn(x[k], scale);
      if constexpr (B == kScaleRoundedAfterCodes) quotient = __fdiv_rn(x[k], __fdiv_rn(fmaxf(amax, 1e-4f), 448.0f));
      if constexpr (B == kNoAmaxFloor) {
        if (scale == 0.0f) quotient = __fdiv_rn(x[k], scale);
      }
      block[byte] = index_code<B>(quotient, fnuz);
    }
    if (lane == 0) {
      const uint32_t bits = __float_as_uint(scale);
      uint32_t word = a.indexer_scale == IndexerKScale::kF32 ? bits : ((bits >> 23) & 0xFFu) * 0x01010101u;
      if constexpr (B == kUe8m0WordOneByte) {
        if (a.indexer_scale == IndexerKScale::kUe8m0x4) word = (bits >> 23) & 0xFFu;
      }
      const int64_t at = B == kScaleInterleavedPerToken ? token * (dim + 4) + dim : c.block_size * dim + 4 * token;
      store_u32(block + at, word);
    }
  }
  __syncwarp();  // the next task's row goes into `shared`
}

// The MLA cache entry of one token (mla_cache.h) from the lane's 16 latent
// values (elements 16 lane ..) and its rope pair (2 lane, 2 lane + 1).
template <int B>
__device__ void write_mla_entry(const FusedKArgs& a, uint8_t* entry, int lane, const float* latent, float rope0,
                                float rope1) {
  switch (a.mla_format) {
    case MlaCacheFormat::kBf16: {
      uint16_t* values = reinterpret_cast<uint16_t*>(entry);
      for (int k = 0; k < kRowChunk; ++k) values[16 * lane + k] = dev::bf16_from_f32(latent[k]);
      values[kMlaLatent + 2 * lane] = dev::bf16_from_f32(rope0);
      values[kMlaLatent + 2 * lane + 1] = dev::bf16_from_f32(rope1);
      return;
    }
    case MlaCacheFormat::kFp8: {
      const float k_scale = __uint_as_float(a.k_scale_bits);
      const auto scaled = [k_scale](float x) { return B == kKScaleMultiplied ? __fmul_rn(x, k_scale) : __fdiv_rn(x, k_scale); };
      for (int k = 0; k < kRowChunk; ++k) entry[16 * lane + k] = e4m3<B>(scaled(latent[k]));
      entry[kMlaLatent + 2 * lane] = e4m3<B>(scaled(rope0));
      entry[kMlaLatent + 2 * lane + 1] = e4m3<B>(scaled(rope1));
      return;
    }
    case MlaCacheFormat::kFp8DsMla: {
      // Tile t of 128 is lanes 8 t .. 8 t + 7.
      float amax = 0.0f;
      for (int k = 0; k < kRowChunk; ++k) amax = fmaxf(amax, fabsf(latent[k]));
      if constexpr (B == kDsTileOf64) amax = lane % 8 < 4 ? amax : 0.0f;
      const float scale = dev::ue8m0_scale_from_amax(group_max<B>(amax, 8));
      const float reciprocal = dev::reciprocal_of_ue8m0_scale(scale);
      for (int k = 0; k < kRowChunk; ++k) {
        entry[16 * lane + k] = e4m3<B>(B == kTwinDivideByPow2 ? __fdiv_rn(latent[k], scale) : __fmul_rn(latent[k], reciprocal));
      }
      if (lane % 8 == 0) *reinterpret_cast<float*>(entry + kMlaLatent + 4 * (lane / 8)) = scale;
      const uint32_t pair = dev::bf16_from_f32(rope0) | (static_cast<uint32_t>(dev::bf16_from_f32(rope1)) << 16);
      *reinterpret_cast<uint32_t*>(entry + kMlaLatent + 16 + 4 * lane) = pair;
      return;
    }
    case MlaCacheFormat::kNvfp4DsMla: {
      // Tile t of 16 is lane t.
      float amax = 0.0f;
      for (int k = 0; k < kRowChunk; ++k) amax = fmaxf(amax, fabsf(latent[k]));
      const float reciprocal_of_6 = __uint_as_float(0x3E2AAAABu);  // RN(1/6)
      const uint8_t scale_code = e4m3<B>(fmaxf(__fmul_rn(amax, reciprocal_of_6), 0.001953125f));
      const float inverse = __fdiv_rn(1.0f, dev::f32_from_positive_e4m3(scale_code));
      for (int k = 0; k < kRowChunk / 2; ++k) {
        const uint8_t even = dev::e2m1_from_f32(__fmul_rn(latent[2 * k], inverse));
        const uint8_t odd = dev::e2m1_from_f32(__fmul_rn(latent[2 * k + 1], inverse));
        entry[8 * lane + k] = B == kNvfp4NibblesSwapped ? static_cast<uint8_t>((odd & 0xFu) | ((even & 0xFu) << 4))
                                                        : static_cast<uint8_t>((even & 0xFu) | ((odd & 0xFu) << 4));
      }
      entry[kMlaLatent / 2 + 2 * lane] = e4m3<B>(rope0);
      entry[kMlaLatent / 2 + 2 * lane + 1] = e4m3<B>(rope1);
      entry[B == kNvfp4ScalesUnpermuted ? 320 + lane : 320 + 8 * (lane % 4) + lane / 4] = scale_code;
      return;
    }
  }
}

// The KV latent's RMSNorm and k_pe's interleaved RoPE of token t
// (latent_rows.h), their bf16 outputs and the MLA cache entry.
template <int B>
__device__ void kv_task(const FusedKArgs& a, int64_t t, int lane) {
  const uint16_t* row = bf16_row(a.kv_c, t);
  float latent[kRowChunk];
  float squares = 0.0f;
#pragma unroll
  for (int k = 0; k < kRowChunk; ++k) {
    latent[k] = dev::f32_from_bf16(row[kRowChunk * lane + k]);
    squares = __fmaf_rn(latent[k], latent[k], squares);
  }
  const float mean_square = __fdiv_rn(warp_sum(squares), static_cast<float>(kMlaLatent));
  const float r = norm_rsqrt<B>(mean_square, a.kv_eps_bits);
#pragma unroll
  for (int k = 0; k < kRowChunk; ++k) {
    const int64_t i = kRowChunk * lane + k;
    latent[k] = rms_output<B>(latent[k], r, value_at(a.kv_weight.data, a.kv_weight.dtype, i));
    store_bf16(a.kv_out, t, i, latent[k]);
  }
  const uint16_t* pe = bf16_row(a.k_pe, t);
  const float x0 = dev::f32_from_bf16(pe[2 * lane]), x1 = dev::f32_from_bf16(pe[2 * lane + 1]);
  const RopeCache& rc = a.rope_cache;
  const int64_t rope_row = a.positions[t] * rc.row_stride;
  const float c = value_at(rc.data, rc.dtype, rope_row + lane), s = value_at(rc.data, rc.dtype, rope_row + kLanes + lane);
  float rope0 = rope_term<B>(x0, c, -x1, s), rope1 = rope_term<B>(x1, c, x0, s);
  if constexpr (B == kKpeNotRotated) rope0 = x0, rope1 = x1;
  store_bf16(a.kpe_out, t, 2 * lane, rope0);
  store_bf16(a.kpe_out, t, 2 * lane + 1, rope1);
  const int64_t slot = a.slot_mapping[t];
  if (slot < 0 && B != kSlotMinusOneWritten) return;
  const PagedCache& cache = a.mla_cache;
  uint8_t* entry = static_cast<uint8_t*>(cache.data) + byte_offset<B>((slot / cache.block_size) * cache.block_stride +
                                                                      (slot % cache.block_size) * cache.entry_stride);
  write_mla_entry<B>(a, entry, lane, latent, rope0, rope1);
}

// The Q latent's RMSNorm of token t: two passes over the row (up to 8192
// elements; a lane's chunk of up to 256 is not kept in registers).
template <int B>
__device__ void q_norm_task(const FusedKArgs& a, int64_t t, int lane) {
  const int64_t width = a.q_dim, chunk = B == kQTailDropped ? width / kLanes : (width + kLanes - 1) / kLanes;
  const int64_t begin = lane * chunk, end = begin + chunk < width ? begin + chunk : width;
  const uint16_t* row = bf16_row(a.q_c, t);
  float squares = 0.0f;
  for (int64_t i = begin; i < end; ++i) {
    const float x = dev::f32_from_bf16(row[i]);
    squares = __fmaf_rn(x, x, squares);
  }
  const float mean_square = __fdiv_rn(warp_sum(squares), static_cast<float>(width));
  const float r = norm_rsqrt<B>(mean_square, a.q_eps_bits);
  for (int64_t i = begin; i < end; ++i) {
    const float y = rms_output<B>(dev::f32_from_bf16(row[i]), r, value_at(a.q_weight.data, a.q_weight.dtype, i));
    store_bf16(a.q_c_out, t, i, y);
  }
}

template <int B>
__device__ void topk_task(const FusedKArgs& a, int64_t t, int lane) {
  int32_t* row = a.topk + t * (B == kTopkWidthAsStride ? a.topk_width : a.topk_row_stride);
  for (int64_t i = lane; i < a.topk_width; i += kLanes) row[i] = -1;
}

template <int B>
__global__ void __launch_bounds__(kWarpsPerBlock * kLanes) fused_k_kernel(const FusedKArgs a, const Roles roles) {
  __shared__ float rows[kWarpsPerBlock][FusedKLimits::kMaxIndexDim];
  const int warp = static_cast<int>(threadIdx.x) / kLanes, lane = static_cast<int>(threadIdx.x) % kLanes;
  const int64_t tasks = a.num_tokens * roles.count;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kWarpsPerBlock;
  for (int64_t task = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + warp; task < tasks; task += stride) {
    const int64_t t = task / roles.count;
    switch (roles.list[task % roles.count]) {
      case kIndexKRole: index_k_task<B>(a, t, lane, rows[warp]); break;
      case kKvRole: kv_task<B>(a, t, lane); break;
      case kQNormRole: q_norm_task<B>(a, t, lane); break;
      case kTopkRole: topk_task<B>(a, t, lane); break;
    }
  }
}

using Kernel = void (*)(const FusedKArgs, const Roles);

template <int... Bugs>
constexpr auto kernel_table(std::integer_sequence<int, Bugs...>) {
  return std::array<Kernel, sizeof...(Bugs)>{&fused_k_kernel<Bugs>...};
}

// The kernel of each bug, kNone first.
constexpr auto kKernels = kernel_table(std::make_integer_sequence<int, kCount>{});

std::string launch(const FusedKArgs& a, Bug bug, void* stream) {
  const std::string problem = validate_fused_k_args(a);
  if (!problem.empty()) return problem;
  if (bug < kNone || bug >= kCount) return "planted bug " + std::to_string(bug) + " is not in the catalogue";
  Roles roles;
  if (a.index_k) roles.list[roles.count++] = kIndexKRole;
  if (a.kv) roles.list[roles.count++] = kKvRole;
  if (a.q_norm) roles.list[roles.count++] = kQNormRole;
  if (a.topk_fill) roles.list[roles.count++] = kTopkRole;
  const int64_t tasks = a.num_tokens * roles.count;
  if (tasks == 0) return "";
  // Enough warps to fill the device several times over; the warps stride over the rest.
  constexpr int64_t kMaxBlocks = int64_t{1} << 16;
  const int64_t blocks = (tasks + kWarpsPerBlock - 1) / kWarpsPerBlock;
  const dim3 grid(static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks));
  kKernels[static_cast<size_t>(bug)]<<<grid, kWarpsPerBlock * kLanes, 0, static_cast<cudaStream_t>(stream)>>>(a, roles);
  const cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess) return std::string(cudaGetErrorName(error)) + ": " + cudaGetErrorString(error);
  return "";
}

}  // namespace

std::string launch_fused_k(const FusedKArgs& a, void* stream) { return launch(a, kNone, stream); }

std::string launch_fused_k_planted(const FusedKArgs& a, Bug bug, void* stream) { return launch(a, bug, stream); }
}  // namespace qcheck::fused_k
