// Value recipes for one row of a bf16 input (q_pe, ql_nope or index_q) and
// for the indexer weights. Each recipe aims at an edge of the numeric rules
// in SEMANTICS.md; the row's own stream (fuzz/case/prng.h) makes every choice.
#pragma once

#include <cstdint>
#include <vector>

#include "fuzz/case/case.h"
#include "fuzz/case/prng.h"
#include "reference/fused_q_args.h"

namespace qcheck {

// What a row needs to know about its RoPE: the cos/sin of its position (R/2
// values each, already rounded to the cache's dtype and widened to f32), the
// RoPE'd prefix of the row and its pairing. cos == nullptr: no RoPE
// (ql_nope). band_m > 0: the row's cache row is a scale-band row with
// cos = 1 + band_m * 2^-23 and sin = 0.
struct RowRope {
  const float* cos = nullptr;
  const float* sin = nullptr;
  int64_t rope_width = 0;
  RopeStyle style = RopeStyle::kInterleaved;
  int band_m = 0;
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

// One indexer weight (the f32 value; the caller rounds it for a bf16 tensor).
// Returns raw f32 bits so specials keep their payloads.
uint32_t weight_bits(ValueRecipe recipe, Xoshiro256& rng);

// bf16 of a double: rounded to f32, then to bf16 by the scalar spec (RNE).
uint16_t bf16_of(double value);

}  // namespace qcheck
