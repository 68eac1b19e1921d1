// The reciprocal square root of an f32, correctly rounded (to nearest,
// ties to even): the value `1.0f / sqrtf(x)` (two roundings) only
// approaches, and the reference the hardware's approximate instruction is
// measured against (SEMANTICS-K.md 8: rsqrt.approx.ftz.f32 on the H200 is
// this value within -2..+1 ulp, a function of the mantissa and of the
// exponent's parity). Norms take their rsqrt through a named convention;
// this is its correctly rounded member.
#pragma once

namespace qcheck::spec {

// x = +0: +Inf; -0: -Inf; x < 0: NaN; +Inf: +0; NaN: the quiet NaN
// 0x7FC00000. Subnormal x are exact inputs (no flush); every result of a
// finite x > 0 is a normal f32.
float rsqrt_rn(float x);

// Its rounding step: from `start`, a positive f32 within four ulps of the
// result, the f32 nearest x^(-1/2) for a finite x > 0, decided by exact
// integer comparisons of the midpoints either side. rsqrt_rn starts it from
// (float)(1 / sqrt(double(x))), which is already that f32 for every f32 x
// (an exhaustive search against the x87's 64-bit value found no exception);
// the tests start it a few ulps off.
float rsqrt_nearest_from(float x, float start);

}  // namespace qcheck::spec
