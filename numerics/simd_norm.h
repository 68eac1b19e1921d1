// The norms (numerics/norm.h) as tables of functions: the scalar spec and a
// Highway SIMD version (numerics/simd_norm.cc) that must give the same bits
// for every row, order, width and convention (tests/reference
// simd_norm_test). The SIMD table vectorizes the element steps and the sums
// whose order lets lanes run side by side (pairwise levels, strided and
// blocked lane partials, the butterfly); a sequential sum stays a loop.
#pragma once

#include <cstdint>

#include "numerics/norm.h"

namespace qcheck {

struct NormOps {
  const char* name;
  float (*rms_norm_row)(const float* x, const float* w, int64_t n, float eps, spec::RmsWeight weight,
                        const spec::NormRules& rules, float* y);
  spec::LayerNormStats (*layer_norm_row)(const float* x, const float* w, const float* b, int64_t n, float eps,
                                         spec::LayerNormAffine affine, const spec::NormRules& rules, float* y);
};

// The scalar spec as a table.
const NormOps& scalar_norm_ops();
// The Highway version, dispatched to the best target on every call.
const NormOps& simd_norm_ops();
// One target's table (its name the target's); nullptr when that target is
// not compiled in or not supported by this CPU (simd_row_targets() lists them).
const NormOps* simd_norm_ops_for_target(int64_t target);

}  // namespace qcheck
