#include "fuzz/buffers/value_rows.h"

#include <algorithm>
#include <cmath>

#include "reference/conversions.h"
#include "reference/float_bits.h"
#include "reference/row_ops.h"

namespace qcheck {

const std::vector<uint16_t>& bf16_specials() {
  static const std::vector<uint16_t> values = {
      0x7FC0, 0xFFC0, 0x7FFF, 0xFFFF, 0x7F81, 0xFF81, 0x7FA5,  // NaN: quiet, payloads, signalling
      0x7F80, 0xFF80,                                          // +-Inf
      0x0000, 0x8000,                                          // +-0
      0x0001, 0x8001, 0x007F, 0x807F, 0x0080,                  // subnormals, smallest normal
      0x43E0, 0xC3E0, 0x43E8, 0x43F0, 0xC3F0,                  // 448, -448, 464, 480, -480
      0x7F7F, 0xFF7F,                                          // bf16 max
  };
  return values;
}

const std::vector<uint32_t>& f32_specials() {
  static const std::vector<uint32_t> values = {
      0x7FC00000u, 0xFFC00001u, 0x7F800001u, 0xFFBFFFFFu,  // NaN: quiet, payload, signalling
      0x7F800000u, 0xFF800000u,                            // +-Inf
      0x00000000u, 0x80000000u,                            // +-0
      0x00000001u, 0x807FFFFFu, 0x00800000u,               // f32 subnormals, smallest normal
      0x43E00000u, 0x43E80000u, 0x43F00000u,               // 448, 464, 480
      0x7F7FFFFFu, 0x7F7F0000u,                            // FLT_MAX, bf16 max
  };
  return values;
}

int log2f_band_width(int e) {
  // SEMANTICS.md, variant (A): M = 0 for e in -4..3, 1 for -8..-5 and 4..7,
  // 2 for -16..-9 and 8..15, 5 for -22..-17 and 16..31, 11 for 32..63,
  // 22 for 64..119.
  if (e >= -4 && e <= 3) return 0;
  if ((e >= -8 && e <= -5) || (e >= 4 && e <= 7)) return 1;
  if ((e >= -16 && e <= -9) || (e >= 8 && e <= 15)) return 2;
  if ((e >= -22 && e <= -17) || (e >= 16 && e <= 31)) return 5;
  if (e >= 32 && e <= 63) return 11;
  if (e >= 64 && e <= 119) return 22;
  return 0;
}

uint16_t bf16_of(double value) {
  return spec::bf16_from_f32(static_cast<float>(value), Bf16Nan::k7FFF);
}

namespace {

float f32_of_bf16(uint16_t bits) { return spec::f32_from_bf16(bits); }

void fill_noise(Xoshiro256& rng, double scale, uint16_t* out, int64_t width) {
  // bf16_of of each value, rounded to bf16 a chunk at a time by the oracle's
  // SIMD rows (the same bits as the spec for every f32: tests/reference).
  constexpr int64_t kChunk = 256;
  float values[kChunk];
  for (int64_t start = 0; start < width; start += kChunk) {
    const int64_t n = std::min(kChunk, width - start);
    for (int64_t i = 0; i < n; ++i) values[i] = static_cast<float>(rng.noise() * scale);
    simd_row_ops().bf16_from_f32_row(values, out + start, static_cast<size_t>(n), Bf16Nan::k7FFF);
  }
}

// A row whose largest element is `target` (bf16 bits), the others at most
// about half of it. The target sits in the pass-through part of an indexer
// row half the time, where RoPE cannot move it.
void fill_peaked(Xoshiro256& rng, const RowRope& rope, uint16_t target, uint16_t* out,
                 int64_t width, bool target_in_rope_part) {
  fill_noise(rng, std::fabs(f32_of_bf16(target)) / 8.0, out, width);
  int64_t lo = 0, hi = width - 1;
  if (target_in_rope_part && rope.rope_width > 0) {
    hi = rope.rope_width - 1;
  } else if (rope.rope_width < width && rng.one_in(2)) {
    lo = rope.rope_width;
  }
  out[rng.between(lo, hi)] = static_cast<uint16_t>(target | (rng.one_in(2) ? 0x8000 : 0));
}

void fill_scale_edge(Xoshiro256& rng, const RowRope& rope, uint16_t* out, int64_t width) {
  // amax at 448 * 2^k, one bf16 ulp either side of it, or at the 1e-4 floor.
  uint16_t target;
  switch (rng.below(4)) {
    case 0: target = bf16_of(std::ldexp(448.0, static_cast<int>(rng.between(-30, 30)))); break;
    case 1: target = bf16_of(std::ldexp(448.0, static_cast<int>(rng.between(-30, 30)))) + 1; break;
    case 2: target = bf16_of(std::ldexp(448.0, static_cast<int>(rng.between(-30, 30)))) - 1; break;
    default: target = static_cast<uint16_t>(bf16_of(1e-4) + rng.between(-1, 1)); break;
  }
  fill_peaked(rng, rope, target, out, width, false);
}

void fill_scale_band(Xoshiro256& rng, const RowRope& rope, uint16_t* out, int64_t width) {
  if (rope.band_m <= 0 || rope.rope_width == 0) {
    fill_scale_edge(rng, rope, out, width);
    return;
  }
  // An element 448 * 2^k in the RoPE'd part: with cos = 1 + m * 2^-23 and
  // sin = 0 its RoPE'd value gives s0 = 2^k * (1 + m' * 2^-23), inside the
  // band where log2f keeps 2^k (exponents up to 118 keep 448 * 2^k finite
  // in bf16).
  std::vector<int> exponents;
  for (int k = -22; k <= 118; ++k) {
    if (log2f_band_width(k) >= rope.band_m) exponents.push_back(k);
  }
  const int k = exponents[rng.below(exponents.size())];
  fill_peaked(rng, rope, bf16_of(std::ldexp(448.0, k)), out, width, true);
}

void fill_cancellation(Xoshiro256& rng, const RowRope& rope, uint16_t* out, int64_t width) {
  fill_noise(rng, 1.0, out, width);
  if (rope.cos == nullptr) return;
  const int64_t half = rope.rope_width / 2;
  for (int64_t i = 0; i < half; ++i) {
    const double c = rope.cos[i], s = rope.sin[i];
    if (!(std::fabs(s) > 1.0 / 256) || !std::isfinite(c) || !std::isfinite(s)) continue;
    // Pair (a, b) of rope.h: r_a = x_a*c - x_b*s and r_b = x_b*c + x_a*s.
    const int64_t a = rope.style == RopeStyle::kInterleaved ? 2 * i : i;
    const int64_t b = rope.style == RopeStyle::kInterleaved ? 2 * i + 1 : i + half;
    if (rng.one_in(2)) {
      out[b] = bf16_of(f32_of_bf16(out[a]) * c / s);  // r_a ~= 0
    } else {
      out[a] = bf16_of(-f32_of_bf16(out[b]) * c / s);  // r_b ~= 0
    }
  }
}

}  // namespace

void fill_bf16_row(ValueRecipe recipe, Xoshiro256& rng, const RowRope& rope, uint16_t* out,
                   int64_t width) {
  switch (recipe) {
    case ValueRecipe::kMagnitudes: {
      const int k = static_cast<int>(rng.one_in(8) ? rng.between(-120, 120) : rng.between(-30, 30));
      fill_noise(rng, std::ldexp(1.0, k), out, width);
      return;
    }
    case ValueRecipe::kSpecials: {
      fill_noise(rng, 1.0, out, width);
      const std::vector<uint16_t>& specials = bf16_specials();
      for (int64_t i = 0; i < width; ++i) {
        if (rng.one_in(6)) out[i] = specials[rng.below(specials.size())];
      }
      return;
    }
    case ValueRecipe::kScaleEdges: fill_scale_edge(rng, rope, out, width); return;
    case ValueRecipe::kZeroRows:
      if (rng.one_in(2)) {
        for (int64_t i = 0; i < width; ++i) out[i] = rng.one_in(4) ? 0x8000 : 0x0000;
      } else {
        fill_noise(rng, 1.0, out, width);
      }
      return;
    case ValueRecipe::kScaleBand: fill_scale_band(rng, rope, out, width); return;
    case ValueRecipe::kCancellation: fill_cancellation(rng, rope, out, width); return;
    case ValueRecipe::kNormal:
    case ValueRecipe::kLargePositions:
    case ValueRecipe::kMixed:  // resolved by the caller; noise if it was not
      fill_noise(rng, 1.0, out, width);
      return;
  }
}

uint32_t weight_bits(ValueRecipe recipe, Xoshiro256& rng) {
  const double noise = rng.noise();
  switch (recipe) {
    case ValueRecipe::kSpecials:
      if (rng.one_in(6)) return f32_specials()[rng.below(f32_specials().size())];
      break;
    case ValueRecipe::kZeroRows:
      if (rng.one_in(2)) return rng.one_in(4) ? 0x80000000u : 0u;
      break;
    case ValueRecipe::kMagnitudes:
      return bits_of(
          static_cast<float>(noise * std::ldexp(1.0, static_cast<int>(rng.between(-40, 40)))));
    default: break;
  }
  return bits_of(static_cast<float>(noise));
}

}  // namespace qcheck
