// Per-target vector pieces of the number conversions (bf16, e4m3) and the
// NaN-aware amax, bit-identical to the scalar spec (conversions.cc,
// ue8m0.cc). Included once per Highway target by numerics/simd_rows.cc.
// Traps avoided (TOOLCHAIN.md, Highway 1.0.3):
// - DemoteTo(bf16) truncates: bf16 and e4m3 are encoded with integer ops that
//   follow the spec's algorithm (the e4m3 subnormal rounding uses the FPU's
//   exact round-to-nearest-even, see E4m3FromF32); DemoteTo only narrows
//   lanes that already hold the final 8- or 16-bit code, so it is exact.
// - Max is maxps (NaN order dependent): amax takes an integer max over the
//   abs bits with NaN lanes zeroed.
// - No LoadN/StoreN and masked memory ops may fault: a row's tail goes
//   through zero-padded local copies, so it runs the same vector code.

// Per-target include guard (Highway's convention for -inl.h files).
#if defined(QCHECK_REFERENCE_SIMD_ROWS_CONVERT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QCHECK_REFERENCE_SIMD_ROWS_CONVERT_INL_H_
#undef QCHECK_REFERENCE_SIMD_ROWS_CONVERT_INL_H_
#else
#define QCHECK_REFERENCE_SIMD_ROWS_CONVERT_INL_H_
#endif

#include <cstring>

#include "hwy/highway.h"
#include "numerics/float_bits.h"
#include "numerics/profile.h"

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

// f32 of one vector of bf16 (exact): the 16 bits become the top half.
HWY_INLINE VF LoadF32FromBf16(const uint16_t* from) {
  const DU du;
  return hn::BitCast(DF(), hn::ShiftLeft<16>(hn::PromoteTo(du, hn::LoadU(D16(), from))));
}

// spec::bf16_from_f32, lane by lane: (bits + 0x7FFF + lsb) >> 16, NaN rule.
// The code is returned in the low half of each 32-bit lane.
HWY_INLINE VU Bf16CodeFromF32(VF value, Bf16Nan nan_rule) {
  const DU du;
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
  return hn::IfThenElse(IsNanBits(bits), nan_code, rounded);
}

HWY_INLINE hn::Vec<D16> Bf16FromF32(VF value, Bf16Nan nan_rule) {
  // Every lane holds a value <= 0xFFFF: the saturating narrowing is exact.
  return hn::DemoteTo(D16(), hn::BitCast(DI(), Bf16CodeFromF32(value, nan_rule)));
}

// f32 of bf16_rne(value): the bf16 round trip without leaving the register.
HWY_INLINE VF RoundThroughBf16(VF value, Bf16Nan nan_rule) {
  return hn::BitCast(DF(), hn::ShiftLeft<16>(Bf16CodeFromF32(value, nan_rule)));
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
HWY_INLINE bool HasExactReciprocal(float divisor) {
  const uint32_t abs = bits_of(divisor) & kF32AbsMask;
  return abs == kF32InfBits || ((abs & 0x7FFFFFu) == 0 && abs >= 0x00800000u && abs < 0x7F000000u);
}

// RN(x / divisor) for a whole row: a multiplication by the exact reciprocal
// where there is one, else the IEEE division (as the spec's '/').
// (Plain members, no vector: vectors may not be class members on every
// target Highway supports.)
class RowDivisor {
 public:
  explicit RowDivisor(float divisor)
      : use_reciprocal_(HasExactReciprocal(divisor)), factor_(use_reciprocal_ ? 1.0f / divisor : divisor) {}
  HWY_INLINE VF Apply(VF x) const {
    const VF factor = hn::Set(DF(), factor_);
    return use_reciprocal_ ? hn::Mul(x, factor) : hn::Div(x, factor);
  }

 private:
  bool use_reciprocal_;
  float factor_;  // the exact reciprocal, or the divisor itself
};

// Stores e4m3(RN(x / divisor)) of one vector. Codes are 0..255 in int32
// lanes: the saturating narrowing is exact. With `pin_nan`, a NaN quotient
// is first the canonical positive NaN (spec::e4m3_of_quotient; only the
// non-saturating rule would keep a sign).
HWY_INLINE void StoreE4m3(VF x, const RowDivisor& divisor, E4m3Overflow overflow, uint8_t* to,
                          bool pin_nan = false) {
  const D8 d8;
  const DF df;
  VF q = divisor.Apply(x);
  if (pin_nan && overflow != E4m3Overflow::kSatFinite) {
    q = hn::IfThenElse(hn::IsNaN(q), hn::BitCast(df, hn::Set(DU(), 0x7FFFFFFFu)), q);
  }
  hn::StoreU(hn::DemoteTo(d8, E4m3FromF32(q, overflow)), d8, to);
}

// ----------------------------------------------------------------- amax

// Abs bits of each lane as int32, NaN lanes as 0: non-negative floats order
// like their bit patterns (as spec::row_amax), so an integer max of these is
// the amax ignoring NaN.
HWY_INLINE VI AbsBitsIgnoringNan(VF value) {
  const DU du;
  const DI di;
  const VU bits = hn::BitCast(du, value);
  const VI abs = hn::BitCast(di, hn::And(bits, hn::Set(du, kF32AbsMask)));
  return hn::IfThenZeroElse(hn::RebindMask(di, IsNanBits(bits)), abs);
}

HWY_INLINE float AmaxOfRunning(VI running) {
  return float_from_bits(static_cast<uint32_t>(hn::GetLane(hn::MaxOfLanes(DI(), running))));
}

// ----------------------------------------------------------------- rows
// The building-block rows of row_ops.h (the RoPE row is in
// simd_rows_rope-inl.h). Plain inline functions: the tables take their
// addresses.

inline void F32FromBf16Row(const uint16_t* in, float* out, size_t count) {
  ConvertRow(in, out, count, [](const uint16_t* from, float* to) HWY_ATTR {
    hn::StoreU(LoadF32FromBf16(from), DF(), to);
  });
}

inline void Bf16FromF32Row(const float* in, uint16_t* out, size_t count, Bf16Nan nan_rule) {
  ConvertRow(in, out, count, [nan_rule](const float* from, uint16_t* to) HWY_ATTR {
    hn::StoreU(Bf16FromF32(hn::LoadU(DF(), from), nan_rule), D16(), to);
  });
}

// With `pin_nan`, spec::e4m3_of_quotient (the indexer rows); without, the
// RowOps building block.
inline void QuantizeRowAs(const float* in, float divisor, uint8_t* out, size_t count, E4m3Overflow overflow,
                          bool pin_nan) {
  const RowDivisor row_divisor(divisor);
  ConvertRow(in, out, count, [&row_divisor, overflow, pin_nan](const float* from, uint8_t* to) HWY_ATTR {
    StoreE4m3(hn::LoadU(DF(), from), row_divisor, overflow, to, pin_nan);
  });
}

inline void QuantizeRow(const float* in, float divisor, uint8_t* out, size_t count, E4m3Overflow overflow) {
  QuantizeRowAs(in, divisor, out, count, overflow, /*pin_nan=*/false);
}

inline float AmaxRow(const float* in, size_t count) {
  const DF df;
  VI running = hn::Zero(DI());
  const size_t lanes = hn::Lanes(df);
  size_t i = 0;
  for (; i + lanes <= count; i += lanes) running = hn::Max(running, AbsBitsIgnoringNan(hn::LoadU(df, in + i)));
  if (i < count) {
    // The zero padding of the tail changes nothing.
    HWY_ALIGN float tail[kMaxLanes] = {};
    std::memcpy(tail, in + i, (count - i) * sizeof(float));
    running = hn::Max(running, AbsBitsIgnoringNan(hn::Load(df, tail)));
  }
  return AmaxOfRunning(running);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace qcheck
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
