// The noise of many rows at once: Xoshiro256::noise() (core/random/prng.h)
// drawn for several independent streams side by side, one stream per SIMD
// lane, each value times its row's scale, rounded to f32 and then to bf16
// as fill_noise does, so the bits are those of the scalar loop. Input generation spends
// most of its time here (four xoshiro256** steps per element): one stream's
// steps depend on each other, the rows' streams do not.
#pragma once

#include <cstdint>

namespace qcheck {

// Rows with their own stream and scale, `width` values each.
struct NoiseLanes {
  static constexpr int kMaxRows = 16;
  int rows = 0;
  uint64_t state[kMaxRows][4];  // in: each row's stream before its noise; out: after it
  double scale[kMaxRows];
  uint16_t* out[kMaxRows];  // width bf16 each: bf16 of static_cast<float>(noise() * scale)

  void set_state(int row, const uint64_t* words) {
    for (int w = 0; w < 4; ++w) state[row][w] = words[w];
  }
};

// Draws `width` noise values for every row of `lanes`, advancing each state.
void draw_noise_lanes(NoiseLanes& lanes, int64_t width);

}  // namespace qcheck
