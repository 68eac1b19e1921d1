// Scalar spec of the number-format conversions: the readable definition every
// SIMD and CUDA version is tested against, bit for bit.
// Sources: SEMANTICS.md "Numeric building blocks"; OCP 8-bit FP spec (E4M3FN);
// PTX ISA cvt.rn.bf16.f32 and cvt.rn.satfinite.e4m3x2.f32.
#pragma once

#include <cstdint>

#include "numerics/float_bits.h"
#include "numerics/profile.h"

namespace qcheck::spec {

// bf16 <- f32, round to nearest even. Subnormals are kept, FLT_MAX rounds to
// +Inf, and a NaN becomes the bits the profile names. (Inline, as
// f32_from_bf16 below: the fillers and oracles call both for every element.)
inline uint16_t bf16_from_f32(float value, Bf16Nan nan_rule) {
  const uint32_t bits = bits_of(value);
  if (is_nan_bits(bits)) {
    switch (nan_rule) {
      case Bf16Nan::k7FFF: return 0x7FFF;
      case Bf16Nan::k7FC0: return 0x7FC0;
      case Bf16Nan::kKeepSignQuiet: return static_cast<uint16_t>((bits >> 16) | 0x0040);
    }
  }
  // Round to nearest even on the 16 bits that are dropped: add just under
  // half an ulp, plus one more when the kept part is odd (ties go to even).
  const uint32_t lsb = (bits >> 16) & 1u;
  return static_cast<uint16_t>((bits + 0x7FFFu + lsb) >> 16);
}

// f32 <- bf16 is exact: the 16 bits become the top half of the f32.
inline float f32_from_bf16(uint16_t bits) { return float_from_bits(static_cast<uint32_t>(bits) << 16); }

// The fp32 bits a kernel stores for an arithmetic result: a NaN becomes
// 0x7FFFFFFF under F32Nan::kCanonical; everything else is unchanged.
float f32_stored(float value, F32Nan nan_rule);

// e4m3 (OCP E4M3FN: bias 7, max 448 = 0x7E, NaN 0x7F/0xFF, no Inf) <- f32,
// round to nearest even, then the profile's overflow rule.
uint8_t e4m3_from_f32(float value, E4m3Overflow overflow);

// f32 <- e4m3 is exact; 0x7F and 0xFF give a quiet NaN with that sign.
float f32_from_e4m3(uint8_t code);

}  // namespace qcheck::spec
