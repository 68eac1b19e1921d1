// Value recipes for one row of a bf16 input (q_pe, ql_nope or index_q) and
// for the indexer weights. Each recipe aims at an edge of the numeric rules
// in SEMANTICS.md; the row's own stream (core/random/prng.h) makes every choice.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "core/random/prng.h"
#include "fuzz/case/case.h"
#include "numerics/conversions.h"
#include "ops/fused_q/args/fused_q_args.h"

namespace qcheck {

// What a row needs to know about its RoPE: the cos/sin of its position (R/2
// values each, already rounded to the cache's dtype and widened to f32), the
// RoPE'd prefix of the row and its pairing. cos == nullptr: no RoPE
// (ql_nope). band_m > 0: the row's cache row is a scale-band row with
// cos = 1 + band_m * 2^-23 and sin = 0.
// What rounds a row's values last (the recipes that aim at a rounding
// boundary need it): bf16 (the RoPE'd q_pe of the bf16 paths), e4m3 after a
// division by q_scale (the fp8 path's query_out), e4m3 after the row's own
// UE8M0 scale (the indexer), or nothing (ql_nope copied on the bf16 paths).
enum class RowTarget : uint8_t { kNone, kBf16, kE4m3QScale, kE4m3RowScale };

// One pair of a contraction cache row (f32 caches only: a bf16 cos or sin
// times a bf16 x is exact, so no FMA pattern can matter). With v = 1 + 2^-23
// and z solved below, cos-mode pairs hold c = v, s = z (the cos product
// u * v is the inexact one, so the fused-cos pattern differs from the other
// two), sin-mode pairs c = z, s = v. For the row's element x_j = u * 2^E
// (cos mode; the partner's term 2^E) with u = 1 + f0 + m * g in the binade
// [1, 2) of a grid of spacing g (2^-7 for bf16, 2^-3 for e4m3):
//   u * v = u + 2^-23 + f * 2^-23, f = u - 1, rounded to u + 2^-23;
//   z = RN(g/2 - f0 - 2^-24) rounded down, so that the unfused sum lands on
//   M + 2^-24 - eps (eps below f * 2^-23) and rounds to the midpoint M of
//   the grid above 1 + m * g, which goes to even (down for even m), while
//   the fused sum is above M + 2^-24 and rounds to M + 2^-23, which goes up.
// Every choice is checked with the spec's rope_term and conversions:
// good[0, good_count) lists the m (even, below 64) where the pair's pattern
// decides the output.
struct ContractionPair {
  bool sin_mode = false;
  float f0 = 0, z = 0;
  uint8_t good_count = 0;
  uint8_t good[32] = {};
};
ContractionPair contraction_pair(RowTarget target, Xoshiro256& rng);
constexpr float kContractionV = 1.00000011920928955f;  // 1 + 2^-23

// A row's noise drawn ahead, with other rows' (fill_rows, noise_lanes.h):
// the row's stream where its noise starts, the scale, and the stream after
// it. fill_noise takes it when the row reaches its noise with that stream
// and that scale (out then already holds the values), else draws its own.
struct ReadyNoise {
  uint64_t start[4];  // Xoshiro256::state()
  uint64_t end[4];
  double scale;
};

struct RowRope {
  const float* cos = nullptr;
  const float* sin = nullptr;
  int64_t rope_width = 0;
  RopeStyle style = RopeStyle::kInterleaved;
  int band_m = 0;
  RowTarget target = RowTarget::kNone;
  int q_scale_exponent = 0;  // kE4m3QScale: q_scale's power of two (floor(log2 q_scale))
  // The row's cache row is a contraction row: one design per pair (R/2).
  const ContractionPair* contraction = nullptr;
  const ReadyNoise* noise = nullptr;  // this row's noise, drawn ahead (or null)
};

// bf16 bit patterns of the specials (NaN of both signs, quiet and signalling,
// several payloads; +-Inf; +-0; subnormals; 448, 464, 480; bf16 max).
const std::vector<uint16_t>& bf16_specials();
// The same for f32 tensors (weights, fp32 caches): adds f32 subnormals and
// FLT_MAX, which bf16 cannot hold.
const std::vector<uint32_t>& f32_specials();

// The largest m such that s0 = 2^e * (1 + m * 2^-23) still gets scale 2^e
// under the log2f ceiling (SEMANTICS.md, variant (A)); 0 outside the band.
int log2f_band_width(int exponent);

// Fills out[0, width) with a bf16 row following `recipe` (not kMixed: the
// caller resolves it per row).
void fill_bf16_row(ValueRecipe recipe, Xoshiro256& rng, const RowRope& rope, uint16_t* out,
                   int64_t width);

// Where a row of `recipe` draws its noise: the stream at that point and the
// scale (plan->start, plan->scale), following the same draws as fill_bf16_row up to its noise. False
// when the row draws no noise (a zero row, a NaN row). A plan that does not
// match what fill_bf16_row then does only costs speed: fill_noise checks it.
bool plan_row_noise(ValueRecipe recipe, Xoshiro256 rng, const RowRope& rope, ReadyNoise* plan);

// One indexer weight (the f32 value; the caller rounds it for a bf16 tensor).
// Returns raw f32 bits so specials keep their payloads.
uint32_t weight_bits(ValueRecipe recipe, Xoshiro256& rng);

// The power of two the fp8 path's rows aim at for a q_scale of these f32
// bits: floor(log2 q_scale) for a normal q_scale, clamped to a normal f32's
// exponents for a subnormal one, and 0 for a zero, an Inf or a NaN (whose
// outputs are special whatever the rows hold). Keeps every exponent the
// recipes add to it inside times_pow2's range; a raw ilogb gives INT_MIN or
// INT_MAX there.
int q_scale_exponent_of(uint32_t q_scale_bits);

// x * 2^e, exactly std::ldexp(x, e) wherever the product is a normal double
// (every use here: |x| < 2^10, |e| < 200), at a fraction of its cost: 2^e is
// built from its bits.
inline double times_pow2(double x, int e) {
  const uint64_t bits = static_cast<uint64_t>(1023 + e) << 52;
  double power;
  std::memcpy(&power, &bits, sizeof power);
  return x * power;
}

// bf16 of a double: rounded to f32, then to bf16 by the scalar spec (RNE,
// a NaN as 0x7FFF; inline, as the recipes call it per element).
inline uint16_t bf16_of(double value) {
  return spec::bf16_from_f32(static_cast<float>(value), Bf16Nan::k7FFF);
}

}  // namespace qcheck
