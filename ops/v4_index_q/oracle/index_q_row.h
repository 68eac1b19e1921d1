// DeepSeek-V4's indexer query, one (token, head) row of D bf16 values
// (SEMANTICS-K.md 2.1-2.4, 5.3, 5.4):
//   1. RoPE on R dims, the LAST R (V4) or the first (the DeepSeek-V3.2 form),
//      interleaved pairs (2i, 2i + 1) with cos[i], sin[i];
//   2. the rotated values rounded to bf16 (V4's reference; a rule);
//   3a. FP8: A = max |v| (NaN ignored), s = ceiling(max(A, 1e-4) / 448) (the
//       quotient and the ceiling are rules), codes e4m3(v / s) (exact);
//       weight_out folds s (the order of the three products is a rule);
//   3b. MXFP4, blocks of 32: A = max |v| over the block (NaN ignored),
//       s = ceiling(RN(max(A, 6 * 2^-126) * RN(1/6))) (log2f with the exponent
//       clamped to [-127, 127], or the bit ceiling), its ue8m0 byte, e2m1
//       codes of v / s two per byte (even element low), no s in weight_out.
// A row with +-Inf gets s = +Inf: finite values give +-0 codes, the Inf a NaN
// code (the CuTe DSL kernels' -Inf inverse, which flips signs, is a bug of
// theirs, not a rule). OCP e4m3 only: FNUZ comes with the op's fields.
#pragma once

#include <cstdint>

#include "numerics/profile.h"
#include "numerics/types.h"

namespace qcheck::v4_index_q {

enum class QueryFormat : uint8_t { kFp8 = 0, kMxfp4 = 1 };
const char* name_of(QueryFormat format);

// How weight_out is made from the weight w, softmax_scale sm, head_scale hs
// and (FP8) the row scale s.
//   kScaleFirst:    FP8 RN(RN(RN(w s) sm) hs); MXFP4 RN(RN(w sm) hs) (vLLM's Triton)
//   kFoldedScales:  S = RN(sm hs) (exact product, one rounding), FP8
//                   RN(RN(w S) s); MXFP4 RN(w S) (vLLM's CuTe DSL, SGLang)
enum class WeightsFold : uint8_t { kScaleFirst = 0, kFoldedScales = 1 };

struct IndexQShape {
  int64_t dim = 128;       // D; a multiple of 32 for MXFP4
  int64_t rope_dim = 64;   // R <= D, even
  bool rope_last = true;   // V4: the last R dims; false: the first R
};

struct IndexQRules {
  Contraction rope_minus = Contraction::kFuseCos;  // x_e c - x_o s
  Contraction rope_plus = Contraction::kFuseCos;   // x_o c + x_e s
  bool bf16_after_rope = true;
  ScaleCeiling fp8_ceiling = ScaleCeiling::kLog2f;       // vLLM Triton; CuTe DSL: kExactBits
  ScaleQuotient fp8_quotient = ScaleQuotient::kDivide;   // vLLM Triton; CuTe DSL: kTimesReciprocal
  ScaleCeiling mx_ceiling = ScaleCeiling::kLog2f;        // vLLM Triton; CuTe DSL: kExactBits
  E2m1Rounding e2m1 = E2m1Rounding::kCvtRn;
  WeightsFold weights = WeightsFold::kScaleFirst;
  E4m3Overflow overflow = E4m3Overflow::kSatFinite;
};

struct IndexQOut {
  float fp8_scale = 0.0f;  // FP8: s
  float weight_out = 0.0f;
};

// One row. q: D bf16 bits; cos, sin: R/2 values of the token's position.
// FP8 writes D codes to `codes` and the scale to out.fp8_scale; MXFP4 writes
// D/2 bytes to `codes` and D/32 ue8m0 bytes to `block_scales`.
IndexQOut index_q_row(const uint16_t* q, float weight, const float* cos, const float* sin, float softmax_scale,
                      float head_scale, const IndexQShape& shape, QueryFormat format, const IndexQRules& rules,
                      uint8_t* codes, uint8_t* block_scales);

}  // namespace qcheck::v4_index_q
