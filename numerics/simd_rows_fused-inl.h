// Per-target fused rows of one token (row_ops.h: rope_bf16_rows,
// indexer_rows), with no call per building block: a q_pe row is loaded,
// rotated and narrowed vector by vector; an indexer row is loaded, rotated
// and measured (amax) in one pass into a row buffer in L1, then encoded with
// its scale. Bit-identical to the scalar table's composition of the spec
// (scalar_row_ops.cc) because every step is the same vector piece the
// building-block rows use, on the same values.
// Where the vector RoPE would not give the spec's bits, or a row does not
// split into whole vectors, the rows are composed from this target's
// building blocks instead, exactly as the scalar table composes its own.
// Included once per Highway target by numerics/simd_rows.cc, after
// simd_rows_convert-inl.h and simd_rows_rope-inl.h.

#if defined(QCHECK_REFERENCE_SIMD_ROWS_FUSED_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QCHECK_REFERENCE_SIMD_ROWS_FUSED_INL_H_
#undef QCHECK_REFERENCE_SIMD_ROWS_FUSED_INL_H_
#else
#define QCHECK_REFERENCE_SIMD_ROWS_FUSED_INL_H_
#endif

#include <cstring>

#include "hwy/highway.h"
#include "numerics/row_ops.h"
#include "numerics/ue8m0.h"

HWY_BEFORE_NAMESPACE();
namespace qcheck {
namespace HWY_NAMESPACE {

// True when a RoPE row of `count` values splits into whole vector steps:
// interleaved steps take one vector of pairs, NeoX steps one vector of each
// half.
HWY_INLINE bool RopeSplitsIntoVectors(size_t count, RopeStyle style) {
  const size_t lanes = hn::Lanes(DF());
  return style == RopeStyle::kInterleaved ? count % lanes == 0 : (count / 2) % lanes == 0;
}

// cos and sin of an interleaved row with each value duplicated into both
// lanes of its pair (DuplicatePairs), filled once for all the rows of a
// token; left unfilled on NeoX, which reads cos and sin as they lie.
struct RopePairs {
  HWY_ALIGN float cos[kMaxFusedRowLength];
  HWY_ALIGN float sin[kMaxFusedRowLength];
  // count is a whole number of vectors (RopeSplitsIntoVectors).
  void Fill(const float* cos_half, const float* sin_half, size_t count, RopeStyle style) {
#if HWY_TARGET != HWY_SCALAR
    if (style != RopeStyle::kInterleaved) return;
    const DF df;
    for (size_t i = 0; i < count; i += hn::Lanes(df)) {
      hn::Store(DuplicatePairs(cos_half + i / 2), df, cos + i);
      hn::Store(DuplicatePairs(sin_half + i / 2), df, sin + i);
    }
#else
    (void)cos_half, (void)sin_half, (void)count, (void)style;
#endif
  }
};

// Calls emit(i, r) for every vector r = RoPE'd x[i .. i + lanes) of one row
// whose f32 values come from the bf16 `in`, in any order. Needs
// VectorRopeIsExact and RopeSplitsIntoVectors; `pairs` was filled for
// `style`.
template <class Emit>
HWY_INLINE void ForEachRopeVector(const uint16_t* in, const float* cos, const float* sin,
                                  const RopePairs& pairs, size_t count, RopeStyle style,
                                  Contraction minus, Contraction plus, const Emit& emit) {
  const DF df;
  const size_t lanes = hn::Lanes(df);
#if HWY_TARGET != HWY_SCALAR
  if (style == RopeStyle::kInterleaved) {
    for (size_t i = 0; i < count; i += lanes) {
      emit(i, RopeInterleavedVector(LoadF32FromBf16(in + i), hn::Load(df, pairs.cos + i),
                                    hn::Load(df, pairs.sin + i), minus, plus));
    }
    return;
  }
#endif
  (void)pairs, (void)style;
  const size_t half = count / 2;
  for (size_t i = 0; i < half; i += lanes) {
    const VF x1 = LoadF32FromBf16(in + i), x2 = LoadF32FromBf16(in + half + i);
    const VF c = hn::LoadU(df, cos + i), s = hn::LoadU(df, sin + i);
    emit(i, RopeNeoxFirstHalf(x1, x2, c, s, minus));
    emit(half + i, RopeNeoxSecondHalf(x1, x2, c, s, plus));
  }
}

inline void RopeBf16Rows(const uint16_t* in, size_t in_stride, const float* cos, const float* sin,
                         size_t count, RopeStyle style, Contraction minus, Contraction plus,
                         Bf16Nan nan_rule, uint16_t* out, size_t out_stride, size_t rows) {
  if (!VectorRopeIsExact(count, minus, plus) || !RopeSplitsIntoVectors(count, style)) {
    HWY_ALIGN float input[kMaxFusedRowLength], roped[kMaxFusedRowLength];
    for (size_t r = 0; r < rows; ++r) {
      F32FromBf16Row(in + r * in_stride, input, count);
      RopeRow(input, cos, sin, count, style, minus, plus, roped);
      Bf16FromF32Row(roped, out + r * out_stride, count, nan_rule);
    }
    return;
  }
  RopePairs pairs;
  pairs.Fill(cos, sin, count, style);
  for (size_t r = 0; r < rows; ++r) {
    uint16_t* row_out = out + r * out_stride;
    ForEachRopeVector(in + r * in_stride, cos, sin, pairs, count, style, minus, plus,
                      [row_out, nan_rule](size_t i, VF roped) HWY_ATTR {
                        hn::StoreU(Bf16FromF32(roped, nan_rule), D16(), row_out + i);
                      });
  }
}

// The indexer row composed from this target's building blocks (the scalar
// table's composition, scalar_row_ops.cc).
inline float ComposedIndexerRow(const uint16_t* in, const float* cos, const float* sin, size_t dim,
                                size_t rope_dim, RopeStyle style, const Profile& p, uint8_t* out) {
  // input is zeroed only to quiet g++ 12's -Wmaybe-uninitialized on the
  // HWY_SCALAR target (F32FromBf16Row writes every element used).
  HWY_ALIGN float input[kMaxFusedRowLength] = {};
  HWY_ALIGN float row[kMaxFusedRowLength];
  HWY_ALIGN uint16_t bf16_row[kMaxFusedRowLength];
  F32FromBf16Row(in, input, dim);
  RopeRow(input, cos, sin, rope_dim, style, p.indexer_minus, p.indexer_plus, row);
  std::memcpy(row + rope_dim, input + rope_dim, (dim - rope_dim) * sizeof(float));
  if (p.indexer_bf16_before_quant) {
    Bf16FromF32Row(row, bf16_row, dim, p.bf16_nan);
    F32FromBf16Row(bf16_row, row, dim);
  }
  const float scale = spec::ue8m0_scale(AmaxRow(row, dim), p.scale_ceiling, p.scale_floor);
  QuantizeRowAs(row, scale, out, dim, p.e4m3_overflow, /*pin_nan=*/true);
  return scale;
}

inline void IndexerRows(const uint16_t* in, size_t in_stride, const float* cos, const float* sin,
                        size_t dim, size_t rope_dim, RopeStyle style, const Profile& p, uint8_t* out,
                        size_t out_stride, float* scales, size_t rows) {
  const DF df;
  const size_t lanes = hn::Lanes(df);
  if (!VectorRopeIsExact(rope_dim, p.indexer_minus, p.indexer_plus) || !RopeSplitsIntoVectors(rope_dim, style) ||
      dim % lanes != 0) {
    for (size_t r = 0; r < rows; ++r) {
      scales[r] = ComposedIndexerRow(in + r * in_stride, cos, sin, dim, rope_dim, style, p, out + r * out_stride);
    }
    return;
  }
  // Local copies: the byte stores below may alias anything, so a field read
  // through `p` would be reloaded (and branched on) for every vector.
  const Contraction minus = p.indexer_minus, plus = p.indexer_plus;
  const bool round_through_bf16 = p.indexer_bf16_before_quant;
  const Bf16Nan nan_rule = p.bf16_nan;
  const E4m3Overflow overflow = p.e4m3_overflow;
  const ScaleCeiling ceiling = p.scale_ceiling;
  const ScaleFloor floor = p.scale_floor;
  RopePairs pairs;
  pairs.Fill(cos, sin, rope_dim, style);
  // Two passes per row, skewed by one row: row r is rotated, measured and
  // kept (f32, in L1) while row r - 1, whose scale is known by then, is
  // encoded. A row's codes wait on its scale (amax reduction, the spec's
  // division and ceiling); encoding right after measuring would stall on
  // that chain once per row, and measuring every row first would stop the
  // encoding work from overlapping the loads of the next rows.
  HWY_ALIGN float kept[2][kMaxFusedRowLength];
  const auto encode = [&](size_t r) HWY_ATTR {
    const float* row = kept[r % 2];
    const RowDivisor divisor(scales[r]);
    uint8_t* row_out = out + r * out_stride;
    for (size_t i = 0; i < dim; i += lanes) StoreE4m3(hn::Load(df, row + i), divisor, overflow, row_out + i, /*pin_nan=*/true);
  };
  for (size_t r = 0; r < rows; ++r) {
    const uint16_t* row_in = in + r * in_stride;
    float* row = kept[r % 2];
    // RoPE (dims R..D-1 pass through), the optional bf16 round trip, and the
    // running amax of the values kept.
    VI running = hn::Zero(DI());
    const auto keep = [&](size_t i, VF value) HWY_ATTR {
      if (round_through_bf16) value = RoundThroughBf16(value, nan_rule);
      hn::Store(value, df, row + i);
      running = hn::Max(running, AbsBitsIgnoringNan(value));
    };
    ForEachRopeVector(row_in, cos, sin, pairs, rope_dim, style, minus, plus, keep);
    for (size_t i = rope_dim; i < dim; i += lanes) keep(i, LoadF32FromBf16(row_in + i));
    scales[r] = spec::ue8m0_scale(AmaxOfRunning(running), ceiling, floor);
    if (r > 0) encode(r - 1);
  }
  if (rows > 0) encode(rows - 1);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace qcheck
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
