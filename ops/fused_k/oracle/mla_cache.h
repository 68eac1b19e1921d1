// The MLA KV cache entry of one token (SEMANTICS-K.md 1.4), from the f32
// values a kernel holds: the normalized KV latent (512, no bf16 round trip)
// and the rotated k_pe (64, pairs interleaved: r1_i at 2i, r2_i at 2i + 1).
// Four formats:
//   bf16         1152 bytes: 576 bf16, the latent then the rope (RNE).
//   fp8           576 bytes: e4m3 codes of latent / k_scale, rope / k_scale
//                (k_scale = 1 is the kernels' "skip scale": the same codes).
//   fp8_ds_mla    656 bytes: four tiles of 128 latent values, each with the
//                scale s = ceiling(floor(a * RN(1/448))) of its amax a (NaN
//                ignored; vLLM: log2f ceiling, 1e-4 floor on the scale): bytes
//                [0, 512) the codes of x / s, [512, 528) the four scales as
//                f32, [528, 656) the rope as 64 bf16.
//   nvfp4_ds_mla  352 bytes: 32 tiles of 16 latent values, each with the
//                e4m3 scale sf = e4m3(max(RN(a * RN(1/6)), 2^-9)) and
//                q = RN(x * inv), inv the reciprocal of sf: bytes [0, 256) the
//                e2m1 codes of q two per byte (even element low), [256, 320)
//                the rope as e4m3 (unscaled), [320, 352) the tile scales, tile t
//                at byte 320 + 8 (t % 4) + t / 4.
// Every e4m3 is the saturating conversion (|x| >= 464 and Inf -> +-448).
#pragma once

#include <cstdint>

#include "numerics/profile.h"
#include "numerics/types.h"
#include "ops/fused_k/args/fused_k_args.h"  // MlaCacheFormat, mla_entry_bytes

namespace qcheck::fused_k {

// The conventions kernels differ in, per format.
struct MlaCacheRules {
  Quotient fp8_quotient = Quotient::kDivide;  // x / k_scale, or x * RN(1 / k_scale)
  // fp8_ds_mla's tile scale (vLLM's fused Triton write: log2f, times RN(1/448), floor on the scale).
  ScaleCeiling ds_ceiling = ScaleCeiling::kLog2f;
  ScaleQuotient ds_quotient = ScaleQuotient::kTimesReciprocal;
  ScaleFloor ds_floor = ScaleFloor::kScale1e4;
  // nvfp4_ds_mla: vLLM's fused write takes each pair apart with a two-element
  // sum against 0.0, which turns an exact -0 into +0 before the conversion.
  bool nvfp4_adds_zero = true;
  E2m1Rounding e2m1 = E2m1Rounding::kCvtRn;
  // The reciprocal of an nvfp4 tile scale is taken IEEE here (1.0f / sf, as
  // vLLM's CUDA writer does); Triton's approximate `/` is still to measure
  // on the device for the 126 positive finite e4m3 values (SEMANTICS-K 8).
};

// Writes the entry (mla_entry_bytes(format) bytes) of one token.
void mla_cache_entry(const float* latent, const float* rope, MlaCacheFormat format, float k_scale,
                     const MlaCacheRules& rules, uint8_t* entry);

// The tile scale byte positions of nvfp4_ds_mla: tile t's scale at this
// offset of the entry.
constexpr int64_t nvfp4_scale_byte(int64_t tile) { return 320 + 8 * (tile % 4) + tile / 4; }

}  // namespace qcheck::fused_k
