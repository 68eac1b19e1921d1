// The family's conversions and approximate steps on the device, one
// function per rule of the scalar spec, with no planted variant: the
// building blocks an op's CUDA kernels share (fused_q's device_numerics.cuh
// wraps them with its planted bugs; fused_k's kernels call them directly).
// Each is pinned to one PTX instruction or to integer operations, so nvcc
// can neither contract nor approximate them differently from the spec. Built
// without fast math and without FTZ (nvcc's defaults).
#pragma once

#include <cuda_bf16.h>
#include <cstdint>

namespace qcheck::device {

// f32 <- bf16 is exact: the 16 bits become the top half (numerics/conversions.h).
__device__ __forceinline__ float f32_from_bf16(uint16_t bits) {
  return __uint_as_float(static_cast<uint32_t>(bits) << 16);
}

// bf16 <- f32, round to nearest even: PTX cvt.rn.bf16.f32 on sm_80+, which
// turns every NaN into 0x7FFF (Bf16Nan::k7FFF).
__device__ __forceinline__ uint16_t bf16_from_f32(float value) {
  return __bfloat16_as_ushort(__float2bfloat16_rn(value));
}

// Two e4m3 codes from one cvt.rn.satfinite.e4m3x2.f32: RNE, overflow and
// +-Inf saturate to +-448 (0x7E / 0xFE), every NaN -> 0x7F
// (E4m3Overflow::kSatFinite). The PTX ISA puts the FIRST source operand in
// the UPPER byte, so `high` is passed first.
__device__ __forceinline__ uint16_t e4m3x2_from_f32(float high, float low) {
  uint16_t codes;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(codes) : "f"(high), "f"(low));
  return codes;
}

__device__ __forceinline__ uint8_t e4m3_from_f32(float value) {
  return static_cast<uint8_t>(e4m3x2_from_f32(0.0f, value) & 0xFFu);
}

// The value of a non-negative e4m3 code (0x00 .. 0x7E): exponent field 0 is
// m * 2^-9, else (8 + m) * 2^(E - 10); exact in f32.
__device__ __forceinline__ float f32_from_positive_e4m3(uint8_t code) {
  const uint32_t exponent = code >> 3, mantissa = code & 7u;
  if (exponent == 0) return static_cast<float>(mantissa) * 0.001953125f;
  return __uint_as_float(((exponent + 120u) << 23) | (mantissa << 20));
}

// e2m1 <- f32 as cvt.rn.satfinite.e2m1x2.f32 does it (E2m1Rounding::kCvtRn,
// numerics/e2m1.h), which Hopper lacks: round to nearest even over
// {0, 0.5, 1, 1.5, 2, 3, 4, 6}, |x| >= 7 and Inf -> 6, the sign kept on a
// zero code, every NaN -> the placeholder 0x7. A midpoint goes to the even
// code: 0.25 -> 0, 0.75 -> 1, 1.25 -> 1, 1.75 -> 2, 2.5 -> 2, 3.5 -> 4,
// 5 -> 4, so the code counts the bounds passed, strictly at the midpoints
// below an odd code and inclusively at those below an even one.
__device__ __forceinline__ uint8_t e2m1_from_f32(float value) {
  const uint32_t bits = __float_as_uint(value);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return 0x7;
  const float m = __uint_as_float(bits & 0x7FFFFFFFu);
  const uint32_t code = (m > 0.25f) + (m >= 0.75f) + (m > 1.25f) + (m >= 1.75f) + (m > 2.5f) + (m >= 3.5f) + (m > 5.0f);
  return static_cast<uint8_t>(((bits >> 28) & 0x8u) | code);
}

// The GPU's approximate reciprocal square root without FTZ (rsqrtf without
// fast math; RsqrtKind::kApprox, reproduced on the CPU by its measured
// table, numerics/rsqrt_approx.h).
__device__ __forceinline__ float rsqrt_approx(float value) {
  float r;
  asm("rsqrt.approx.f32 %0, %1;" : "=f"(r) : "f"(value));
  return r;
}

// The UE8M0 scale of an amax (numerics/ue8m0.h under ScaleCeiling::kExactBits,
// ScaleFloor::kAmax1e4, ScaleQuotient::kDivide): the smallest power of two
// >= RN(max(amax, 1e-4) / 448), without the division: for amax = m * 2^e
// that is 2^(e - 8) when m <= 1.75 and 2^(e - 7) above (fused_q's
// device_numerics.cuh gives the proof; its sweep over every amax checks
// it); +Inf stays +Inf; a NaN amax takes the floor.
__device__ __forceinline__ float ue8m0_scale_from_amax(float amax) {
  const uint32_t bits = __float_as_uint(fmaxf(amax, 1e-4f));
  if (bits >= 0x7F800000u) return __uint_as_float(bits);
  const uint32_t above_1_75 = (bits & 0x007FFFFFu) > 0x00600000u ? 0x00800000u : 0u;
  return __uint_as_float((bits & 0x7F800000u) + above_1_75 - (8u << 23));
}

// 1 / scale for a scale ue8m0_scale_from_amax returned (2^e, e in
// [-22, 120], or +Inf): exact, so x * it is RN(x / scale); +Inf gives +0.
__device__ __forceinline__ float reciprocal_of_ue8m0_scale(float scale) {
  const uint32_t bits = __float_as_uint(scale);
  return bits == 0x7F800000u ? 0.0f : __uint_as_float((254u << 23) - bits);
}

}  // namespace qcheck::device
