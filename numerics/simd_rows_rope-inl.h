// Per-target vector RoPE, bit-identical to the scalar spec (rope.cc): the
// RoPE row of row_ops.h and the vector steps the fused rows reuse. Included
// once per Highway target by numerics/simd_rows.cc, after
// simd_rows_convert-inl.h.
// Trap avoided (TOOLCHAIN.md, Highway 1.0.3): MulAdd is two roundings where
// HWY_NATIVE_FMA == 0, so a fused contraction pattern takes the scalar spec
// (std::fma) there; see VectorRopeIsExact.

#if defined(QCHECK_REFERENCE_SIMD_ROWS_ROPE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QCHECK_REFERENCE_SIMD_ROWS_ROPE_INL_H_
#undef QCHECK_REFERENCE_SIMD_ROWS_ROPE_INL_H_
#else
#define QCHECK_REFERENCE_SIMD_ROWS_ROPE_INL_H_
#endif

#include <cstring>

#include "hwy/highway.h"
#include "numerics/profile.h"
#include "numerics/rope.h"
#include "numerics/types.h"

HWY_BEFORE_NAMESPACE();
namespace qcheck {
namespace HWY_NAMESPACE {

HWY_INLINE VF RopeTermRaw(VF a, VF c, VF b, VF s, Contraction contraction) {
  switch (contraction) {
    case Contraction::kFuseCos: return hn::MulAdd(a, c, hn::Mul(b, s));
    case Contraction::kFuseSin: return hn::MulAdd(b, s, hn::Mul(a, c));
    case Contraction::kNone:
    default: return hn::Add(hn::Mul(a, c), hn::Mul(b, s));
  }
}

// spec::rope_term: a*c + b*s under a contraction pattern, NaN results
// canonical (0x7FFFFFFF) as the spec pins them.
HWY_INLINE VF RopeTerm(VF a, VF c, VF b, VF s, Contraction contraction) {
  const DF df;
  const DU du;
  const VF r = RopeTermRaw(a, c, b, s, contraction);
  const VF canonical_nan = hn::BitCast(df, hn::Set(du, 0x7FFFFFFFu));
  return hn::IfThenElse(hn::IsNaN(r), canonical_nan, r);
}

// True when the vector code below gives the spec's bits for a row of
// `count` values under these contractions on this target: a fused pattern
// needs a hardware FMA (MulAdd rounds twice without one), the interleaved
// partner swap needs two lanes, and pairs need an even count.
HWY_INLINE bool VectorRopeIsExact(size_t count, Contraction minus, Contraction plus) {
  const bool fused = minus != Contraction::kNone || plus != Contraction::kNone;
  return !(fused && !HWY_NATIVE_FMA) && HWY_TARGET != HWY_SCALAR && count % 2 == 0;
}

// NeoX, one vector of each half: with x1 = x[i..], x2 = x[h + i..] and
// c, s = cos[i..], sin[i..]:
//   r[i..]     = x1*c - x2*s (minus terms)    r[h + i..] = x2*c + x1*s (plus terms)
// Negation is a sign flip, as the spec's unary minus.
HWY_INLINE VF RopeNeoxFirstHalf(VF x1, VF x2, VF c, VF s, Contraction minus) {
  return RopeTerm(x1, c, hn::Neg(x2), s, minus);
}
HWY_INLINE VF RopeNeoxSecondHalf(VF x1, VF x2, VF c, VF s, Contraction plus) {
  return RopeTerm(x2, c, x1, s, plus);
}

// NeoX: four contiguous streams; the tail of a half goes through zero-padded
// local copies.
HWY_INLINE void RopeNeox(const float* x, const float* cos, const float* sin, size_t count,
                         Contraction minus, Contraction plus, float* out) {
  const DF df;
  const size_t half = count / 2;
  const auto step = [&](const float* x1, const float* x2, const float* c, const float* s, float* r1,
                        float* r2) HWY_ATTR {
    const VF x1v = hn::LoadU(df, x1), x2v = hn::LoadU(df, x2);
    const VF cv = hn::LoadU(df, c), sv = hn::LoadU(df, s);
    hn::StoreU(RopeNeoxFirstHalf(x1v, x2v, cv, sv, minus), df, r1);
    hn::StoreU(RopeNeoxSecondHalf(x1v, x2v, cv, sv, plus), df, r2);
  };
  const size_t lanes = hn::Lanes(df);
  size_t i = 0;
  for (; i + lanes <= half; i += lanes) {
    step(x + i, x + half + i, cos + i, sin + i, out + i, out + half + i);
  }
  if (i == half) return;
  const size_t rest = (half - i) * sizeof(float);
  HWY_ALIGN float x1[kMaxLanes] = {}, x2[kMaxLanes] = {}, c[kMaxLanes] = {}, s[kMaxLanes] = {};
  HWY_ALIGN float r1[kMaxLanes], r2[kMaxLanes];
  std::memcpy(x1, x + i, rest);
  std::memcpy(x2, x + half + i, rest);
  std::memcpy(c, cos + i, rest);
  std::memcpy(s, sin + i, rest);
  step(x1, x2, c, s, r1, r2);
  std::memcpy(out + i, r1, rest);
  std::memcpy(out + half + i, r2, rest);
}

#if HWY_TARGET != HWY_SCALAR
// Interleaved (GPT-J) works on x as it lies: pairs (2i, 2i+1),
//   r_2i = x_2i*c_i - x_2i+1*s_i (minus terms), r_2i+1 = x_2i+1*c_i + x_2i*s_i (plus terms).
// The partner vector swaps adjacent lanes, and c_i, s_i are duplicated into
// both lanes of pair i. Needs at least two lanes (hence not on HWY_SCALAR).

// [v0, v0, v1, v1, ...] in memory order from lanes / 2 values at `from`, on
// every vector width: each 32-bit value is widened to a 64-bit lane and
// copied into its upper half.
HWY_INLINE VF DuplicatePairs(const float* from) {
  const DF df;
  const hn::Repartition<uint64_t, DF> d64;
  const hn::Rebind<float, decltype(d64)> df_half;  // half as many floats as DF
  const hn::RebindToUnsigned<decltype(df_half)> du_half;
  const auto wide = hn::PromoteTo(d64, hn::BitCast(du_half, hn::LoadU(df_half, from)));
  return hn::BitCast(df, hn::Or(wide, hn::ShiftLeft<32>(wide)));
}

// One vector of an interleaved row; c and s come from DuplicatePairs.
HWY_INLINE VF RopeInterleavedVector(VF x, VF c, VF s, Contraction minus, Contraction plus) {
  const DF df;
  const DU du;
  const auto even = hn::Eq(hn::And(hn::Iota(du, 0), hn::Set(du, 1u)), hn::Zero(du));
  const VF even_sign = hn::BitCast(df, hn::IfThenElseZero(even, hn::Set(du, kF32SignMask)));
  const VF partner = hn::Xor(hn::Reverse2(df, x), even_sign);
  const VF result = RopeTerm(x, c, partner, s, minus);
  if (plus == minus) return result;
  return hn::IfThenElse(hn::RebindMask(df, even), result, RopeTerm(x, c, partner, s, plus));
}

HWY_INLINE void RopeInterleaved(const float* x, const float* cos, const float* sin, size_t count,
                                Contraction minus, Contraction plus, float* out) {
  const DF df;
  const auto step = [&](const float* xp, const float* c, const float* s, float* r) HWY_ATTR {
    hn::StoreU(RopeInterleavedVector(hn::LoadU(df, xp), DuplicatePairs(c), DuplicatePairs(s), minus, plus), df, r);
  };
  const size_t lanes = hn::Lanes(df);  // even: whole pairs per vector
  size_t i = 0;
  for (; i + lanes <= count; i += lanes) step(x + i, cos + i / 2, sin + i / 2, out + i);
  if (i == count) return;
  const size_t rest = count - i;
  HWY_ALIGN float xt[kMaxLanes] = {}, c[kMaxLanes] = {}, s[kMaxLanes] = {}, r[kMaxLanes];
  std::memcpy(xt, x + i, rest * sizeof(float));
  std::memcpy(c, cos + i / 2, rest / 2 * sizeof(float));
  std::memcpy(s, sin + i / 2, rest / 2 * sizeof(float));
  step(xt, c, s, r);
  std::memcpy(out + i, r, rest * sizeof(float));
}
#endif  // HWY_TARGET != HWY_SCALAR

// The RoPE row of row_ops.h; the scalar spec where the vector code would
// not give its bits.
inline void RopeRow(const float* x, const float* cos, const float* sin, size_t count,
                    RopeStyle style, Contraction minus, Contraction plus, float* out) {
  if (!VectorRopeIsExact(count, minus, plus)) {
    spec::rope_row(x, cos, sin, count, style, minus, plus, out);
    return;
  }
#if HWY_TARGET != HWY_SCALAR
  if (style == RopeStyle::kInterleaved) {
    RopeInterleaved(x, cos, sin, count, minus, plus, out);
    return;
  }
#endif
  RopeNeox(x, cos, sin, count, minus, plus, out);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace qcheck
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
