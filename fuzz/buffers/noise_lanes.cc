// Highway version of the noise of many rows (noise_lanes.h), compiled for
// every target the reference's SIMD rows are (numerics/hwy_targets.h) and
// dispatched at run time. Every step is an exact integer operation or one
// IEEE rounding in the scalar loop's order (Xoshiro256::noise, fill_noise):
// the sum of four 24-bit draws (exact in int64 and in double), times 2^-23
// (exact), times sqrt(3/4) (rounded), times the scale (rounded), to f32
// (rounded to nearest even), to bf16 (rounded to nearest even). Built with
// -ffp-contract=off (the harness's rooms): no Mul may be fused with an Add.
#include "numerics/hwy_targets.h"  // first: it picks the targets

#include "fuzz/buffers/noise_lanes.h"

#include <algorithm>
#include <cstring>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "fuzz/buffers/noise_lanes.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace qcheck {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// x * 5 and x * 9 modulo 2^64 as shifts and adds (no 64-bit lane multiply
// on every target).
template <class V>
HWY_INLINE V Times5(V x) { return hn::Add(x, hn::ShiftLeft<2>(x)); }
template <class V>
HWY_INLINE V Times9(V x) { return hn::Add(x, hn::ShiftLeft<3>(x)); }

void DrawNoiseLanes(NoiseLanes& lanes, int64_t width) {
  const hn::CappedTag<uint64_t, NoiseLanes::kMaxRows> du;
  const hn::RebindToSigned<decltype(du)> di;
  const hn::RebindToFloat<decltype(du)> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const hn::Rebind<uint32_t, decltype(dd)> du32;
  const size_t N = hn::Lanes(du);
  HWY_ALIGN uint64_t words[4][NoiseLanes::kMaxRows];
  HWY_ALIGN double scales[NoiseLanes::kMaxRows];
  HWY_ALIGN uint64_t packed_words[NoiseLanes::kMaxRows];
  const auto unit = hn::Set(dd, 0x1p-23);
  const auto spread = hn::Set(dd, 0.8660254037844386);  // sqrt(3 / 4), as Xoshiro256::noise
  const auto center = hn::Set(di, int64_t{1} << 23);
  const auto half_ulp = hn::Set(du, 0x7FFF);
  const auto one = hn::Set(du, 1);
  const auto low16 = hn::Set(du, 0xFFFF);
  for (int first = 0; first < lanes.rows; first += static_cast<int>(N)) {
    const int count = std::min(static_cast<int>(N), lanes.rows - first);
    for (size_t l = 0; l < N; ++l) {  // lanes past the last row run a copy of it, unread
      const int row = first + std::min(static_cast<int>(l), count - 1);
      for (int w = 0; w < 4; ++w) words[w][l] = lanes.state[row][w];
      scales[l] = lanes.scale[row];
    }
    auto s0 = hn::Load(du, words[0]), s1 = hn::Load(du, words[1]);
    auto s2 = hn::Load(du, words[2]), s3 = hn::Load(du, words[3]);
    const auto scale = hn::Load(dd, scales);
    // Four elements at a time: each lane packs its row's four bf16 values
    // into one 64-bit word, stored with one write per row.
    for (int64_t i = 0; i < width; i += 4) {
      const int elements = static_cast<int>(std::min<int64_t>(4, width - i));
      auto packed = hn::Zero(du);
      for (int k = 0; k < elements; ++k) {
        auto sum = hn::Zero(di);
        for (int draw = 0; draw < 4; ++draw) {
          const auto result = Times9(hn::RotateRight<57>(Times5(s1)));  // rotl(s1 * 5, 7) * 9
          const auto t = hn::ShiftLeft<17>(s1);
          s2 = hn::Xor(s2, s0);
          s3 = hn::Xor(s3, s1);
          s1 = hn::Xor(s1, s2);
          s0 = hn::Xor(s0, s3);
          s2 = hn::Xor(s2, t);
          s3 = hn::RotateRight<19>(s3);  // rotl(s3, 45)
          sum = hn::Add(sum, hn::Sub(hn::BitCast(di, hn::ShiftRight<40>(result)), center));
        }
        const auto noise = hn::Mul(hn::Mul(hn::ConvertTo(dd, sum), unit), spread);
        const auto f32_bits = hn::PromoteTo(du, hn::BitCast(du32, hn::DemoteTo(df, hn::Mul(noise, scale))));
        // bf16 by round to nearest even, as spec::bf16_from_f32 (the noise
        // is never NaN: a finite double times a finite scale).
        const auto bf16 = hn::And(
            hn::ShiftRight<16>(hn::Add(f32_bits, hn::Add(half_ulp, hn::And(hn::ShiftRight<16>(f32_bits), one)))),
            low16);
        packed = hn::Or(packed, hn::ShiftLeftSame(bf16, 16 * k));
      }
      hn::Store(packed, du, packed_words);
      for (int l = 0; l < count; ++l) {
        std::memcpy(lanes.out[first + l] + i, &packed_words[l], 2 * static_cast<size_t>(elements));  // little-endian
      }
    }
    hn::Store(s0, du, words[0]);
    hn::Store(s1, du, words[1]);
    hn::Store(s2, du, words[2]);
    hn::Store(s3, du, words[3]);
    for (int l = 0; l < count; ++l) {
      for (int w = 0; w < 4; ++w) lanes.state[first + l][w] = words[w][l];
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace qcheck
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace qcheck {
HWY_EXPORT(DrawNoiseLanes);

void draw_noise_lanes(NoiseLanes& lanes, int64_t width) { HWY_DYNAMIC_DISPATCH(DrawNoiseLanes)(lanes, width); }

}  // namespace qcheck
#endif
