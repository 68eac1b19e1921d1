// The integer draws a fused_k case and its values come from: xoshiro256**
// (core/random/prng.h, the harness's generator) and integer arithmetic only,
// so a seed gives the same case and bytes on every machine and compiler, as
// long as no expression draws twice where C++ leaves the order open (two
// draws as arguments of one call).
#pragma once

#include <cstdint>
#include <initializer_list>

#include "core/random/prng.h"

namespace qcheck::fused_k {

class Draws {
 public:
  explicit Draws(uint64_t seed) : engine_(seed) {}
  int64_t below(int64_t n) { return static_cast<int64_t>(engine_.next() % static_cast<uint64_t>(n)); }
  int64_t in(int64_t lo, int64_t hi) { return lo + below(hi - lo + 1); }
  bool chance(int64_t percent) { return below(100) < percent; }
  float uniform() { return static_cast<float>(engine_.next() >> 40) * 0x1p-24f * 2.0f - 1.0f; }  // [-1, 1), exact
  template <typename T>
  T pick(std::initializer_list<T> values) {
    return *(values.begin() + below(static_cast<int64_t>(values.size())));
  }

 private:
  Xoshiro256 engine_;
};

}  // namespace qcheck::fused_k
