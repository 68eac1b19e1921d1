// Scalar spec of the UE8M0 row scale of the indexer quantization.
// Default rule (DeepGEMM, DeepSeek reference, vLLM CuTeDSL; SEMANTICS.md):
//   amax  = max |x| over the row, NaN lanes ignored (maxnum)
//   amax  = max(amax, 1e-4f)
//   s0    = RN(amax / 448)                      IEEE division
//   scale = smallest power of two >= s0         (bits + 0x7FFFFF) & 0x7F800000
// Variants are selected by the profile's ScaleCeiling and ScaleFloor. On an
// FNUZ cache (AMD's e4m3fnuz) the kernels divide by 224 instead of 448
// (SEMANTICS-K.md 1.5: vLLM's FP8_MAX on FNUZ platforms): `fp8_max`.
#pragma once

#include <cstddef>
#include <cstdint>

#include "numerics/profile.h"

namespace qcheck::spec {

// max |x| with NaN lanes ignored; 0 for an empty or all-NaN row; +Inf if any
// lane is infinite.
float row_amax(const float* row, size_t count);

// Power-of-two ceiling of a positive s0, by bits (exact). +Inf stays +Inf.
float ceil_pow2_exact(float s0);

// Power-of-two ceiling via exp2(ceil(log2f(s0))), with the C library's log2f
// (glibc's is the accurate fp32 log2f that vLLM's Triton kernel matches).
float ceil_pow2_log2f(float s0);

// The scale of a row whose amax (NaN ignored) is given, under the profile's
// rule. A power of two or +Inf (the ceiling kNone: s0 itself).
float ue8m0_scale(float amax, ScaleCeiling ceiling, ScaleFloor floor, float fp8_max = 448.0f);

// The scale of a row under every scale rule of the profile: the amax's NaN
// rule (over the row), the floor, the quotient that gives s0, the ceiling
// (NaN when the row's NaN propagates). With the default quotient and NaN
// rule this is ue8m0_scale(row_amax(row), ceiling, floor).
float row_scale(const float* row, size_t count, const Profile& profile, float fp8_max = 448.0f);

// The e8m0 byte of a scale: its biased exponent. A +Inf scale has no e8m0
// encoding; 0xFF (the e8m0 NaN) is returned for it.
uint8_t e8m0_byte(float scale);

}  // namespace qcheck::spec
