// Scalar spec of the number-format conversions: the readable definition every
// SIMD and CUDA version is tested against, bit for bit.
// Sources: SEMANTICS.md "Numeric building blocks"; OCP 8-bit FP spec (E4M3FN);
// PTX ISA cvt.rn.bf16.f32 and cvt.rn.satfinite.e4m3x2.f32.
#pragma once

#include <cstdint>

#include "numerics/profile.h"

namespace qcheck::spec {

// bf16 <- f32, round to nearest even. Subnormals are kept, FLT_MAX rounds to
// +Inf, and a NaN becomes the bits the profile names.
uint16_t bf16_from_f32(float value, Bf16Nan nan_rule);

// f32 <- bf16 is exact: the 16 bits become the top half of the f32.
float f32_from_bf16(uint16_t bits);

// The fp32 bits a kernel stores for an arithmetic result: a NaN becomes
// 0x7FFFFFFF under F32Nan::kCanonical; everything else is unchanged.
float f32_stored(float value, F32Nan nan_rule);

// e4m3 (OCP E4M3FN: bias 7, max 448 = 0x7E, NaN 0x7F/0xFF, no Inf) <- f32,
// round to nearest even, then the profile's overflow rule.
uint8_t e4m3_from_f32(float value, E4m3Overflow overflow);

// f32 <- e4m3 is exact; 0x7F and 0xFF give a quiet NaN with that sign.
float f32_from_e4m3(uint8_t code);

}  // namespace qcheck::spec
