#include "numerics/norm.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "numerics/conversions.h"
#include "numerics/rcp_approx.h"
#include "numerics/rsqrt.h"
#include "numerics/rsqrt_approx.h"

namespace qcheck::spec {
namespace {

// The sum of v[0 .. n) over the rules' lanes: zeros after the row up to
// sum_width.
float padded_sum(std::vector<float> v, const NormRules& rules) {
  if (rules.sum_width > static_cast<int64_t>(v.size())) v.resize(static_cast<size_t>(rules.sum_width), 0.0f);
  return reduce_sum(v.data(), static_cast<int64_t>(v.size()), rules.reduction);
}

// The sum of the squares of v[0 .. n) over the rules' lanes, each square
// rounded or fused as the reduction says.
float padded_sum_of_squares(std::vector<float> v, const NormRules& rules) {
  if (rules.sum_width > static_cast<int64_t>(v.size())) v.resize(static_cast<size_t>(rules.sum_width), 0.0f);
  return reduce_sum_of_squares(v.data(), static_cast<int64_t>(v.size()), rules.reduction);
}

}  // namespace

const char* name_of(RsqrtKind kind) {
  switch (kind) {
    case RsqrtKind::kCorrectlyRounded: return "rsqrt-rn";
    case RsqrtKind::kSqrtThenDivide: return "one-over-sqrt";
    case RsqrtKind::kApproxFtz: return "rsqrt-approx-ftz";
    case RsqrtKind::kApprox: return "rsqrt-approx";
  }
  return "?";
}

const char* name_of(RmsWeight weight) { return weight == RmsWeight::kF32 ? "weight-f32" : "bf16-before-weight"; }

const char* name_of(LayerNormAffine affine) { return affine == LayerNormAffine::kFma ? "fma" : "multiply-add"; }

const char* name_of(WidthDivision division) { return division == WidthDivision::kIeee ? "ieee" : "div-full"; }

const char* norm_rules_error(const NormRules& rules, int64_t n) {
  if (n < 1) return "norm width n must be at least 1";
  if (rules.divide == WidthDivision::kDivFull && n > kRcpApproxWidths) {
    return "norm width n must be at most 65536 with divide div-full (the widths measured)";
  }
  return reduction_error(rules.reduction);
}

NormRules triton_norm_rules(int64_t n, int warps) {
  int64_t block = 1;
  while (block < n) block *= 2;
  NormRules rules;
  rules.reduction = triton_block_reduction(block, warps);
  rules.reduction.squares = SquareStep::kFused;
  rules.sum_width = block;
  rules.divide = WidthDivision::kDivFull;
  rules.rsqrt = RsqrtKind::kApproxFtz;
  return rules;
}

float norm_divide(float sum, int64_t n, const NormRules& rules) {
  return rules.divide == WidthDivision::kIeee ? sum / static_cast<float>(n) : divide_full_by_width(sum, n);
}

float norm_rsqrt(float v, const NormRules& rules) {
  switch (rules.rsqrt) {
    case RsqrtKind::kCorrectlyRounded: return rsqrt_rn(v);
    case RsqrtKind::kSqrtThenDivide: return 1.0f / std::sqrt(v);
    case RsqrtKind::kApproxFtz:
    case RsqrtKind::kApprox:
      return rsqrt_approx_with(rules.rsqrt_table != nullptr ? rules.rsqrt_table : rsqrt_approx_table(), v,
                               rules.rsqrt == RsqrtKind::kApproxFtz);
  }
  return NAN;
}

float rms_norm_row(const float* x, const float* w, int64_t n, float eps, RmsWeight weight, const NormRules& rules,
                   float* y) {
  const float mean_square = norm_divide(padded_sum_of_squares(std::vector<float>(x, x + n), rules), n, rules);
  const float r = norm_rsqrt(mean_square + eps, rules);
  for (int64_t i = 0; i < n; ++i) {
    float normalized = x[i] * r;
    if (weight == RmsWeight::kBf16BeforeWeight) normalized = f32_from_bf16(bf16_from_f32(normalized, Bf16Nan::k7FFF));
    y[i] = normalized * w[i];
  }
  return r;
}

LayerNormStats layer_norm_row(const float* x, const float* w, const float* b, int64_t n, float eps,
                              LayerNormAffine affine, const NormRules& rules, float* y) {
  LayerNormStats s;
  s.mean = norm_divide(padded_sum(std::vector<float>(x, x + n), rules), n, rules);
  std::vector<float> centred(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) centred[static_cast<size_t>(i)] = x[i] - s.mean;
  s.variance = norm_divide(padded_sum_of_squares(centred, rules), n, rules);
  s.rstd = norm_rsqrt(s.variance + eps, rules);
  for (int64_t i = 0; i < n; ++i) {
    const float p = centred[static_cast<size_t>(i)] * s.rstd;
    y[i] = affine == LayerNormAffine::kFma ? std::fma(p, w[i], b[i]) : p * w[i] + b[i];
  }
  return s;
}

}  // namespace qcheck::spec
