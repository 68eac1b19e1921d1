#include "numerics/reduction.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

namespace qcheck::spec {
namespace {

// One butterfly step over `p`: every lane l takes p[l] + p[l ^ offset]; f32
// addition commutes, so lane l and lane l ^ offset get the same bits.
void butterfly_step(std::vector<float>& p, size_t offset) {
  std::vector<float> next(p.size());
  for (size_t l = 0; l < p.size(); ++l) next[l] = p[l] + p[l ^ offset];
  p.swap(next);
}

// The butterfly over `p` (a power of two of partial sums), offsets from
// p.size() / 2 down to 1; lane 0 holds the result.
float butterfly(std::vector<float> p) {
  for (size_t offset = p.size() / 2; offset >= 1; offset /= 2) butterfly_step(p, offset);
  return p[0];
}

bool power_of_two_within(int v, int limit) { return v >= 1 && v <= limit && (v & (v - 1)) == 0; }

// kTritonBlock's layout: thread t's k-th register holds element
// (k / spt) * chunk + t * spt + k % spt; registers past the row hold +0.
struct TritonLayout {
  int64_t spt, threads, chunk, registers;
  TritonLayout(int64_t n, const Reduction& r)
      : spt(r.size_per_thread), threads(int64_t{32} * r.warps), chunk(spt * threads),
        registers(spt * std::max<int64_t>(1, (n + chunk - 1) / chunk)) {}
  int64_t element(int64_t t, int64_t k) const { return (k / spt) * chunk + t * spt + k % spt; }
};

// The threads' partial sums combined: the lanes' butterfly inside each warp
// from offset `first` (16, or 8 when the caller made the first step), then
// the warps'.
float triton_combine(std::vector<float> p, size_t first) {
  for (size_t offset = first; offset >= 1; offset /= 2) butterfly_step(p, offset);
  for (size_t offset = p.size() / 2; offset >= 32; offset /= 2) butterfly_step(p, offset);
  return p[0];
}

// kTritonBlock: each thread's left fold from its first element, then the
// butterflies.
float triton_block_sum(const float* x, int64_t n, const Reduction& r) {
  const TritonLayout layout(n, r);
  const auto at = [&](int64_t e) { return e < n ? x[e] : 0.0f; };
  std::vector<float> p(static_cast<size_t>(layout.threads));
  for (int64_t t = 0; t < layout.threads; ++t) {
    float acc = at(layout.element(t, 0));
    for (int64_t k = 1; k < layout.registers; ++k) acc += at(layout.element(t, k));
    p[static_cast<size_t>(t)] = acc;
  }
  return triton_combine(std::move(p), 16);
}

// The sum of squares with every multiply contracted into an addition
// (SquareStep::kFused, numerics/types.h).
float fused_sum_of_squares(const float* x, int64_t n, const Reduction& r) {
  const auto at = [&](int64_t e) { return e < n ? x[e] : 0.0f; };
  const auto accumulate = [&](float acc, int64_t e) { return std::fma(at(e), at(e), acc); };
  switch (r.order) {
    case ReductionOrder::kSequential: {
      float s = 0.0f;
      for (int64_t i = 0; i < n; ++i) s = accumulate(s, i);
      return s;
    }
    case ReductionOrder::kPairwise: {
      size_t width = 2;
      while (width < static_cast<size_t>(n)) width *= 2;
      std::vector<float> level(width / 2);
      for (size_t i = 0; i < width / 2; ++i) {
        const int64_t e = static_cast<int64_t>(2 * i);
        level[i] = std::fma(at(e), at(e), at(e + 1) * at(e + 1));
      }
      for (width /= 2; width > 1; width /= 2) {
        for (size_t i = 0; i < width / 2; ++i) level[i] = level[2 * i] + level[2 * i + 1];
      }
      return level[0];
    }
    case ReductionOrder::kStridedLanes:
    case ReductionOrder::kBlockedLanes: {
      const int64_t lanes = r.lanes, chunk = (n + lanes - 1) / lanes;
      std::vector<float> partial(static_cast<size_t>(lanes), 0.0f);
      for (int64_t l = 0; l < lanes; ++l) {
        float s = 0.0f;
        if (r.order == ReductionOrder::kStridedLanes) {
          for (int64_t i = l; i < n; i += lanes) s = accumulate(s, i);
        } else {
          for (int64_t i = l * chunk; i < n && i < (l + 1) * chunk; ++i) s = accumulate(s, i);
        }
        partial[static_cast<size_t>(l)] = s;
      }
      return butterfly(std::move(partial));
    }
    case ReductionOrder::kTritonBlock: {
      const TritonLayout layout(n, r);
      std::vector<float> p(static_cast<size_t>(layout.threads));
      for (int64_t t = 0; t < layout.threads; ++t) {
        const float a0 = at(layout.element(t, 0));
        if (layout.registers == 1) {
          p[static_cast<size_t>(t)] = a0 * a0;
          continue;
        }
        const float a1 = at(layout.element(t, 1));
        float acc = std::fma(a0, a0, a1 * a1);
        for (int64_t k = 2; k < layout.registers; ++k) acc = accumulate(acc, layout.element(t, k));
        p[static_cast<size_t>(t)] = acc;
      }
      if (layout.registers > 1) return triton_combine(std::move(p), 16);
      // Each lane's own square fused into the first step.
      std::vector<float> next(p.size());
      for (size_t l = 0; l < p.size(); ++l) {
        const float a = at(static_cast<int64_t>(l));
        next[l] = std::fma(a, a, p[l ^ 16]);
      }
      return triton_combine(std::move(next), 8);
    }
  }
  return 0.0f;
}

}  // namespace

const char* reduction_error(const Reduction& r) {
  switch (r.order) {
    case ReductionOrder::kSequential:
    case ReductionOrder::kPairwise: return "";
    case ReductionOrder::kStridedLanes:
    case ReductionOrder::kBlockedLanes:
      return power_of_two_within(r.lanes, 1024) ? "" : "reduction lanes must be a power of two from 1 to 1024";
    case ReductionOrder::kTritonBlock:
      if (!power_of_two_within(r.size_per_thread, 16)) {
        return "reduction size_per_thread must be a power of two from 1 to 16";
      }
      return power_of_two_within(r.warps, 32) ? "" : "reduction warps must be a power of two from 1 to 32";
  }
  return "reduction order is not one of sequential, pairwise, strided-lanes, blocked-lanes, triton-block";
}

Reduction triton_block_reduction(int64_t block, int warps) {
  Reduction r;
  r.order = ReductionOrder::kTritonBlock;
  r.warps = warps;
  const int64_t per_thread = block / (int64_t{32} * std::max(warps, 1));
  r.size_per_thread = static_cast<int>(std::clamp<int64_t>(per_thread, 1, 4));
  return r;
}

float reduce_sum(const float* x, int64_t n, Reduction r) {
  switch (r.order) {
    case ReductionOrder::kSequential: {
      float s = 0.0f;
      for (int64_t i = 0; i < n; ++i) s += x[i];
      return s;
    }
    case ReductionOrder::kPairwise: {
      size_t width = 1;
      while (width < static_cast<size_t>(n)) width *= 2;
      std::vector<float> level(width, 0.0f);
      for (int64_t i = 0; i < n; ++i) level[static_cast<size_t>(i)] = 0.0f + x[i];
      for (; width > 1; width /= 2) {
        for (size_t i = 0; i < width / 2; ++i) level[i] = level[2 * i] + level[2 * i + 1];
      }
      return level[0];
    }
    case ReductionOrder::kStridedLanes:
    case ReductionOrder::kBlockedLanes: {
      const int64_t lanes = r.lanes;
      std::vector<float> partial(static_cast<size_t>(lanes), 0.0f);
      const int64_t chunk = (n + lanes - 1) / lanes;
      for (int64_t l = 0; l < lanes; ++l) {
        float s = 0.0f;
        if (r.order == ReductionOrder::kStridedLanes) {
          for (int64_t i = l; i < n; i += lanes) s += x[i];
        } else {
          for (int64_t i = l * chunk; i < n && i < (l + 1) * chunk; ++i) s += x[i];
        }
        partial[static_cast<size_t>(l)] = s;
      }
      return butterfly(std::move(partial));
    }
    case ReductionOrder::kTritonBlock: return triton_block_sum(x, n, r);
  }
  return 0.0f;
}

float reduce_sum_of_squares(const float* x, int64_t n, Reduction r) {
  if (r.squares == SquareStep::kFused) return fused_sum_of_squares(x, n, r);
  std::vector<float> squares(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) squares[static_cast<size_t>(i)] = x[i] * x[i];
  return reduce_sum(squares.data(), n, r);
}

}  // namespace qcheck::spec
