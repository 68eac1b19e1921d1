// Scalar spec of e2m1, the FP4 element of MXFP4 and NVFP4: 1 sign, 2 exponent
// and 1 mantissa bit, exponent bias 1, no Inf, no NaN. A code is a nibble; bit
// 3 is the sign, so the codes 0..7 are 0, 0.5, 1, 1.5, 2, 3, 4, 6 and 8..15
// the same negated (8 is -0). Two codes share a byte: the even element in the
// low nibble, the odd one in the high nibble (SEMANTICS-K.md section 0, "byte
// orders": every kernel of the family packs this way).
// Sources: SEMANTICS-K.md section 0 ("e2m1s") and table 5.4 (the rounding
// conventions, E2m1Rounding in types.h).
#pragma once

#include <cstdint>

#include "numerics/types.h"

namespace qcheck::spec {

constexpr float kE2m1Max = 6.0f;
constexpr uint8_t kE2m1MaxCode = 0x7;

// The code a NaN gets under E2m1Rounding::kCvtRn and kCvtRnNoNegZero: +6
// (0x7). UNMEASURED: SEMANTICS-K.md leaves the NaN result of
// cvt.rn.satfinite.e2m1x2 to measure (the instruction needs sm_100a or
// sm_120a; the H200 has none). +6 is what the CUDA 13.0 toolkit's host
// fallback for it writes (cuda_fp4.hpp, __nv_cvt_double_to_fp4: "NaN converts
// to positive FP4_MAXNORM"; reference.CudaHostConversions.Fp4E2m1MatchesSpecCvtRn
// compares the two over all 2^32 inputs), and what SGLang's thresholds give;
// a placeholder until a device says otherwise.
constexpr uint8_t kE2m1NanPlaceholder = 0x7;

// e2m1 <- f32 under one of the rounding conventions (types.h):
//   kCvtRn:          round to nearest even: ties 0.25 -> 0, 0.75 -> 1,
//                    1.25 -> 1, 1.75 -> 2, 2.5 -> 2, 3.5 -> 4, 5 -> 4;
//                    |x| > 6 and +-Inf -> +-6; a negative value that rounds
//                    to zero, -0 included, -> 0x8; NaN -> kE2m1NanPlaceholder.
//   kCvtRnNoNegZero: the same, but 0x8 becomes 0x0.
//   kSglangThresholds: see e2m1.cc (ties toward zero, no -0, NaN -> 0x7).
uint8_t e2m1_from_f32(float value, E2m1Rounding rounding);

// f32 <- e2m1 is exact. Only the low nibble of `code` is read.
float f32_from_e2m1(uint8_t code);

// The byte of an element pair: even_code in bits 0-3, odd_code in bits 4-7
// (SEMANTICS-K.md: byte k = e2m1s(q_2k) | e2m1s(q_2k+1) << 4). Only the low
// nibble of each code is read.
constexpr uint8_t pack_e2m1_pair(uint8_t even_code, uint8_t odd_code) {
  return static_cast<uint8_t>((even_code & 0xF) | (odd_code & 0xF) << 4);
}
constexpr uint8_t e2m1_even_code(uint8_t byte) { return static_cast<uint8_t>(byte & 0xF); }
constexpr uint8_t e2m1_odd_code(uint8_t byte) { return static_cast<uint8_t>(byte >> 4); }

}  // namespace qcheck::spec
