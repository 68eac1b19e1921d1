// The device-side numeric building blocks of the fused_q kernels, one
// function per rule of the scalar spec (numerics/conversions.h, ue8m0.h,
// rope.h) under profile `qcheck` (numerics/profile.h: qcheck_profile()).
// Both kernels and the device conversion tests (tests/gpu/) call exactly
// these functions, so the 2^32 sweeps check what the kernels compute.
//
// Every rounding is pinned with an intrinsic (__fmul_rn, __fmaf_rn, __fdiv_rn)
// so nvcc can neither contract nor reassociate, and the build uses neither
// --use_fast_math nor -ftz=true: subnormals are kept as the spec keeps them.
#pragma once

#include <cuda_bf16.h>
#include <cstdint>

#include "numerics/device/conversions.cuh"
#include "ops/fused_q/kernels/planted.cuh"

namespace qcheck::cuda::device {

// f32 <- bf16 is exact: the 16 bits become the top half (conversions.h).
__device__ __forceinline__ float f32_from_bf16(uint16_t bits) { return qcheck::device::f32_from_bf16(bits); }

// bf16 <- f32, round to nearest even. __float2bfloat16_rn is PTX
// cvt.rn.bf16.f32 on sm_80+, which on the H200 turns every NaN into 0x7FFF
// (SEMANTICS.md), the profile's Bf16Nan::k7FFF.
__device__ __forceinline__ uint16_t bf16_from_f32(float value) {
  if constexpr (planted::is(planted::kTruncatingBf16)) return static_cast<uint16_t>(__float_as_uint(value) >> 16);
  return qcheck::device::bf16_from_f32(value);
}

// Two bf16 from one cvt.rn.bf16x2.f32, packed little-endian (`low` in bits
// 0..15), the order of two consecutive bf16 elements in memory; the same
// rounding and NaN bits as bf16_from_f32, in half the instructions.
__device__ __forceinline__ uint32_t bf16x2_from_f32(float low, float high) {
  if constexpr (planted::is(planted::kTruncatingBf16)) {
    return (__float_as_uint(low) >> 16) | (__float_as_uint(high) & 0xFFFF0000u);
  }
  const __nv_bfloat162 pair = __floats2bfloat162_rn(low, high);
  return *reinterpret_cast<const uint32_t*>(&pair);
}

// Two e4m3 codes from one PTX cvt.rn.satfinite.e4m3x2.f32: RNE, overflow and
// +-Inf saturate to +-448 (0x7E / 0xFE), every NaN -> 0x7F. The PTX ISA puts
// the FIRST source operand in the UPPER byte, so `high` is passed first.
// (The planted conversion bugs rewrite one code after the conversion.)
__device__ __forceinline__ uint16_t planted_e4m3(uint16_t code, float value) {
  if constexpr (planted::is(planted::kNonSaturatingE4m3)) {
    // 464 is the first magnitude that rounds past 448.
    if (fabsf(value) >= 464.0f && !isnan(value)) return 0x7F;
  }
  if constexpr (planted::is(planted::kNanSignKept)) {
    if (isnan(value) && signbit(value)) return 0xFF;
  }
  if constexpr (planted::is(planted::kE4m3TiesAway)) {
    // A tie of the normal range: the 20 f32 mantissa bits below e4m3's 3
    // are exactly 100..0. RNE took the lower neighbour where bit 20 is 0.
    const uint32_t bits = __float_as_uint(value);
    const int exponent = static_cast<int>((bits >> 23) & 0xFFu) - 127;
    if (exponent >= -6 && exponent <= 8 && (bits & 0xFFFFFu) == 0x80000u && (bits & 0x100000u) == 0 &&
        (code & 0x7Fu) < 0x7Eu) {
      return static_cast<uint16_t>(code + 1);
    }
  }
  return code;
}

__device__ __forceinline__ uint16_t e4m3x2_from_f32(float high, float low) {
  uint16_t codes = qcheck::device::e4m3x2_from_f32(high, low);
  if constexpr (planted::is(planted::kNonSaturatingE4m3) || planted::is(planted::kNanSignKept) ||
                planted::is(planted::kE4m3TiesAway)) {
    codes = static_cast<uint16_t>(planted_e4m3(codes & 0xFFu, low) | (planted_e4m3(codes >> 8, high) << 8));
  }
  return codes;
}

// Four e4m3 codes packed little-endian (element 0 in the lowest byte), the
// byte order of four consecutive fp8 elements in memory.
__device__ __forceinline__ uint32_t e4m3x4_from_f32(float v0, float v1, float v2, float v3) {
  const uint32_t low = e4m3x2_from_f32(v1, v0);
  const uint32_t high = e4m3x2_from_f32(v3, v2);
  return low | (high << 16);
}

// One RoPE term r = a*c + b*s under Contraction::kFuseCos (profile qcheck):
// the product with sin is rounded first, the product with cos is fused:
// fma(a, c, RN(b*s)). The sign of the formula is already folded into b
// (numerics/rope.h), so for r1 = x1*c - x2*s the caller passes b = -x2;
// RN((-x2)*s) == -RN(x2*s) because rounding to nearest is symmetric.
// `unfused`: a call site of the planted contraction twins (kIndexerUnfused,
// kMqaFp8R1Unfused) under its bug; a constant false in every other build.
__device__ __forceinline__ float rope_term(float a, float c, float b, float s, bool unfused = false) {
  if constexpr (planted::is(planted::kIndexerUnfused) || planted::is(planted::kMqaFp8R1Unfused)) {
    if (unfused) return __fadd_rn(__fmul_rn(a, c), __fmul_rn(b, s));
  }
  if constexpr (planted::is(planted::kSinSignFlipped)) return __fmaf_rn(a, c, __fmul_rn(-b, s));
  if constexpr (planted::is(planted::kFtzSubnormals)) {
    const float r = __fmaf_rn(a, c, __fmul_rn(b, s));
    return fabsf(r) < 1.17549435e-38f ? copysignf(0.0f, r) : r;
  }
  return __fmaf_rn(a, c, __fmul_rn(b, s));
}

// Running amax that ignores NaN lanes: fmaxf is IEEE maxNum, which returns
// the other operand when one is NaN (numerics/ue8m0.h row_amax).
// The planted contraction twins' call sites: the indexer's terms, and the fp8 path's MQA r1 terms.
constexpr bool kIndexerTermsUnfused = planted::is(planted::kIndexerUnfused);
__device__ __forceinline__ bool mqa_r1_unfused(bool fp8) { return planted::is(planted::kMqaFp8R1Unfused) && fp8; }

// Where a row's amax starts: 0, or under kNanRowScaleNan NaN (fmaxf then
// keeps NaN only where every element is NaN, as a max started from the
// first element does).
__device__ __forceinline__ float amax_start() {
  return planted::is(planted::kNanRowScaleNan) ? __uint_as_float(0x7FFFFFFFu) : 0.0f;
}

__device__ __forceinline__ float amax_step(float amax, float value) {
  return fmaxf(amax, fabsf(value));
}

// The UE8M0 scale from a row's amax (numerics/ue8m0.h, rule kExactBits with
// floor kAmax1e4): amax = maxNum(amax, 1e-4f) (NaN -> 1e-4, -Inf -> 1e-4),
// s0 = RN(amax / 448) by IEEE division, then the smallest power of two >= s0.
//
// Computed without the division (two IEEE divisions per row were a large
// share of the kernel's instructions). For amax = m * 2^e (1 <= m < 2, amax
// >= 1e-4 is normal) and a power of two 2^k:
//   RN(amax / 448) <= 2^k  <=>  amax / 448 <= 2^k * (1 + 2^-24)
// (values up to half an ulp above 2^k round down to it; the tie goes to the
// even 2^k), and since 448 * 2^k * 2^-24 is 0.875 ulp of 448 * 2^k, no fp32
// amax lies strictly between 448 * 2^k and that bound, so the condition is
// amax <= 448 * 2^k = 1.75 * 2^(k + 8). The smallest such k is e - 8 when
// m <= 1.75 (mantissa bits <= 0x600000) and e - 7 above. +Inf stays +Inf.
// The device sweep over all 2^32 amax patterns (tests/gpu) checks this
// against the spec's division.
__device__ __forceinline__ float planted_scale_from_amax(float amax) {
  if constexpr (planted::is(planted::kLog2fCeiling)) {
    const float s0 = __fdiv_rn(fmaxf(amax, 1e-4f), 448.0f);
    return isinf(s0) ? s0 : exp2f(ceilf(log2f(s0)));
  }
  if constexpr (planted::is(planted::kNonPow2Scale)) return __fdiv_rn(fmaxf(amax, 1e-4f), 448.0f);
  const float floored = fmaxf(amax, planted::is(planted::kEps1e10) ? 1e-10f
                                    : planted::is(planted::kFloorOnScale) ? 0.0f : 1e-4f);
  const uint32_t bits = __float_as_uint(floored);
  if (bits >= 0x7F800000u) return __uint_as_float(bits);
  if (bits == 0u) return 1e-4f;  // kFloorOnScale: max(2^ceil(log2(0)), 1e-4)
  const uint32_t exponent = bits & 0x7F800000u;
  const uint32_t mantissa = bits & 0x007FFFFFu;
  float scale;
  if constexpr (planted::is(planted::kScaleFloor)) {
    // the largest power of two <= amax / 448 (amax / 448 >= 2^(e-8) exactly when m >= 1.75)
    scale = __uint_as_float(exponent - (8u << 23) - (mantissa >= 0x00600000u ? 0u : 0x00800000u));
  } else {
    scale = __uint_as_float(exponent + (mantissa > 0x00600000u ? 0x00800000u : 0u) - (8u << 23));
  }
  return planted::is(planted::kFloorOnScale) ? fmaxf(scale, 1e-4f) : scale;
}

__device__ __forceinline__ float ue8m0_scale_from_amax(float amax) {
  if constexpr (planted::is(planted::kLog2fCeiling) || planted::is(planted::kNonPow2Scale) ||
                planted::is(planted::kEps1e10) || planted::is(planted::kFloorOnScale) ||
                planted::is(planted::kScaleFloor)) {
    return planted_scale_from_amax(amax);
  }
  if constexpr (planted::is(planted::kNanRowScaleNan)) {
    if (isnan(amax)) return amax;  // amax < 1e-4f ? 1e-4f : amax keeps the NaN
  }
  return qcheck::device::ue8m0_scale_from_amax(amax);
}

// The exact reciprocal of a power-of-two (or +Inf) divisor, q_scale's case
// (the UE8M0 scale takes reciprocal_of_ue8m0_scale below). For scale = 2^e,
// 1/scale = 2^-e is representable (e in [-126, 127] for a power-of-two
// q_scale, whose reciprocal 2^-127 is a subnormal that is still exact), so
// x * (1/scale) and x / scale are the same real number and round to the
// same fp32, subnormal results included. For scale = +Inf the reciprocal
// is +0: finite x -> +-0 and +-Inf -> NaN, exactly as x / Inf gives. This
// lets a row divide with one multiply per element.
// Normal results are built from the exponent bits (biased exponent E becomes
// 254 - E); 2^127 (reciprocal subnormal) takes the IEEE division. A device
// test compares every power of two and +Inf with the exact 1/x.
__device__ __forceinline__ float exact_reciprocal_of_pow2(float scale) {
  const uint32_t bits = __float_as_uint(scale);
  if (bits == 0x7F800000u) return 0.0f;
  const bool normal_power_of_two = (bits & 0x807FFFFFu) == 0u && bits >= 0x00800000u;
  if (!normal_power_of_two || bits >= 0x7F000000u) return __fdiv_rn(1.0f, scale);
  return __uint_as_float((254u << 23) - bits);
}

// The reciprocal of a scale that ue8m0_scale_from_amax returned, without a
// branch: such a scale is 2^e with e in [-22, 120] or +Inf, and for every
// normal power of two up to 2^126 the reciprocal 2^-e is normal, so its bits
// are (254 << 23) - bits; +Inf gives +0, as x / Inf does. The same values as
// exact_reciprocal_of_pow2 on that domain (a device test compares every
// power of two 2^-126 .. 2^126 and +Inf with the exact 1/x) in three
// instructions instead of a branch over the general case: it sits on the
// indexer's dependent chain (amax -> scale -> codes), which sets the
// kernel's latency at small T.
__device__ __forceinline__ float reciprocal_of_ue8m0_scale(float scale) {
  // (a scale that is not a power of two has no bit-trick reciprocal)
  if constexpr (planted::is(planted::kNonPow2Scale) || planted::is(planted::kFloorOnScale)) {
    return __fdiv_rn(1.0f, scale);
  }
  return qcheck::device::reciprocal_of_ue8m0_scale(scale);
}

// The divisor of one quantization, in the form the kernels apply it:
// `power_of_two` is true when `divisor` is a power of two or +Inf (then the
// element is multiplied by the exact reciprocal), else the element is
// divided with IEEE division (q_scale = 0.37 on vLLM's test, for example).
struct Divisor {
  float divisor;
  float reciprocal;
  bool power_of_two;
};

__device__ __forceinline__ Divisor make_divisor(float divisor) {
  const uint32_t bits = __float_as_uint(divisor);
  const bool power_of_two = (bits & 0x007FFFFFu) == 0u && (bits >> 23) != 0u;
  if constexpr (planted::is(planted::kFp8Reciprocal)) return Divisor{divisor, __frcp_rn(divisor), true};
  return Divisor{divisor, power_of_two ? exact_reciprocal_of_pow2(divisor) : 0.0f, power_of_two};
}

// RN(x / divisor): the quotient every e4m3 code is taken of
// (numerics/row_ops.h quantize_row: e4m3(RN(in / divisor))).
__device__ __forceinline__ float divide(float x, const Divisor& d) {
  return d.power_of_two ? __fmul_rn(x, d.reciprocal) : __fdiv_rn(x, d.divisor);
}

// The indexer weight: ((w * scale) * softmax_scale) * head_scale, three fp32
// roundings in that order (SEMANTICS.md task 2; WeightsOrder::kScaleSoftmaxHead).
__device__ __forceinline__ float indexer_weight(float w, float scale, float softmax_scale,
                                                float head_scale) {
  if constexpr (planted::is(planted::kWeightsOtherOrder)) {
    return __fmul_rn(__fmul_rn(w, __fmul_rn(softmax_scale, head_scale)), scale);
  }
  if constexpr (planted::is(planted::kWeightsMissingScale)) return __fmul_rn(__fmul_rn(w, softmax_scale), head_scale);
  return __fmul_rn(__fmul_rn(__fmul_rn(w, scale), softmax_scale), head_scale);
}

// An indexer value on its way to the amax and the codes: as is, or (planted)
// rounded to bf16 first.
__device__ __forceinline__ float indexer_value(float v) {
  if constexpr (planted::is(planted::kBf16BeforeQuant)) return __uint_as_float(static_cast<uint32_t>(bf16_from_f32(v)) << 16);
  return v;
}

}  // namespace qcheck::cuda::device
