// Highway SIMD versions of the row functions (row_ops.h), bit-identical to
// the scalar spec (conversions.cc, ue8m0.cc, rope.cc) for every input and
// every count. Traps avoided (TOOLCHAIN.md, Highway 1.0.3):
// - DemoteTo(bf16) truncates: bf16 and e4m3 are encoded with integer ops that
//   follow the spec's algorithm (the e4m3 subnormal rounding uses the FPU's
//   exact round-to-nearest-even, see E4m3FromF32); DemoteTo only narrows
//   lanes that already hold the final 8- or 16-bit code, so it is exact.
// - Max is maxps (NaN order dependent): amax takes an integer max over the
//   abs bits with NaN lanes zeroed.
// - MulAdd is two roundings where HWY_NATIVE_FMA == 0: the RoPE row takes the
//   scalar spec (std::fma) there unless no product is fused.
// - No LoadN/StoreN and masked memory ops may fault: a row's tail goes
//   through zero-padded local copies, so it runs the same vector code.
// This file is built with -ffp-contract=off (reference/CMakeLists.txt): the
// compiler must not fuse a Mul and an Add of its own accord.

// Every target Highway can attain (the fallback EMU128 or SCALAR included)
// and AVX3_DL, so tests can check each one the CPU supports.
#ifndef HWY_COMPILE_ALL_ATTAINABLE
#define HWY_COMPILE_ALL_ATTAINABLE
#endif
#ifndef HWY_WANT_AVX3_DL
#define HWY_WANT_AVX3_DL
#endif

#include <cstring>
#include <string>
#include <vector>

#include "reference/float_bits.h"
#include "reference/rope.h"
#include "reference/row_ops.h"
#include "reference/simd_rows.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "reference/simd_rows.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace qcheck {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using DU = hn::RebindToUnsigned<DF>;
using DI = hn::RebindToSigned<DF>;
using D16 = hn::Rebind<uint16_t, DF>;
using D8 = hn::Rebind<uint8_t, DF>;
using VF = hn::Vec<DF>;
using VU = hn::Vec<DU>;
using VI = hn::Vec<DI>;

// Lanes of one float vector at most: the size of the tail copies.
constexpr size_t kMaxLanes = HWY_MAX_BYTES / sizeof(float);
constexpr int32_t kInfBitsSigned = static_cast<int32_t>(kF32InfBits);

// Mask of lanes whose bits (sign ignored) are a NaN. The abs bits fit in a
// non-negative int32, so a signed compare orders them.
HWY_INLINE hn::Mask<DU> IsNanBits(VU bits) {
  const DU du;
  const DI di;
  const VI abs = hn::BitCast(di, hn::And(bits, hn::Set(du, kF32AbsMask)));
  return hn::RebindMask(du, hn::Gt(abs, hn::Set(di, kInfBitsSigned)));
}

// Runs convert(in_pointer, out_pointer) over one vector at a time; the tail
// goes through zero-padded local copies.
template <typename In, typename Out, class Convert>
HWY_INLINE void ConvertRow(const In* in, Out* out, size_t count, const Convert& convert) {
  const size_t lanes = hn::Lanes(DF());
  size_t i = 0;
  for (; i + lanes <= count; i += lanes) convert(in + i, out + i);
  if (i == count) return;
  HWY_ALIGN In in_tail[kMaxLanes] = {};
  HWY_ALIGN Out out_tail[kMaxLanes];
  std::memcpy(in_tail, in + i, (count - i) * sizeof(In));
  convert(in_tail, out_tail);
  std::memcpy(out + i, out_tail, (count - i) * sizeof(Out));
}

// ----------------------------------------------------------------- bf16

void F32FromBf16Row(const uint16_t* in, float* out, size_t count) {
  const DF df;
  const DU du;
  const D16 d16;
  // The 16 bits become the top half of the f32 (exact).
  ConvertRow(in, out, count, [&](const uint16_t* from, float* to) HWY_ATTR {
    hn::StoreU(hn::BitCast(df, hn::ShiftLeft<16>(hn::PromoteTo(du, hn::LoadU(d16, from)))), df, to);
  });
}

// spec::bf16_from_f32, lane by lane: (bits + 0x7FFF + lsb) >> 16, NaN rule.
HWY_INLINE hn::Vec<D16> Bf16FromF32(VF value, Bf16Nan nan_rule) {
  const DU du;
  const DI di;
  const VU bits = hn::BitCast(du, value);
  const VU lsb = hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 1u));
  const VU rounded = hn::ShiftRight<16>(hn::Add(hn::Add(bits, hn::Set(du, 0x7FFFu)), lsb));
  VU nan_code;
  switch (nan_rule) {
    case Bf16Nan::k7FC0: nan_code = hn::Set(du, 0x7FC0u); break;
    case Bf16Nan::kKeepSignQuiet: nan_code = hn::Or(hn::ShiftRight<16>(bits), hn::Set(du, 0x40u)); break;
    case Bf16Nan::k7FFF:
    default: nan_code = hn::Set(du, 0x7FFFu); break;
  }
  const VU code = hn::IfThenElse(IsNanBits(bits), nan_code, rounded);
  // Every lane holds a value <= 0xFFFF: the saturating narrowing is exact.
  return hn::DemoteTo(D16(), hn::BitCast(di, code));
}

void Bf16FromF32Row(const float* in, uint16_t* out, size_t count, Bf16Nan nan_rule) {
  const DF df;
  const D16 d16;
  ConvertRow(in, out, count, [&](const float* from, uint16_t* to) HWY_ATTR {
    hn::StoreU(Bf16FromF32(hn::LoadU(df, from), nan_rule), d16, to);
  });
}

// ----------------------------------------------------------------- e4m3

// spec::e4m3_from_f32, lane by lane; the code is returned in the low byte of
// each 32-bit lane.
HWY_INLINE VI E4m3FromF32(VF value, E4m3Overflow overflow) {
  const DU du;
  const DI di;
  const VU bits = hn::BitCast(du, value);
  const VU sign = hn::And(hn::ShiftRight<24>(bits), hn::Set(du, 0x80u));
  const VU abs = hn::And(bits, hn::Set(du, kF32AbsMask));
  const VI exponent = hn::BitCast(di, hn::ShiftRight<23>(abs));  // biased by 127

  // |x| >= 2^-6 (exponent >= 121): round at bit 20 to nearest even, then
  // rebias the exponent from 127 to 7. Inf lands far above 0x7E here.
  const VU rounded = hn::Add(hn::Add(abs, hn::Set(du, 0x7FFFFu)), hn::And(hn::ShiftRight<20>(abs), hn::Set(du, 1u)));
  const VU normal = hn::Sub(hn::ShiftRight<20>(rounded), hn::Set(du, 120u << 3));

  // |x| < 2^-6 (exponent <= 120): the spec's k = significand >> (141 - exponent),
  // rounded to nearest even, is RNE(|x| * 2^9), an integer in 0..8 (8 is
  // 2^-6, code 0x08, the smallest normal: the carry is right). |x| * 2^9 is
  // exact (a power-of-two scaling landing below 8), and adding 2^23 leaves an
  // f32 whose ulp is 1, so the FPU's round-to-nearest-even produces exactly
  // that k in the low mantissa bits. |x| < 2^-10 and f32 subnormals give 0,
  // as in the spec (also under FTZ/DAZ). Three ops instead of three variable
  // shifts, which Highway emulates on SSSE3 and SSE4.
  const DF df;
  const VF scaled = hn::Add(hn::Mul(hn::BitCast(df, abs), hn::Set(df, 512.0f)), hn::Set(df, 8388608.0f));
  const VU subnormal = hn::Sub(hn::BitCast(du, scaled), hn::Set(du, 0x4B000000u));  // bits of 2^23
  const auto is_normal = hn::RebindMask(du, hn::Gt(exponent, hn::Set(di, 120)));
  const VU magnitude = hn::IfThenElse(is_normal, normal, subnormal);

  // Rounded above 448 means magnitude > 0x7E, and Inf and NaN land far above
  // it too (their "normal" result is >= 0x438). Clamping to 0x7E gives the
  // satfinite code +-448; clamping to 0x7F gives overflow-nan's +-NaN, which
  // is also that rule's code for a NaN (sign kept). Satfinite turns every
  // NaN into 0x7F, sign dropped.
  const bool saturate = overflow == E4m3Overflow::kSatFinite;
  VU code = hn::Or(sign, hn::Min(magnitude, hn::Set(du, saturate ? 0x7Eu : 0x7Fu)));
  if (saturate) code = hn::IfThenElse(IsNanBits(bits), hn::Set(du, 0x7Fu), code);
  return hn::BitCast(di, code);
}

// True when 1 / divisor is a normal f32 exactly: +-2^k for k in [-126, 126],
// or +-Inf (1 / Inf = 0). Then x * (1 / divisor) == RN(x / divisor) for
// every x: both are the correctly rounded value of the same real number, and
// the invalid cases Inf / Inf and Inf * 0 both give the default NaN. (2^127
// is left to Div: its reciprocal is subnormal, which a DAZ mode would zero.)
// The indexer's UE8M0 scales are of this kind; the MQA q_scale often is not.
bool HasExactReciprocal(float divisor) {
  const uint32_t abs = bits_of(divisor) & kF32AbsMask;
  return abs == kF32InfBits || ((abs & 0x7FFFFFu) == 0 && abs >= 0x00800000u && abs < 0x7F000000u);
}

void QuantizeRow(const float* in, float divisor, uint8_t* out, size_t count, E4m3Overflow overflow) {
  const DF df;
  const D8 d8;
  const bool use_reciprocal = HasExactReciprocal(divisor);
  const VF factor = hn::Set(df, use_reciprocal ? 1.0f / divisor : divisor);  // the reciprocal is exact
  ConvertRow(in, out, count, [&](const float* from, uint8_t* to) HWY_ATTR {
    const VF x = hn::LoadU(df, from);
    const VF quotient = use_reciprocal ? hn::Mul(x, factor) : hn::Div(x, factor);  // IEEE, as the spec's '/'
    // Codes are 0..255 in int32 lanes: the saturating narrowing is exact.
    hn::StoreU(hn::DemoteTo(d8, E4m3FromF32(quotient, overflow)), d8, to);
  });
}

// ----------------------------------------------------------------- amax

float AmaxRow(const float* in, size_t count) {
  const DF df;
  const DU du;
  const DI di;
  VI running = hn::Zero(di);
  // Non-negative floats order like their bit patterns (as spec::row_amax);
  // NaN lanes count as 0, and the zero padding of the tail changes nothing.
  const auto step = [&](const float* from) HWY_ATTR {
    const VU bits = hn::BitCast(du, hn::LoadU(df, from));
    const VI abs = hn::BitCast(di, hn::And(bits, hn::Set(du, kF32AbsMask)));
    running = hn::Max(running, hn::IfThenZeroElse(hn::RebindMask(di, IsNanBits(bits)), abs));
  };
  const size_t lanes = hn::Lanes(df);
  size_t i = 0;
  for (; i + lanes <= count; i += lanes) step(in + i);
  if (i < count) {
    HWY_ALIGN float tail[kMaxLanes] = {};
    std::memcpy(tail, in + i, (count - i) * sizeof(float));
    step(tail);
  }
  return float_from_bits(static_cast<uint32_t>(hn::GetLane(hn::MaxOfLanes(di, running))));
}

// ----------------------------------------------------------------- RoPE

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

// NeoX: for i < h = count / 2, r_i = x_i*c_i - x_(i+h)*s_i (minus terms) and
// r_(i+h) = x_(i+h)*c_i + x_i*s_i (plus terms): four contiguous streams.
void RopeNeox(const float* x, const float* cos, const float* sin, size_t count,
              Contraction minus, Contraction plus, float* out) {
  const DF df;
  const size_t half = count / 2;
  const auto step = [&](const float* x1, const float* x2, const float* c, const float* s, float* r1,
                        float* r2) HWY_ATTR {
    const VF x1v = hn::LoadU(df, x1), x2v = hn::LoadU(df, x2);
    const VF cv = hn::LoadU(df, c), sv = hn::LoadU(df, s);
    hn::StoreU(RopeTerm(x1v, cv, hn::Neg(x2v), sv, minus), df, r1);
    hn::StoreU(RopeTerm(x2v, cv, x1v, sv, plus), df, r2);
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
// Interleaved (GPT-J): pairs (2i, 2i+1), r_2i = x_2i*c_i - x_2i+1*s_i (minus
// terms), r_2i+1 = x_2i+1*c_i + x_2i*s_i (plus terms). Works on x as it lies:
// the partner vector swaps adjacent lanes, and c_i, s_i are duplicated into
// both lanes of pair i. Needs at least two lanes.
void RopeInterleaved(const float* x, const float* cos, const float* sin, size_t count,
                     Contraction minus, Contraction plus, float* out) {
  const DF df;
  const DU du;
  const hn::Repartition<uint64_t, DF> d64;
  const hn::Rebind<float, decltype(d64)> df_half;  // half as many floats as DF
  const hn::RebindToUnsigned<decltype(df_half)> du_half;
  const auto even = hn::Eq(hn::And(hn::Iota(du, 0), hn::Set(du, 1u)), hn::Zero(du));
  // Negation is a sign flip, as the spec's unary minus.
  const VF even_sign = hn::BitCast(df, hn::IfThenElseZero(even, hn::Set(du, kF32SignMask)));
  const auto even_float = hn::RebindMask(df, even);
  // Widen each 32-bit value to a 64-bit lane and copy it into the upper half:
  // [c0, c0, c1, c1, ...] in memory order on every vector width.
  const auto duplicate_pairs = [&](const float* from) HWY_ATTR {
    const auto wide = hn::PromoteTo(d64, hn::BitCast(du_half, hn::LoadU(df_half, from)));
    return hn::BitCast(df, hn::Or(wide, hn::ShiftLeft<32>(wide)));
  };
  const auto step = [&](const float* xp, const float* c, const float* s, float* r) HWY_ATTR {
    const VF xv = hn::LoadU(df, xp);
    const VF partner = hn::Xor(hn::Reverse2(df, xv), even_sign);
    const VF cv = duplicate_pairs(c), sv = duplicate_pairs(s);
    VF result = RopeTerm(xv, cv, partner, sv, minus);
    if (plus != minus) result = hn::IfThenElse(even_float, result, RopeTerm(xv, cv, partner, sv, plus));
    hn::StoreU(result, df, r);
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
#endif

void RopeRow(const float* x, const float* cos, const float* sin, size_t count, RopeStyle style,
             Contraction minus, Contraction plus, float* out) {
  // Without a fused multiply-add instruction MulAdd rounds twice: a fused
  // pattern then takes the scalar spec (std::fma is exact everywhere).
  const bool fused = minus != Contraction::kNone || plus != Contraction::kNone;
  if ((fused && !HWY_NATIVE_FMA) || HWY_TARGET == HWY_SCALAR || count % 2 != 0) {
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

// ----------------------------------------------------------------- tables

const RowOps* TargetRowOps() {
  static const RowOps ops{hwy::TargetName(HWY_TARGET), F32FromBf16Row, Bf16FromF32Row,
                          QuantizeRow, AmaxRow, RopeRow};
  return &ops;
}

int64_t CompiledTarget() { return HWY_TARGET; }
size_t FloatLanes() { return hn::Lanes(DF()); }

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
HWY_EXPORT(CompiledTarget);
HWY_EXPORT(FloatLanes);

namespace {

// Each entry looks the target up on every call, so a test that mocks the
// supported targets (hwy::SetSupportedTargetsForTest) reaches each of them.
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

}  // namespace

const RowOps& simd_row_ops() {
  static const RowOps ops{"simd",           DispatchF32FromBf16, DispatchBf16FromF32,
                          DispatchQuantize, DispatchAmax,        DispatchRope};
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
