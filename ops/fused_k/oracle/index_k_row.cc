#include "ops/fused_k/oracle/index_k_row.h"

#include <algorithm>
#include <vector>

#include "numerics/conversions.h"
#include "numerics/e4m3fnuz.h"
#include "numerics/quotient.h"
#include "numerics/rope.h"
#include "numerics/ue8m0.h"

namespace qcheck::fused_k {

float index_k_row(const uint16_t* x, const float* w, const float* b, float eps, const float* cos, const float* sin,
                  const IndexKShape& shape, const IndexKRules& rules, float* rotated, uint8_t* codes,
                  const NormOps& norms) {
  const size_t dim = static_cast<size_t>(shape.dim), rope_dim = static_cast<size_t>(shape.rope_dim);
  std::vector<float> row(dim), normalized(dim);
  for (size_t i = 0; i < dim; ++i) row[i] = spec::f32_from_bf16(x[i]);
  norms.layer_norm_row(row.data(), w, b, shape.dim, eps, rules.affine, rules.norm, normalized.data());
  spec::rope_row(normalized.data(), cos, sin, rope_dim, shape.style, rules.rope_minus, rules.rope_plus, rotated);
  std::copy(normalized.begin() + static_cast<std::ptrdiff_t>(rope_dim), normalized.end(), rotated + rope_dim);
  // The scale rules as a profile's (numerics/ue8m0.h reads them from one).
  Profile scale_rules;
  scale_rules.scale_ceiling = rules.scale_ceiling;
  scale_rules.scale_floor = rules.scale_floor;
  scale_rules.scale_quotient = rules.scale_quotient;
  const bool fnuz = shape.fp8 == IndexKFp8::kFnuz;
  const float scale = spec::row_scale(rotated, dim, scale_rules, fnuz ? rules.fnuz_max : 448.0f);
  for (size_t i = 0; i < dim; ++i) {
    const float q = spec::quotient(rotated[i], scale, rules.codes);
    codes[i] = fnuz ? spec::e4m3fnuz_from_f32(q, rules.fnuz_overflow) : spec::e4m3_of_quotient(q, rules.overflow);
  }
  return scale;
}

}  // namespace qcheck::fused_k
