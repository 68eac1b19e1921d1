#include "fuzz/buffers/value_rows.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "numerics/conversions.h"
#include "numerics/float_bits.h"
#include "numerics/rope.h"
#include "numerics/row_ops.h"

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

int q_scale_exponent_of(uint32_t q_scale_bits) {
  const float q_scale = float_from_bits(q_scale_bits);
  if (!std::isfinite(q_scale) || q_scale == 0.0f) return 0;
  return std::max(std::ilogb(q_scale), -126);
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

namespace {

float f32_of_bf16(uint16_t bits) { return spec::f32_from_bf16(bits); }

void fill_noise(Xoshiro256& rng, const RowRope& rope, double scale, uint16_t* out, int64_t width) {
  if (rope.noise != nullptr && rope.noise->scale == scale &&
      std::memcmp(rope.noise->start, rng.state(), sizeof rope.noise->start) == 0) {
    rng.set_state(rope.noise->end);  // drawn ahead with other rows' (fill_rows): out holds it
    return;
  }
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

// The noise under a peak at `target`: about an eighth of it.
double peak_noise_scale(uint16_t target) { return std::fabs(f32_of_bf16(target)) / 8.0; }

// A row whose largest element is `target` (bf16 bits), the others at most
// about half of it. The target sits in the pass-through part of an indexer
// row half the time, where RoPE cannot move it.
void fill_peaked(Xoshiro256& rng, const RowRope& rope, uint16_t target, uint16_t* out,
                 int64_t width, bool target_in_rope_part) {
  fill_noise(rng, rope, peak_noise_scale(target), out, width);
  int64_t lo = 0, hi = width - 1;
  if (target_in_rope_part && rope.rope_width > 0) {
    hi = rope.rope_width - 1;
  } else if (rope.rope_width < width && rng.one_in(2)) {
    lo = rope.rope_width;
  }
  out[rng.between(lo, hi)] = static_cast<uint16_t>(target | (rng.one_in(2) ? 0x8000 : 0));
}

// amax at 448 * 2^k, one bf16 ulp either side of it, or at the 1e-4 floor.
uint16_t scale_edge_target(Xoshiro256& rng) {
  switch (rng.below(4)) {
    case 0: return bf16_of(times_pow2(448.0, static_cast<int>(rng.between(-30, 30))));
    case 1: return static_cast<uint16_t>(bf16_of(times_pow2(448.0, static_cast<int>(rng.between(-30, 30)))) + 1);
    case 2: return static_cast<uint16_t>(bf16_of(times_pow2(448.0, static_cast<int>(rng.between(-30, 30)))) - 1);
    default: return static_cast<uint16_t>(bf16_of(1e-4) + rng.between(-1, 1));
  }
}

void fill_scale_edge(Xoshiro256& rng, const RowRope& rope, uint16_t* out, int64_t width) {
  fill_peaked(rng, rope, scale_edge_target(rng), out, width, false);
}

// A scale-band row's peak 448 * 2^k: k among the exponents whose log2f band
// holds the row's cache m (exponents up to 118 keep 448 * 2^k finite in bf16).
uint16_t band_target(Xoshiro256& rng, int band_m) {
  struct Exponents {
    int count = 0;
    int k[141];
  };
  // The exponents of each m (the widest band is 22), listed once.
  static const auto table = [] {
    std::array<Exponents, 23> t{};
    for (int m = 0; m < 23; ++m) {
      for (int k = -22; k <= 118; ++k) {
        if (log2f_band_width(k) >= m) t[m].k[t[m].count++] = k;
      }
    }
    return t;
  }();
  const Exponents& e = table[static_cast<size_t>(std::clamp(band_m, 0, 22))];  // (m is 1 or 2: band_m_of_row)
  return bf16_of(times_pow2(448.0, e.k[rng.below(static_cast<uint64_t>(e.count))]));
}

void fill_scale_band(Xoshiro256& rng, const RowRope& rope, uint16_t* out, int64_t width) {
  if (rope.band_m <= 0 || rope.rope_width == 0) {
    fill_scale_edge(rng, rope, out, width);
    return;
  }
  // An element 448 * 2^k in the RoPE'd part: with cos = 1 + m * 2^-23 and
  // sin = 0 its RoPE'd value gives s0 = 2^k * (1 + m' * 2^-23), inside the
  // band where log2f keeps 2^k.
  fill_peaked(rng, rope, band_target(rng, rope.band_m), out, width, true);
}

// Pair (a, b) of rope.h: r_a = x_a*c - x_b*s (a minus term), r_b = x_b*c + x_a*s.
void pair_elements(const RowRope& rope, int64_t i, int64_t* a, int64_t* b) {
  const int64_t half = rope.rope_width / 2;
  *a = rope.style == RopeStyle::kInterleaved ? 2 * i : i;
  *b = rope.style == RopeStyle::kInterleaved ? 2 * i + 1 : i + half;
}

void fill_cancellation(Xoshiro256& rng, const RowRope& rope, uint16_t* out, int64_t width) {
  fill_noise(rng, rope, 1.0, out, width);
  if (rope.cos == nullptr) return;
  for (int64_t i = 0; i < rope.rope_width / 2; ++i) {
    const double c = rope.cos[i], s = rope.sin[i];
    if (!(std::fabs(s) > 1.0 / 256) || !std::isfinite(c) || !std::isfinite(s)) continue;
    int64_t a, b;
    pair_elements(rope, i, &a, &b);
    if (rng.one_in(2)) {
      out[b] = bf16_of(f32_of_bf16(out[a]) * c / s);  // r_a ~= 0
    } else {
      out[a] = bf16_of(-f32_of_bf16(out[b]) * c / s);  // r_b ~= 0
    }
  }
}

// The output code of an fp32 value in [1, 2) under the target, at scale 1.
uint32_t final_code(RowTarget target, float r) {
  return target == RowTarget::kBf16 ? spec::bf16_from_f32(r, Bf16Nan::k7FFF)
                                    : spec::e4m3_from_f32(r, E4m3Overflow::kSatFinite);
}

double grid_of(RowTarget target) { return target == RowTarget::kBf16 ? 0x1p-7 : 0x1p-3; }

// The indexer's own scale 2^k comes from an anchor element at value * 2^k
// (440: amax in (224, 448] * 2^k, so the scale is 2^k), put in the
// pass-through part or, without one, in pair 0 (its partner 0). Returns the
// anchor's index (below the RoPE width: pair 0 is taken), or -1 for the
// other targets, which get no anchor.
int64_t place_anchor(Xoshiro256& rng, const RowRope& rope, uint16_t* out, int64_t width, int k, double value) {
  if (rope.target != RowTarget::kE4m3RowScale) return -1;
  const uint16_t anchor = static_cast<uint16_t>(bf16_of(times_pow2(value, k)) | (rng.one_in(2) ? 0x8000 : 0));
  int64_t at;
  if (rope.rope_width < width) {
    at = rng.between(rope.rope_width, width - 1);
  } else {
    int64_t b;
    pair_elements(rope, 0, &at, &b);
    out[b] = 0;
  }
  out[at] = anchor;
  return at;
}

// The exponent E of a value to land, after the target's division, in
// [2^q, 2^(q+1)) with q from lo to hi.
int target_exponent(Xoshiro256& rng, const RowRope& rope, int row_scale_exponent, int lo, int hi) {
  switch (rope.target) {
    case RowTarget::kE4m3QScale: return rope.q_scale_exponent + static_cast<int>(rng.between(lo, hi));
    case RowTarget::kE4m3RowScale: return row_scale_exponent + static_cast<int>(rng.between(lo, hi));
    default: return static_cast<int>(rng.between(-8, 8));
  }
}

// kContraction: every pair of a contraction cache row gets values whose
// rounding the FMA pattern decides (ContractionPair); without such a row
// (a bf16 cache, ql_nope) the cancellation recipe.
void fill_contraction(Xoshiro256& rng, const RowRope& rope, uint16_t* out, int64_t width) {
  if (rope.contraction == nullptr || rope.target == RowTarget::kNone) {
    fill_cancellation(rng, rope, out, width);
    return;
  }
  const int k = static_cast<int>(rng.between(-15, 20));
  fill_noise(rng, rope, rope.target == RowTarget::kE4m3RowScale ? times_pow2(1.0, k) / 4 : 1.0, out, width);
  const int64_t anchor = place_anchor(rng, rope, out, width, k, 440.0);
  const bool pair0_used = anchor >= 0 && anchor < rope.rope_width;
  const double g = grid_of(rope.target);
  for (int64_t i = pair0_used ? 1 : 0; i < rope.rope_width / 2; ++i) {
    const ContractionPair& design = rope.contraction[i];
    if (design.good_count == 0) continue;  // noise
    const double u = 1.0 + design.f0 + design.good[rng.below(design.good_count)] * g;
    const double sign = rng.one_in(2) ? -1.0 : 1.0;
    const int e = target_exponent(rng, rope, k, -6, 7);
    // The element whose term decides: the minus term's (a) or the plus term's (b).
    int64_t a, b;
    pair_elements(rope, i, &a, &b);
    const bool minus = rng.one_in(2);
    const int64_t j = minus ? a : b, partner = minus ? b : a;
    const double xj = sign * times_pow2(design.sin_mode ? 1.0 : u, e);
    const double term_b = sign * times_pow2(design.sin_mode ? u : 1.0, e);  // the b of a*c + b*s
    out[j] = bf16_of(xj);
    out[partner] = bf16_of(minus ? -term_b : term_b);
  }
}

// The e4m3 midpoint between the code of magnitude `code` (below 0x7E) and
// the next, from a table made once.
double e4m3_midpoint(int code) {
  struct Table {
    double midpoints[0x7E];
    Table() {
      for (int k = 0; k < 0x7E; ++k) {
        midpoints[k] = 0.5 * (spec::f32_from_e4m3(static_cast<uint8_t>(k)) + spec::f32_from_e4m3(static_cast<uint8_t>(k + 1)));
      }
    }
  };
  static const Table table;
  return table.midpoints[code];
}

// Bit m set where x = 1 + m/128 gives an x * c whose low 16 bits are
// 0x8000: a bf16 tie. For c in [1, 2) and x * 2^e with |e| <= 100, x * c *
// 2^e is a normal f32 and its rounding does not depend on e or on the sign,
// so this mask answers the search of tie_value for every such e.
using Mask128 = unsigned __int128;

Mask128 solve_tie_mantissas(float c) {
  Mask128 mask = 0;
  for (int m = 0; m < 128; ++m) {
    const float r = (1.0f + static_cast<float>(m) / 128.0f) * c;
    if ((bits_of(r) & 0xFFFFu) == 0x8000u) mask |= Mask128(1) << m;
  }
  return mask;
}

Mask128 bf16_tie_mantissas(float c) {
  // The ties recipe's cache rows hold c = 1 + k/128: their masks are solved once.
  struct Table {
    Mask128 masks[128];
    Table() {
      for (int k = 0; k < 128; ++k) masks[k] = solve_tie_mantissas(1.0f + static_cast<float>(k) / 128.0f);
    }
  };
  static const Table table;
  const uint32_t bits = bits_of(c);
  if ((bits & 0xFFFFu) == 0 && (bits >> 23) == 127) return table.masks[(bits >> 16) & 0x7F];
  return solve_tie_mantissas(c);
}

// bf16 bits of a value v such that the row's target rounds RN(v * c) from an
// exact tie, searched over the 128 mantissas of v's binade from a random
// start (both parities come up); 0 when none is a tie.
uint16_t tie_value(Xoshiro256& rng, const RowRope& rope, float c, int scale_exponent, int e, bool* found) {
  const int start = static_cast<int>(rng.below(128));
  const double sign = rng.one_in(2) ? -1.0 : 1.0;
  if (rope.target == RowTarget::kBf16 && c >= 1.0f && c < 2.0f && e >= -100 && e <= 100) {
    // The first tie mantissa from `start` on, cyclically.
    const Mask128 mask = bf16_tie_mantissas(c);
    const Mask128 rotated = start == 0 ? mask : (mask >> start) | (mask << (128 - start));
    *found = rotated != 0;
    if (rotated == 0) return 0;
    const uint64_t low = static_cast<uint64_t>(rotated);
    const int first = low != 0 ? __builtin_ctzll(low) : 64 + __builtin_ctzll(static_cast<uint64_t>(rotated >> 64));
    return bf16_of(sign * times_pow2(1.0 + ((start + first) % 128) / 128.0, e));
  }
  for (int step = 0; step < 128; ++step) {
    const uint16_t x = bf16_of(sign * times_pow2(1.0 + ((start + step) % 128) / 128.0, e));
    const float r = f32_of_bf16(x) * c;  // exact: two bf16 significands
    if (!std::isfinite(r) || r == 0) continue;
    bool tie;
    if (rope.target == RowTarget::kBf16) {
      tie = (bits_of(r) & 0xFFFFu) == 0x8000u;
    } else {
      const float q = std::ldexp(r, -scale_exponent);
      const int qe = std::ilogb(q);
      tie = qe >= -6 && qe <= 8 && (bits_of(q) & 0xFFFFFu) == 0x80000u && std::fabs(q) < 448.0f;
    }
    if (tie) {
      *found = true;
      return x;
    }
  }
  *found = false;
  return 0;
}

// kTies: values whose last rounding is an exact tie (e4m3 or bf16 after the
// scale), both parities. A tie cache row has s = 0 and c = 1 on even pairs
// (r = x: the e4m3 midpoints themselves) and c = 1 + m * 2^-7 on odd ones
// (r = x * c exact in f32: the bf16 ties); the indexer's amax sits at
// 448 * 2^k or one bf16 ulp either side, k over every binade the scale
// reaches (2^-22, the floor's, to 2^119).
void fill_ties(Xoshiro256& rng, const RowRope& rope, uint16_t* out, int64_t width) {
  if (rope.target == RowTarget::kNone) {
    fill_noise(rng, rope, 1.0, out, width);
    return;
  }
  int scale_exponent = rope.q_scale_exponent;
  int64_t anchor = -1;
  double limit = 448.0;  // the largest |r| / scale a tie may have
  if (rope.target == RowTarget::kE4m3RowScale) {
    const int k = static_cast<int>(rng.between(-22, 119));
    fill_noise(rng, rope, times_pow2(1.0, k) / 4, out, width);
    anchor = place_anchor(rng, rope, out, width, k, 448.0);
    // At 448 * 2^k or one bf16 ulp either side (the scale 2^(k+1) above).
    const int side = static_cast<int>(rng.below(3)) - 1;
    out[anchor] = static_cast<uint16_t>(out[anchor] + side);
    scale_exponent = side > 0 ? k + 1 : k;
    limit = side > 0 ? 216.0 : 432.0;  // below the anchor: the scale stays
  } else {
    fill_noise(rng, rope, 1.0, out, width);
  }
  const double scale = times_pow2(1.0, scale_exponent);
  auto midpoint_value = [&]() {
    int code = static_cast<int>(rng.below(0x7E));
    while (e4m3_midpoint(code) >= limit) code = static_cast<int>(rng.below(static_cast<uint64_t>(code)));
    const uint16_t x = bf16_of(e4m3_midpoint(code) * scale);
    return static_cast<uint16_t>(x | (rng.one_in(2) ? 0x8000 : 0));
  };
  const bool e4m3 = rope.target != RowTarget::kBf16;
  // Elements without RoPE (the pass-through part, ql_nope): the midpoints themselves.
  for (int64_t j = rope.rope_width; j < width; ++j) {
    if (e4m3 && j != anchor && rng.one_in(2)) {
      out[j] = midpoint_value();
    }
  }
  if (rope.cos == nullptr) return;
  const bool pair0_used = anchor >= 0 && anchor < rope.rope_width;
  for (int64_t i = pair0_used ? 1 : 0; i < rope.rope_width / 2; ++i) {
    int64_t a, b;
    pair_elements(rope, i, &a, &b);
    const float c = rope.cos[i];
    if (rope.sin[i] != 0.0f) continue;  // not a tie row: noise
    for (const int64_t j : {a, b}) {
      if (c == 1.0f && e4m3) {
        out[j] = midpoint_value();
      } else if (c != 1.0f && !e4m3) {  // (x * c has too many bits to be an e4m3 tie: not searched)
        bool found = false;
        const int e = target_exponent(rng, rope, scale_exponent, -6, 6);
        const uint16_t x = tie_value(rng, rope, c, scale_exponent, e, &found);
        if (found) out[j] = x;
      }
    }
  }
}

// kNanRows: all NaN, NaN but one finite element, or NaN but +-Inf. A NaN
// partner makes a RoPE'd element NaN, so the finite and infinite elements go
// to the pass-through part where there is one, else to a whole pair.
void fill_nan_row(Xoshiro256& rng, const RowRope& rope, uint16_t* out, int64_t width) {
  const std::vector<uint16_t>& specials = bf16_specials();  // its first 7 are NaNs
  for (int64_t i = 0; i < width; ++i) out[i] = specials[rng.below(7)];
  const uint64_t mode = rng.below(3);
  if (mode == 0) return;
  auto value = [&]() {
    if (mode == 2) return static_cast<uint16_t>(rng.one_in(2) ? 0x7F80 : 0xFF80);
    return bf16_of(rng.noise() * times_pow2(1.0, static_cast<int>(rng.between(-20, 20))));
  };
  const int count = mode == 2 ? static_cast<int>(rng.between(1, 3)) : 1;
  if (rope.rope_width < width) {
    for (int n = 0; n < count; ++n) out[rng.between(rope.rope_width, width - 1)] = value();
  } else {
    int64_t a, b;
    pair_elements(rope, static_cast<int64_t>(rng.below(static_cast<uint64_t>(std::max<int64_t>(1, rope.rope_width / 2)))),
                  &a, &b);
    out[a] = value();
    out[b] = mode == 2 ? value() : 0;
  }
}

}  // namespace

namespace {

// The solved part of a pair, z and good: a function of the grid (bf16 or
// e4m3), the mode and f0 alone, so it is solved once per combination.
ContractionPair solve_contraction_pair(RowTarget target, bool sin_mode, float f0) {
  ContractionPair p;
  const double g = grid_of(target);
  p.sin_mode = sin_mode;
  p.f0 = f0;
  const double target_z = g / 2 - p.f0 - 0x1p-24;
  float z = static_cast<float>(target_z);
  if (static_cast<double>(z) >= target_z) z = std::nextafter(z, 0.0f);  // just below: the unfused sum stays under
  p.z = z;
  for (int m = 0; m < 64; m += 2) {
    const double u = 1.0 + p.f0 + m * g;
    if (u - 1.0 >= 0.5) break;
    const float a = p.sin_mode ? 1.0f : static_cast<float>(u), c = p.sin_mode ? z : kContractionV;
    const float b = p.sin_mode ? static_cast<float>(u) : 1.0f, s = p.sin_mode ? kContractionV : z;
    const Contraction right = p.sin_mode ? Contraction::kFuseSin : Contraction::kFuseCos;
    const uint32_t code = final_code(target, spec::rope_term(a, c, b, s, right));
    bool decides = true;
    for (Contraction other : {Contraction::kNone, Contraction::kFuseCos, Contraction::kFuseSin}) {
      if (other != right) decides = decides && final_code(target, spec::rope_term(a, c, b, s, other)) != code;
    }
    if (decides) p.good[p.good_count++] = static_cast<uint8_t>(m);  // ascending m
  }
  return p;
}

// f0 is a multiple of 2^-7 (u is a bf16) below g/2: 0 for bf16, 8 choices for e4m3.
uint64_t f0_steps(RowTarget target) { return static_cast<uint64_t>(grid_of(target) / 2 / 0x1p-7); }

struct ContractionTable {
  // [e4m3 grid][sin mode][f0 step]
  ContractionPair pairs[2][2][8];
  ContractionTable() {
    for (int e4m3 = 0; e4m3 < 2; ++e4m3) {
      const RowTarget target = e4m3 ? RowTarget::kE4m3RowScale : RowTarget::kBf16;
      for (int sin_mode = 0; sin_mode < 2; ++sin_mode) {
        for (uint64_t step = 0; step < std::max<uint64_t>(1, f0_steps(target)); ++step) {
          pairs[e4m3][sin_mode][step] =
              solve_contraction_pair(target, sin_mode != 0, static_cast<float>(static_cast<double>(step) * 0x1p-7));
        }
      }
    }
  }
};

}  // namespace

ContractionPair contraction_pair(RowTarget target, Xoshiro256& rng) {
  static const ContractionTable table;  // (e4m3 codes round alike after either scale)
  const bool sin_mode = rng.one_in(3);
  const uint64_t steps = f0_steps(target);
  const uint64_t step = steps > 0 ? rng.below(steps) : 0;
  return table.pairs[target == RowTarget::kBf16 ? 0 : 1][sin_mode ? 1 : 0][step];
}

namespace {

int magnitudes_exponent(Xoshiro256& rng) {
  return static_cast<int>(rng.one_in(8) ? rng.between(-120, 120) : rng.between(-30, 30));
}

}  // namespace

void fill_bf16_row(ValueRecipe recipe, Xoshiro256& rng, const RowRope& rope, uint16_t* out,
                   int64_t width) {
  switch (recipe) {
    case ValueRecipe::kMagnitudes:
      fill_noise(rng, rope, times_pow2(1.0, magnitudes_exponent(rng)), out, width);
      return;
    case ValueRecipe::kSpecials: {
      fill_noise(rng, rope, 1.0, out, width);
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
        fill_noise(rng, rope, 1.0, out, width);
      }
      return;
    case ValueRecipe::kScaleBand: fill_scale_band(rng, rope, out, width); return;
    case ValueRecipe::kCancellation: fill_cancellation(rng, rope, out, width); return;
    case ValueRecipe::kNanRows: fill_nan_row(rng, rope, out, width); return;
    case ValueRecipe::kContraction: fill_contraction(rng, rope, out, width); return;
    case ValueRecipe::kTies: fill_ties(rng, rope, out, width); return;
    case ValueRecipe::kNormal:
    case ValueRecipe::kLargePositions:
    case ValueRecipe::kMixed:  // resolved by the caller; noise if it was not
      fill_noise(rng, rope, 1.0, out, width);
      return;
  }
}

bool plan_row_noise(ValueRecipe recipe, Xoshiro256 rng, const RowRope& rope, ReadyNoise* plan) {
  double* scale = &plan->scale;
  // fill_bf16_row's draws before its noise, recipe by recipe.
  switch (recipe) {
    case ValueRecipe::kMagnitudes: *scale = times_pow2(1.0, magnitudes_exponent(rng)); break;
    case ValueRecipe::kScaleEdges: *scale = peak_noise_scale(scale_edge_target(rng)); break;
    case ValueRecipe::kScaleBand:
      *scale = peak_noise_scale(rope.band_m <= 0 || rope.rope_width == 0 ? scale_edge_target(rng)
                                                                         : band_target(rng, rope.band_m));
      break;
    case ValueRecipe::kZeroRows:
      if (rng.one_in(2)) return false;
      *scale = 1.0;
      break;
    case ValueRecipe::kNanRows: return false;
    case ValueRecipe::kContraction:
      if (rope.contraction == nullptr || rope.target == RowTarget::kNone) {
        *scale = 1.0;
      } else {
        const int k = static_cast<int>(rng.between(-15, 20));
        *scale = rope.target == RowTarget::kE4m3RowScale ? times_pow2(1.0, k) / 4 : 1.0;
      }
      break;
    case ValueRecipe::kTies:
      *scale = rope.target == RowTarget::kE4m3RowScale ? times_pow2(1.0, static_cast<int>(rng.between(-22, 119))) / 4
                                                       : 1.0;
      break;
    default: *scale = 1.0; break;  // normal, large positions, specials, cancellation
  }
  std::memcpy(plan->start, rng.state(), sizeof plan->start);
  return true;
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
          static_cast<float>(noise * times_pow2(1.0, static_cast<int>(rng.between(-40, 40)))));
    default: break;
  }
  return bits_of(static_cast<float>(noise));
}

}  // namespace qcheck
