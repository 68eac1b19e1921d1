// RMSNorm and LayerNorm of one row, bit for bit, under named conventions
// (SEMANTICS-K.md 1.2, 1.3, 1.5): the order of the sums, the lanes the
// kernel sums over (a Triton block pads the row with zeros to a power of
// two), the reciprocal square root, and where the weight (and bias) is
// applied. Every step is an IEEE f32 operation rounded to nearest even
// unless a convention names a fused multiply-add or an approximate step
// (the division by the width, the rsqrt). A NaN in a row gives NaNs; their
// payload and sign are not specified (which operand's NaN an x86 multiply or
// fused step passes on depends on the operand order a compiler picks), so
// the ops store them through a conversion with a named NaN rule.
#pragma once

#include <cstdint>

#include "numerics/reduction.h"

namespace qcheck::spec {

enum class RsqrtKind : uint8_t {
  kCorrectlyRounded = 0,  // rsqrt_rn (numerics/rsqrt.h)
  kSqrtThenDivide = 1,    // 1.0f / sqrtf(v): two IEEE roundings
  kApproxFtz = 2,         // the GPU's rsqrt.approx.ftz.f32 (tl.rsqrt; rsqrtf under fast-math), from a table
  kApprox = 3,            // rsqrt.approx.f32 (rsqrtf without fast-math), from the same table
};
const char* name_of(RsqrtKind kind);

// RMSNorm's weight step, y from the normalized x * r.
enum class RmsWeight : uint8_t {
  kF32 = 0,               // y = RN(RN(x * r) * w): vLLM's fused Triton norm (SEMANTICS-K 1.2 step 5)
  kBf16BeforeWeight = 1,  // y = RN(bf16(RN(x * r)) * w): the row in the model's dtype first (vLLM's CUDA rms_norm)
};
const char* name_of(RmsWeight weight);

// LayerNorm's affine step from p = RN(RN(x - mean) * rstd).
enum class LayerNormAffine : uint8_t {
  kFma = 0,          // y = fma(p, w, b): one rounding (the contraction Triton and nvcc make by default)
  kMultiplyAdd = 1,  // y = RN(RN(p * w) + b)
};
const char* name_of(LayerNormAffine affine);

// How a norm divides a sum by its width n.
enum class WidthDivision : uint8_t {
  kIeee = 0,     // RN(S / n): nvcc's `/` without fast-math, tl.div_rn
  kDivFull = 1,  // Triton's `/` (div.full.f32): RN(S * rcp.approx(n)), numerics/rcp_approx.h; n <= 65536
};
const char* name_of(WidthDivision division);

struct NormRules {
  Reduction reduction;  // the order of every sum of the norm
  // The lanes the sums run over: the row, then +0 up to this width where it
  // is larger (a Triton block of next_pow2(n) lanes; 0: the row alone). The
  // zeros change no value, but the blocked and pairwise orders group by it.
  int64_t sum_width = 0;
  WidthDivision divide = WidthDivision::kIeee;  // the mean's and the mean square's
  RsqrtKind rsqrt = RsqrtKind::kCorrectlyRounded;
  // kApproxFtz and kApprox: a table of corrections (numerics/rsqrt_approx.h);
  // null: the one measured on the device, in the library.
  const uint8_t* rsqrt_table = nullptr;
};

// Why rows of width n cannot be normalized under `rules` ("" when they can),
// naming the field and its limit.
const char* norm_rules_error(const NormRules& rules, int64_t n);

// A Triton norm of rows of width n as measured on sm_90 (Triton 3.6; the
// rows of tests/reference/data/triton_sm90_norms.txt): a masked block of
// next_pow2(n) lanes over `warps` warps in the compiler's layout
// (triton_block_reduction), the squares fused, `/` as div.full and tl.rsqrt
// as rsqrt.approx.ftz.
NormRules triton_norm_rules(int64_t n, int warps);

// The rules' reciprocal square root of v, and their S / n.
float norm_rsqrt(float v, const NormRules& rules);
float norm_divide(float sum, int64_t n, const NormRules& rules);

// RMSNorm of x[0 .. n), n >= 1, weights w (their values as f32: a bf16
// weight converted exactly): r = rsqrt(RN(RN(S / n) + eps)) with S the sum
// of the squares in the rules' order; y[i] by `weight`.
// Returns r. y may be x.
float rms_norm_row(const float* x, const float* w, int64_t n, float eps, RmsWeight weight, const NormRules& rules,
                   float* y);

struct LayerNormStats {
  float mean = 0.0f;      // RN(sum of x / n)
  float variance = 0.0f;  // RN(sum of RN(x - mean)^2 / n)
  float rstd = 0.0f;      // rsqrt(RN(variance + eps))
};

// LayerNorm of x[0 .. n), n >= 1, with weight w and bias b (as f32):
// y[i] = affine(RN(RN(x[i] - mean) * rstd), w[i], b[i]). y may be x.
LayerNormStats layer_norm_row(const float* x, const float* w, const float* b, int64_t n, float eps,
                              LayerNormAffine affine, const NormRules& rules, float* y);

}  // namespace qcheck::spec
