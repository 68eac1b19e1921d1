// Index-K prep of one token (SEMANTICS-K.md 1.5), the indexer's key row:
//   x        = f32 of the bf16 row (dim elements)
//   n        = LayerNorm(x, w, b, eps) under rules.norm and rules.affine
//   rotated  = n with its first rope_dim elements rotated (numerics/rope.h,
//              the style's pairs, rules.rope_minus / rope_plus)
//   scale    = the UE8M0 scale of rotated (numerics/ue8m0.h: amax with NaN
//              ignored, the floor, amax / M, the ceiling), no bf16 round trip;
//              M = 448 (OCP) or the rules' fnuz_max (224) on an FNUZ cache
//   codes[i] = e4m3 (or e4m3fnuz) of rotated[i] / scale (saturating)
// A kernel's bf16 key output (vLLM's index_k_out) is bf16(rotated). The amax
// runs over the row's dim elements: vLLM's Triton kernel also takes the
// masked lanes of its next_pow2(dim) block, harmless only when dim is a
// power of two (every real model: 128), so the oracle takes such rows as
// they are. On FNUZ the codes' bits are the OCP ones of the same row (the
// scale doubles, each FNUZ code is worth half), but for zeros (unsigned),
// NaN (0x80) and the saturation rule (fnuz_overflow).
#pragma once

#include <cstdint>

#include "numerics/norm.h"
#include "numerics/profile.h"
#include "numerics/simd_norm.h"
#include "numerics/types.h"
#include "ops/fused_k/args/fused_k_args.h"

namespace qcheck::fused_k {

struct IndexKShape {
  int64_t dim = 128;      // D
  int64_t rope_dim = 64;  // R <= D, even; the first R elements are rotated
  RopeStyle style = RopeStyle::kNeox;
  IndexKFp8 fp8 = IndexKFp8::kOcp;  // the cache's encoding
};

// The conventions of one kernel: each field a choice kernels differ in.
struct IndexKRules {
  spec::NormRules norm;  // the LayerNorm's sums (order, block width) and its rsqrt
  spec::LayerNormAffine affine = spec::LayerNormAffine::kFma;
  Contraction rope_minus = Contraction::kFuseCos;  // r_j with sign -: x_j c - x_p s
  Contraction rope_plus = Contraction::kFuseCos;
  ScaleCeiling scale_ceiling = ScaleCeiling::kExactBits;
  ScaleFloor scale_floor = ScaleFloor::kAmax1e4;
  ScaleQuotient scale_quotient = ScaleQuotient::kDivide;
  Quotient codes = Quotient::kDivide;
  E4m3Overflow overflow = E4m3Overflow::kSatFinite;
  // On an FNUZ cache: the maximum the scale divides by (vLLM's ROCm FP8_MAX),
  // and the e4m3fnuz saturation rule (qcheck's kernel: kSatFinite).
  float fnuz_max = 224.0f;
  E4m3FnuzOverflow fnuz_overflow = E4m3FnuzOverflow::kSatFinite;
};

// One token: x holds dim bf16 bits; w and b dim values (a bf16 weight
// converted exactly); cos and sin rope_dim / 2 values of the token's
// position. Writes rotated (dim f32) and codes (dim e4m3); returns the scale.
// `norms` computes the LayerNorm: the scalar spec or the Highway rows, the
// same bits (numerics/simd_norm.h).
float index_k_row(const uint16_t* x, const float* w, const float* b, float eps, const float* cos, const float* sin,
                  const IndexKShape& shape, const IndexKRules& rules, float* rotated, uint8_t* codes,
                  const NormOps& norms = scalar_norm_ops());

}  // namespace qcheck::fused_k
