#include "ops/fused_k/oracle/latent_rows.h"

#include <vector>

#include "numerics/conversions.h"
#include "numerics/rope.h"
#include "ops/fused_k/oracle/mla_cache.h"

namespace qcheck::fused_k {
namespace {

std::vector<float> f32_row(const uint16_t* bf16, int64_t width) {
  std::vector<float> row(static_cast<size_t>(width));
  for (int64_t i = 0; i < width; ++i) row[static_cast<size_t>(i)] = spec::f32_from_bf16(bf16[i]);
  return row;
}

}  // namespace

float q_latent_row(const uint16_t* q_c, const float* w, int64_t width, float eps, const LatentRules& rules, float* y,
                   const NormOps& norms) {
  const std::vector<float> x = f32_row(q_c, width);
  return norms.rms_norm_row(x.data(), w, width, eps, rules.weight, rules.norm, y);
}

float kv_latent_row(const uint16_t* kv_c, const float* w, float eps, const uint16_t* k_pe, const float* cos,
                    const float* sin, const LatentRules& rules, float* latent, float* rope, const NormOps& norms) {
  const std::vector<float> x = f32_row(kv_c, kMlaLatent), pe = f32_row(k_pe, kMlaRope);
  const float r = norms.rms_norm_row(x.data(), w, kMlaLatent, eps, rules.weight, rules.norm, latent);
  spec::rope_row(pe.data(), cos, sin, kMlaRope, RopeStyle::kInterleaved, rules.rope_minus, rules.rope_plus, rope);
  return r;
}

}  // namespace qcheck::fused_k
