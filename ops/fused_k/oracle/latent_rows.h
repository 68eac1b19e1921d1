// The latent rows of fused_k (SEMANTICS-K.md 1.2, 1.3): the Q latent's
// RMSNorm (role 2; its bf16 output is bf16 of the row) and the KV latent's
// RMSNorm with the k_pe RoPE (role 1), whose f32 results go into the MLA
// cache (mla_cache.h) with no bf16 round trip and, where a kernel writes
// them, to bf16 outputs.
#pragma once

#include <cstdint>

#include "numerics/norm.h"
#include "numerics/profile.h"
#include "numerics/simd_norm.h"

namespace qcheck::fused_k {

struct LatentRules {
  spec::NormRules norm;  // the sum of squares' order and block, the rsqrt
  spec::RmsWeight weight = spec::RmsWeight::kF32;
  Contraction rope_minus = Contraction::kFuseCos;  // r1 = x1 c - x2 s
  Contraction rope_plus = Contraction::kFuseCos;   // r2 = x2 c + x1 s
};

// RMSNorm of `width` bf16 values with weights w (as f32): y (f32). Returns r.
// `norms`: the scalar spec or the Highway rows (index_k_row.h).
float q_latent_row(const uint16_t* q_c, const float* w, int64_t width, float eps, const LatentRules& rules, float* y,
                   const NormOps& norms = scalar_norm_ops());

// kv_c (512 bf16) normalized into latent (512 f32); k_pe (64 bf16) rotated
// in interleaved pairs (r1_i at 2i, r2_i at 2i + 1) by cos and sin (32
// values each, the token's position) into rope (64 f32). Returns r.
float kv_latent_row(const uint16_t* kv_c, const float* w, float eps, const uint16_t* k_pe, const float* cos,
                    const float* sin, const LatentRules& rules, float* latent, float* rope,
                    const NormOps& norms = scalar_norm_ops());

}  // namespace qcheck::fused_k
