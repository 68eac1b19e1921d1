#include "reference/rope.h"

#include <cmath>

namespace qcheck::spec {

float rope_term(float a, float c, float b, float s, Contraction contraction) {
  switch (contraction) {
    case Contraction::kNone: {
      const float ac = a * c;
      const float bs = b * s;
      return ac + bs;
    }
    case Contraction::kFuseCos: {
      const float bs = b * s;
      return std::fma(a, c, bs);
    }
    case Contraction::kFuseSin: {
      const float ac = a * c;
      return std::fma(b, s, ac);
    }
  }
  return 0.0f;
}

void rope_row(const float* x, const float* cos, const float* sin, size_t count, RopeStyle style,
              Contraction minus_terms, Contraction plus_terms, float* out) {
  const size_t half = count / 2;
  for (size_t j = 0; j < count; ++j) {
    size_t partner, index;
    bool minus;
    if (style == RopeStyle::kInterleaved) {
      partner = j ^ 1u;
      index = j / 2;
      minus = (j % 2) == 0;
    } else {
      minus = j < half;
      partner = minus ? j + half : j - half;
      index = minus ? j : j - half;
    }
    const float b = minus ? -x[partner] : x[partner];
    out[j] = rope_term(x[j], cos[index], b, sin[index], minus ? minus_terms : plus_terms);
  }
}

}  // namespace qcheck::spec
