// Highway SIMD versions of the row functions (row_ops.h), bit-identical to
// the scalar spec (conversions.cc, ue8m0.cc, rope.cc) for every input and
// every count. The per-target code lives in three -inl.h files, one concept
// each: simd_rows_convert-inl.h (bf16, e4m3, amax and their rows),
// simd_rows_rope-inl.h (RoPE), simd_rows_fused-inl.h (the fused rows of one
// token). This file compiles them once per target and builds the tables:
// one per target (direct calls) and the dispatching one.
// This file is built with -ffp-contract=off (numerics/CMakeLists.txt): the
// compiler must not fuse a Mul and an Add of its own accord.

#include "numerics/hwy_targets.h"  // first: it picks the targets

#include <string>
#include <vector>

#include "numerics/row_ops.h"
#include "numerics/simd_rows.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "numerics/simd_rows.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "numerics/simd_rows_convert-inl.h"
#include "numerics/simd_rows_rope-inl.h"
#include "numerics/simd_rows_fused-inl.h"

HWY_BEFORE_NAMESPACE();
namespace qcheck {
namespace HWY_NAMESPACE {

// ----------------------------------------------------------------- tables

// This target's table: every entry calls its code directly.
const RowOps* TargetRowOps() {
  static const RowOps ops{hwy::TargetName(HWY_TARGET), F32FromBf16Row, Bf16FromF32Row, QuantizeRow,
                          AmaxRow,                     RopeRow,        RopeBf16Rows,   IndexerRows,
                          nullptr};
  return &ops;
}

int64_t CompiledTarget() { return HWY_TARGET; }
size_t FloatLanes() { return hn::Lanes(DF()); }
bool RopeInVectors(bool fused) {
  return VectorRopeIsExact(2, fused ? Contraction::kFuseCos : Contraction::kNone, Contraction::kNone);
}

}  // namespace HWY_NAMESPACE
}  // namespace qcheck
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace qcheck {

HWY_EXPORT(F32FromBf16Row);
HWY_EXPORT(Bf16FromF32Row);
HWY_EXPORT(QuantizeRow);
HWY_EXPORT(AmaxRow);
HWY_EXPORT(RopeRow);
HWY_EXPORT(RopeBf16Rows);
HWY_EXPORT(IndexerRows);
HWY_EXPORT(TargetRowOps);
HWY_EXPORT(CompiledTarget);
HWY_EXPORT(FloatLanes);
HWY_EXPORT(RopeInVectors);

namespace {

// Each entry looks the target up on every call, so a test that mocks the
// supported targets (hwy::SetSupportedTargetsForTest) reaches each of them.
// That lookup costs about as much as a short row: a launch resolves the
// table once (RowOps::resolve) and calls the target's entries directly.
void DispatchF32FromBf16(const uint16_t* in, float* out, size_t count) {
  HWY_DYNAMIC_DISPATCH(F32FromBf16Row)(in, out, count);
}
void DispatchBf16FromF32(const float* in, uint16_t* out, size_t count, Bf16Nan nan_rule) {
  HWY_DYNAMIC_DISPATCH(Bf16FromF32Row)(in, out, count, nan_rule);
}
void DispatchQuantize(const float* in, float divisor, uint8_t* out, size_t count,
                      E4m3Overflow overflow) {
  HWY_DYNAMIC_DISPATCH(QuantizeRow)(in, divisor, out, count, overflow);
}
float DispatchAmax(const float* in, size_t count) { return HWY_DYNAMIC_DISPATCH(AmaxRow)(in, count); }
void DispatchRope(const float* x, const float* cos, const float* sin, size_t count, RopeStyle style,
                  Contraction minus, Contraction plus, float* out) {
  HWY_DYNAMIC_DISPATCH(RopeRow)(x, cos, sin, count, style, minus, plus, out);
}
void DispatchRopeBf16Rows(const uint16_t* in, size_t in_stride, const float* cos, const float* sin,
                          size_t count, RopeStyle style, Contraction minus, Contraction plus,
                          Bf16Nan nan_rule, uint16_t* out, size_t out_stride, size_t rows) {
  HWY_DYNAMIC_DISPATCH(RopeBf16Rows)(in, in_stride, cos, sin, count, style, minus, plus, nan_rule, out,
                                     out_stride, rows);
}
void DispatchIndexerRows(const uint16_t* in, size_t in_stride, const float* cos, const float* sin,
                         size_t dim, size_t rope_dim, RopeStyle style, const Profile& profile,
                         uint8_t* out, size_t out_stride, float* scales, size_t rows) {
  HWY_DYNAMIC_DISPATCH(IndexerRows)(in, in_stride, cos, sin, dim, rope_dim, style, profile, out,
                                    out_stride, scales, rows);
}
const RowOps* ResolveTarget() { return HWY_DYNAMIC_DISPATCH(TargetRowOps)(); }

}  // namespace

const RowOps& simd_row_ops() {
  static const RowOps ops{"simd",       DispatchF32FromBf16,  DispatchBf16FromF32, DispatchQuantize,
                          DispatchAmax, DispatchRope,         DispatchRopeBf16Rows, DispatchIndexerRows,
                          ResolveTarget};
  return ops;
}

std::vector<int64_t> simd_row_targets() { return hwy::SupportedAndGeneratedTargets(); }

std::string simd_row_target_names() {
  std::string names;
  for (int64_t target : simd_row_targets()) {
    if (!names.empty()) names += ' ';
    names += hwy::TargetName(target);
  }
  return names;
}

int64_t simd_row_dispatched_target() { return HWY_DYNAMIC_DISPATCH(CompiledTarget)(); }
size_t simd_row_dispatched_lanes() { return HWY_DYNAMIC_DISPATCH(FloatLanes)(); }
bool simd_row_dispatched_rope_in_vectors(bool fused) { return HWY_DYNAMIC_DISPATCH(RopeInVectors)(fused); }

const RowOps* simd_row_ops_for_target(int64_t target) {
  if ((hwy::SupportedTargets() & HWY_TARGETS & target) == 0) return nullptr;
  // The per-target namespaces are named by hwy/ops/set_macros-inl.h; only
  // the x86 targets and the two fallbacks are listed here.
  switch (target) {
#if HWY_TARGETS & HWY_AVX3_DL
    case HWY_AVX3_DL: return N_AVX3_DL::TargetRowOps();
#endif
#if HWY_TARGETS & HWY_AVX3
    case HWY_AVX3: return N_AVX3::TargetRowOps();
#endif
#if HWY_TARGETS & HWY_AVX2
    case HWY_AVX2: return N_AVX2::TargetRowOps();
#endif
#if HWY_TARGETS & HWY_SSE4
    case HWY_SSE4: return N_SSE4::TargetRowOps();
#endif
#if HWY_TARGETS & HWY_SSSE3
    case HWY_SSSE3: return N_SSSE3::TargetRowOps();
#endif
#if HWY_TARGETS & HWY_EMU128
    case HWY_EMU128: return N_EMU128::TargetRowOps();
#endif
#if HWY_TARGETS & HWY_SCALAR
    case HWY_SCALAR: return N_SCALAR::TargetRowOps();
#endif
    default: return nullptr;
  }
}

}  // namespace qcheck
#endif  // HWY_ONCE
