#include "numerics/rope.h"

#include <cmath>

#include "numerics/float_bits.h"

namespace qcheck::spec {

namespace {

float rope_term_raw(float a, float c, float b, float s, Contraction contraction) {
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

}  // namespace

float rope_term(float a, float c, float b, float s, Contraction contraction) {
  const float r = rope_term_raw(a, c, b, s, contraction);
  // Which NaN operand's payload survives an add or fma on the host depends
  // on the operand order the compiler picks (found by the numerics fuzzer),
  // so the spec pins every NaN result to the canonical 0x7FFFFFFF, which is
  // also what GPU arithmetic produces.
  return std::isnan(r) ? float_from_bits(0x7FFFFFFFu) : r;
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
