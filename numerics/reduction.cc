#include "numerics/reduction.h"

#include <cstddef>
#include <utility>
#include <vector>

namespace qcheck::spec {
namespace {

// The butterfly over `p` (a power of two of partial sums): at offset o every
// lane l takes p[l] + p[l ^ o]; f32 addition commutes, so lane l and lane
// l ^ o get the same bits and lane 0 holds the result.
float butterfly(std::vector<float> p) {
  for (size_t offset = p.size() / 2; offset >= 1; offset /= 2) {
    std::vector<float> next(p.size());
    for (size_t l = 0; l < p.size(); ++l) next[l] = p[l] + p[l ^ offset];
    p.swap(next);
  }
  return p[0];
}

}  // namespace

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
  }
  return 0.0f;
}

float reduce_sum_of_squares(const float* x, int64_t n, Reduction r) {
  std::vector<float> squares(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) squares[static_cast<size_t>(i)] = x[i] * x[i];
  return reduce_sum(squares.data(), n, r);
}

}  // namespace qcheck::spec
