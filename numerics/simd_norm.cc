// Highway SIMD versions of the norms (simd_norm.h), bit-identical to the
// scalar spec (norm.cc). Every addition, multiplication and fused step is
// the spec's, on the same operands in the same order; vectors only put
// independent ones side by side:
// - a pairwise level adds element 2i and 2i + 1 for every i at once;
// - strided lanes: vector lane l adds x[l + k L] for k = 0, 1, ... as the
//   spec's lane l does (L a multiple of the vector's lanes); blocked lanes
//   gather lane l's chunk element by element;
// - the butterfly's step o adds p[l] and p[l ^ o] for every l (operands in
//   the spec's order, so even a NaN's payload is the same);
// - a Triton block: vector lane j folds thread j's registers, from its first
//   element, as the spec's thread does.
// Rows are copied into zero-padded scratch first: an extra +0 changes no
// partial sum (a partial that starts at +0 is never -0), and no load reads
// past a row. Built with -ffp-contract=off (numerics/CMakeLists.txt).

#include "numerics/hwy_targets.h"  // first: it picks the targets

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "numerics/simd_norm.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "numerics/simd_norm.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "numerics/simd_rows_convert-inl.h"

HWY_BEFORE_NAMESPACE();
namespace qcheck {
namespace HWY_NAMESPACE {

// The butterfly's step o over p (into next, then swapped): p[l] + p[l ^ o]
// for every lane, whole vectors where o spans one.
void ButterflyStep(std::vector<float>& p, std::vector<float>& next, size_t o) {
  const DF df;
  const size_t N = hn::Lanes(df);
  if (o >= N) {
    for (size_t l = 0; l < p.size(); l += N) {
      hn::StoreU(hn::Add(hn::LoadU(df, p.data() + l), hn::LoadU(df, p.data() + (l ^ o))), df, next.data() + l);
    }
  } else {
    for (size_t l = 0; l < p.size(); ++l) next[l] = p[l] + p[l ^ o];
  }
  p.swap(next);
}

// kTritonBlock: vector lane j folds thread t0 + j's registers (a load for
// one element a thread, else a gather at stride size_per_thread), starting
// from its first element as the spec does; then the warps' butterflies.
float TritonBlockSum(std::vector<float>& v, int64_t width, const spec::Reduction& r) {
  const DF df;
  const size_t N = hn::Lanes(df);
  const size_t spt = static_cast<size_t>(r.size_per_thread), threads = size_t{32} * static_cast<size_t>(r.warps);
  const size_t chunk = spt * threads;
  const size_t chunks = std::max<size_t>(1, (static_cast<size_t>(width) + chunk - 1) / chunk);
  v.resize(std::max(v.size(), chunks * chunk), 0.0f);  // the layout's lanes past the block: +0
  std::vector<float> p(threads), next(threads);
  if (threads % N == 0) {
    HWY_ALIGN int32_t offsets[kMaxLanes];
    for (size_t t0 = 0; t0 < threads; t0 += N) {
      for (size_t j = 0; j < N; ++j) offsets[j] = static_cast<int32_t>((t0 + j) * spt);
      const VI base = hn::Load(DI(), offsets);
      const auto element = [&](size_t c, size_t k) {
        const size_t at = c * chunk + k;
        return spt == 1 ? hn::LoadU(df, v.data() + at + t0)
                        : hn::GatherIndex(df, v.data(), hn::Add(base, hn::Set(DI(), static_cast<int32_t>(at))));
      };
      VF acc = element(0, 0);
      for (size_t c = 0; c < chunks; ++c) {
        for (size_t k = c == 0 ? 1 : 0; k < spt; ++k) acc = hn::Add(acc, element(c, k));
      }
      hn::StoreU(acc, df, p.data() + t0);
    }
  } else {
    for (size_t t = 0; t < threads; ++t) {
      float acc = v[t * spt];
      for (size_t c = 0; c < chunks; ++c) {
        for (size_t k = c == 0 ? 1 : 0; k < spt; ++k) acc += v[c * chunk + t * spt + k];
      }
      p[t] = acc;
    }
  }
  for (size_t o = 16; o >= 1; o /= 2) ButterflyStep(p, next, o);
  for (size_t o = threads / 2; o >= 32; o /= 2) ButterflyStep(p, next, o);
  return p[0];
}

// The sum of v[0 .. n) (n <= v.size(), the rest zeros up to a size the
// order needs) in the rules' order, over max(n, sum_width) elements.
float PaddedSum(std::vector<float>& v, int64_t n, const spec::NormRules& rules) {
  const DF df;
  const size_t N = hn::Lanes(df);
  const int64_t width = std::max(n, rules.sum_width);
  v.resize(std::max(v.size(), static_cast<size_t>(width)), 0.0f);
  const spec::Reduction& r = rules.reduction;
  switch (r.order) {
    case ReductionOrder::kSequential: {
      float s = 0.0f;
      for (int64_t i = 0; i < width; ++i) s += v[static_cast<size_t>(i)];
      return s;
    }
    case ReductionOrder::kPairwise: {
      size_t level = 1;
      while (level < static_cast<size_t>(width)) level *= 2;
      v.resize(std::max(v.size(), level), 0.0f);
      for (size_t i = 0; i < level; ++i) v[i] = 0.0f + v[i];  // the spec's first level: +0 + x (a -0 becomes +0)
#if HWY_TARGET != HWY_SCALAR
      for (; level >= 2 * N; level /= 2) {
        // Element i of the next level from elements 2i and 2i + 1: the even
        // and odd lanes of two vectors. Stores land below the loads ahead.
        for (size_t i = 0; i < level / 2; i += N) {
          const VF lo = hn::LoadU(df, v.data() + 2 * i), hi = hn::LoadU(df, v.data() + 2 * i + N);
          hn::StoreU(hn::Add(hn::ConcatEven(df, hi, lo), hn::ConcatOdd(df, hi, lo)), df, v.data() + i);
        }
      }
#endif
      for (; level > 1; level /= 2) {
        for (size_t i = 0; i < level / 2; ++i) v[i] = v[2 * i] + v[2 * i + 1];
      }
      return v[0];
    }
    case ReductionOrder::kStridedLanes:
    case ReductionOrder::kBlockedLanes: break;
    case ReductionOrder::kTritonBlock: return TritonBlockSum(v, width, r);
  }
  const size_t lanes = static_cast<size_t>(r.lanes);
  const size_t chunk = (static_cast<size_t>(width) + lanes - 1) / lanes;  // blocked: each lane's elements
  const size_t rounds = chunk;                                            // strided: each lane's count, padded
  v.resize(std::max(v.size(), lanes * chunk), 0.0f);
  std::vector<float> p(lanes, 0.0f);
  if (lanes % N == 0) {
    HWY_ALIGN int32_t offsets[kMaxLanes];
    for (size_t l0 = 0; l0 < lanes; l0 += N) {
      VF acc = hn::Zero(df);
      if (r.order == ReductionOrder::kStridedLanes) {
        for (size_t k = 0; k < rounds; ++k) acc = hn::Add(acc, hn::LoadU(df, v.data() + l0 + k * lanes));
      } else {
        for (size_t j = 0; j < N; ++j) offsets[j] = static_cast<int32_t>((l0 + j) * chunk);
        const VI base = hn::Load(DI(), offsets);
        for (size_t k = 0; k < chunk; ++k) {
          acc = hn::Add(acc, hn::GatherIndex(df, v.data(), hn::Add(base, hn::Set(DI(), static_cast<int32_t>(k)))));
        }
      }
      hn::StoreU(acc, df, p.data() + l0);
    }
  } else {
    for (size_t l = 0; l < lanes; ++l) {
      float s = 0.0f;
      for (size_t k = 0; k < chunk; ++k) {
        s += r.order == ReductionOrder::kStridedLanes ? v[l + k * lanes] : v[l * chunk + k];
      }
      p[l] = s;
    }
  }
  // The butterfly: p[l] + p[l ^ o] for every lane, o from lanes / 2 down.
  std::vector<float> next(lanes);
  for (size_t o = lanes / 2; o >= 1; o /= 2) ButterflyStep(p, next, o);
  return p[0];
}

// The sum of the squares of values[0 .. n) (`squares` holds them rounded,
// zeros past n). Fused squares are the spec's own loop (std::fma), not
// vectorized: their orders interleave a multiply with every addition.
float SumOfSquares(const std::vector<float>& values, std::vector<float>& squares, int64_t n,
                   const spec::NormRules& rules) {
  if (rules.reduction.squares == SquareStep::kRounded) return PaddedSum(squares, n, rules);
  std::vector<float> v(values.begin(), values.begin() + n);
  v.resize(static_cast<size_t>(std::max(n, rules.sum_width)), 0.0f);
  return spec::reduce_sum_of_squares(v.data(), static_cast<int64_t>(v.size()), rules.reduction);
}

float RmsNormRow(const float* x, const float* w, int64_t n, float eps, spec::RmsWeight weight,
                 const spec::NormRules& rules, float* y) {
  const DF df;
  const size_t N = hn::Lanes(df);
  const size_t count = static_cast<size_t>(n), padded = (count + N - 1) / N * N;
  std::vector<float> xs(padded, 0.0f), ws(padded, 0.0f), squares(padded);
  std::copy(x, x + n, xs.begin());
  std::copy(w, w + n, ws.begin());
  for (size_t i = 0; i < padded; i += N) {
    const VF v = hn::LoadU(df, xs.data() + i);
    hn::StoreU(hn::Mul(v, v), df, squares.data() + i);
  }
  const float mean_square = spec::norm_divide(SumOfSquares(xs, squares, n, rules), n, rules);
  const float r = spec::norm_rsqrt(mean_square + eps, rules);
  const VF vr = hn::Set(df, r);
  for (size_t i = 0; i < padded; i += N) {
    VF normalized = hn::Mul(hn::LoadU(df, xs.data() + i), vr);
    if (weight == spec::RmsWeight::kBf16BeforeWeight) normalized = RoundThroughBf16(normalized, Bf16Nan::k7FFF);
    hn::StoreU(hn::Mul(normalized, hn::LoadU(df, ws.data() + i)), df, squares.data() + i);
  }
  std::copy(squares.begin(), squares.begin() + n, y);
  return r;
}

spec::LayerNormStats LayerNormRow(const float* x, const float* w, const float* b, int64_t n, float eps,
                                  spec::LayerNormAffine affine, const spec::NormRules& rules, float* y) {
  const DF df;
  const size_t N = hn::Lanes(df);
  const size_t count = static_cast<size_t>(n), padded = (count + N - 1) / N * N;
  std::vector<float> xs(padded, 0.0f), ws(padded, 0.0f), bs(padded, 0.0f);
  std::copy(x, x + n, xs.begin());
  std::copy(w, w + n, ws.begin());
  std::copy(b, b + n, bs.begin());
  std::vector<float> work = xs;  // the sum may write into its row
  spec::LayerNormStats s;
  s.mean = spec::norm_divide(PaddedSum(work, n, rules), n, rules);
  const VF mean = hn::Set(df, s.mean);
  std::vector<float> centred(padded), squares(padded, 0.0f);
  for (size_t i = 0; i < padded; i += N) {
    const VF c = hn::Sub(hn::LoadU(df, xs.data() + i), mean);
    hn::StoreU(c, df, centred.data() + i);
    hn::StoreU(hn::Mul(c, c), df, squares.data() + i);
  }
  // The padded lanes' squares are (0 - mean)^2: zeros past the row, as the spec sums.
  std::fill(squares.begin() + n, squares.end(), 0.0f);
  s.variance = spec::norm_divide(SumOfSquares(centred, squares, n, rules), n, rules);
  s.rstd = spec::norm_rsqrt(s.variance + eps, rules);
  const VF rstd = hn::Set(df, s.rstd);
  for (size_t i = 0; i < padded; i += N) {
    const VF p = hn::Mul(hn::LoadU(df, centred.data() + i), rstd);
    const VF wv = hn::LoadU(df, ws.data() + i), bv = hn::LoadU(df, bs.data() + i);
    if (affine == spec::LayerNormAffine::kMultiplyAdd) {
      hn::StoreU(hn::Add(hn::Mul(p, wv), bv), df, work.data() + i);
    } else {
#if HWY_NATIVE_FMA
      hn::StoreU(hn::MulAdd(p, wv, bv), df, work.data() + i);
#else
      // No fused multiply-add in this target's vectors: the spec's std::fma per lane.
      HWY_ALIGN float lanes_p[kMaxLanes];
      hn::Store(p, df, lanes_p);
      for (size_t j = 0; j < N; ++j) work[i + j] = std::fma(lanes_p[j], ws[i + j], bs[i + j]);
#endif
    }
  }
  std::copy(work.begin(), work.begin() + n, y);
  return s;
}

const NormOps* TargetNormOps() {
  static const NormOps ops{hwy::TargetName(HWY_TARGET), RmsNormRow, LayerNormRow};
  return &ops;
}

}  // namespace HWY_NAMESPACE
}  // namespace qcheck
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace qcheck {

HWY_EXPORT(RmsNormRow);
HWY_EXPORT(LayerNormRow);

namespace {

float DispatchRmsNorm(const float* x, const float* w, int64_t n, float eps, spec::RmsWeight weight,
                      const spec::NormRules& rules, float* y) {
  return HWY_DYNAMIC_DISPATCH(RmsNormRow)(x, w, n, eps, weight, rules, y);
}
spec::LayerNormStats DispatchLayerNorm(const float* x, const float* w, const float* b, int64_t n, float eps,
                                       spec::LayerNormAffine affine, const spec::NormRules& rules, float* y) {
  return HWY_DYNAMIC_DISPATCH(LayerNormRow)(x, w, b, n, eps, affine, rules, y);
}

}  // namespace

const NormOps& scalar_norm_ops() {
  static const NormOps ops{"scalar", spec::rms_norm_row, spec::layer_norm_row};
  return ops;
}

const NormOps& simd_norm_ops() {
  static const NormOps ops{"simd", DispatchRmsNorm, DispatchLayerNorm};
  return ops;
}

const NormOps* simd_norm_ops_for_target(int64_t target) {
  if ((hwy::SupportedTargets() & HWY_TARGETS & target) == 0) return nullptr;
  switch (target) {
#if HWY_TARGETS & HWY_AVX3_DL
    case HWY_AVX3_DL: return N_AVX3_DL::TargetNormOps();
#endif
#if HWY_TARGETS & HWY_AVX3
    case HWY_AVX3: return N_AVX3::TargetNormOps();
#endif
#if HWY_TARGETS & HWY_AVX2
    case HWY_AVX2: return N_AVX2::TargetNormOps();
#endif
#if HWY_TARGETS & HWY_SSE4
    case HWY_SSE4: return N_SSE4::TargetNormOps();
#endif
#if HWY_TARGETS & HWY_SSSE3
    case HWY_SSSE3: return N_SSSE3::TargetNormOps();
#endif
#if HWY_TARGETS & HWY_EMU128
    case HWY_EMU128: return N_EMU128::TargetNormOps();
#endif
#if HWY_TARGETS & HWY_SCALAR
    case HWY_SCALAR: return N_SCALAR::TargetNormOps();
#endif
    default: return nullptr;
  }
}

}  // namespace qcheck
#endif  // HWY_ONCE
