// Scalar spec of e4m3fnuz, AMD's FP8 (the "fnuz" float8 of MI300 and of
// PyTorch's torch.float8_e4m3fnuz): 1 sign, 4 exponent and 3 mantissa bits,
// exponent bias 8 (OCP's e4m3fn has 7), no Inf, no negative zero, and a single
// NaN, 0x80 (the bits OCP gives -0). So a code's value is half what OCP
// gives the same bits (but for 0x7F and 0x80), the largest is 0x7F =
// 1.875 * 2^7 = 240 (OCP: 0x7E = 448, 0x7F NaN), the smallest normal
// 0x08 = 2^-7, the subnormals m * 2^-10 (m = 1..7).
// Sources: SEMANTICS.md ("fnuz vs OCP fp8", bug 6) and SEMANTICS-K.md
// (FP8_MAX 224 on FNUZ platforms: the kernels clamp to 224 before the cast,
// a step of theirs, not of this conversion); the encoders compared in types.h
// (E4m3FnuzOverflow).
#pragma once

#include <cstdint>

#include "numerics/types.h"

namespace qcheck::spec {

constexpr uint8_t kE4m3FnuzNan = 0x80;
constexpr uint8_t kE4m3FnuzMaxCode = 0x7F;  // 240; 0xFF is -240
constexpr float kE4m3FnuzMax = 240.0f;

// e4m3fnuz <- f32: round to nearest even (ties at 248, halfway between 240
// and the 256 the format lacks, round up to 256: an overflow), then the
// overflow rule for results above 240 and for +-Inf. NaN -> 0x80. A result
// that rounds to zero is 0x00 whatever the sign: 0x80 is the NaN.
uint8_t e4m3fnuz_from_f32(float value, E4m3FnuzOverflow overflow);

// f32 <- e4m3fnuz is exact. 0x80 gives 0xFFC00000, the quiet NaN with the
// code's sign bit, as f32_from_e4m3 (conversions.h) gives for OCP's 0xFF and
// as ml_dtypes gives. Other decoders give other NaN bits (AMD's software
// reference 0x7F800001); only its being a NaN is the format's.
float f32_from_e4m3fnuz(uint8_t code);

}  // namespace qcheck::spec
