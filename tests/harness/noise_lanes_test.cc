// The noise of many rows at once (fuzz/buffers/noise_lanes.h) against the
// scalar stream it replaces, and the rows' plans (plan_row_noise) against the
// draws fill_bf16_row makes: a plan that misses costs only speed, so these
// tests are what says the fast path is taken and gives the scalar bits.
#include "fuzz/buffers/noise_lanes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/random/prng.h"
#include "fuzz/buffers/value_rows.h"
#include "fuzz/case/case_names.h"
#include "numerics/conversions.h"

namespace qcheck {
namespace {

TEST(NoiseLanes, EveryRowGetsTheScalarStreamsBitsAndEndsWhereItDoes) {
  const double scales[] = {1.0, 0x1p-120, 0x1p120, 448.0 * 0x1p-30 / 8, 0.3, 3.0e-5, 65504.0, 0x1p-149, 0x1p127};  // (the last overflows f32 at times: Inf)
  constexpr size_t kScales = sizeof scales / sizeof scales[0];
  for (int rows : {1, 3, 8, 16}) {
    for (int64_t width : {int64_t{1}, int64_t{7}, int64_t{64}, int64_t{515}}) {
      NoiseLanes lanes;
      std::vector<std::vector<uint16_t>> out(static_cast<size_t>(rows), std::vector<uint16_t>(static_cast<size_t>(width)));
      std::vector<Xoshiro256> scalar;
      for (int r = 0; r < rows; ++r) {
        scalar.emplace_back(mix_keys({static_cast<uint64_t>(rows), static_cast<uint64_t>(width), static_cast<uint64_t>(r)}));
        lanes.set_state(lanes.rows, scalar.back().state());
        lanes.scale[lanes.rows] = scales[static_cast<size_t>(r) % kScales];
        lanes.out[lanes.rows] = out[static_cast<size_t>(r)].data();
        ++lanes.rows;
      }
      draw_noise_lanes(lanes, width);
      for (int r = 0; r < rows; ++r) {
        for (int64_t i = 0; i < width; ++i) {
          const uint16_t want = spec::bf16_from_f32(static_cast<float>(scalar[static_cast<size_t>(r)].noise() * scales[static_cast<size_t>(r) % kScales]),
                                                    Bf16Nan::k7FFF);
          ASSERT_EQ(want, out[static_cast<size_t>(r)][static_cast<size_t>(i)])
              << "rows " << rows << " width " << width << " row " << r << " element " << i;
        }
        EXPECT_EQ(std::memcmp(lanes.state[r], scalar[static_cast<size_t>(r)].state(), 32), 0) << "row " << r;
      }
    }
  }
}

// A row filled with its planned noise drawn ahead gives the bytes of the row
// filled alone; with a wrong value put where the noise goes, it does not (so
// the plan was taken, not redrawn).
TEST(NoiseLanes, EveryRecipesPlanMeetsItsNoise) {
  constexpr int64_t kWidth = 96, kRope = 64;
  std::vector<float> cos_sin(kRope);
  for (int64_t i = 0; i < kRope; ++i) cos_sin[i] = std::cos(0.1f * static_cast<float>(i));
  ContractionPair pairs[kRope / 2];
  for (const RowTarget target : {RowTarget::kNone, RowTarget::kBf16, RowTarget::kE4m3QScale, RowTarget::kE4m3RowScale}) {
    for (unsigned r = 0; r < enum_count<ValueRecipe>(); ++r) {
      const ValueRecipe recipe = static_cast<ValueRecipe>(r);
      int planned = 0;
      for (uint64_t row = 0; row < 40; ++row) {
        RowRope rope;
        rope.target = target;
        rope.q_scale_exponent = -2;
        if (target != RowTarget::kNone) {
          rope.cos = cos_sin.data();
          rope.sin = cos_sin.data() + kRope / 2;
          rope.rope_width = kRope;
          rope.band_m = row % 3 == 0 ? 1 : 0;
          if (row % 2 == 0) {
            Xoshiro256 design(row);
            for (ContractionPair& p : pairs) p = contraction_pair(target == RowTarget::kNone ? RowTarget::kBf16 : target, design);
            rope.contraction = pairs;
          }
        }
        const uint64_t seed = mix_keys({r, row, static_cast<uint64_t>(target)});
        std::vector<uint16_t> alone(kWidth), ahead(kWidth), wrong(kWidth);
        Xoshiro256 a(seed);
        fill_bf16_row(recipe, a, rope, alone.data(), kWidth);
        ReadyNoise plan;
        if (!plan_row_noise(recipe, Xoshiro256(seed), rope, &plan)) continue;
        ++planned;
        NoiseLanes lanes;
        lanes.set_state(0, plan.start);
        lanes.scale[0] = plan.scale;
        lanes.out[0] = ahead.data();
        lanes.rows = 1;
        draw_noise_lanes(lanes, kWidth);
        std::memcpy(plan.end, lanes.state[0], sizeof plan.end);
        for (uint16_t& w : wrong) w = 0x7E57;  // a NaN no recipe writes
        RowRope with_plan = rope;
        with_plan.noise = &plan;
        Xoshiro256 b(seed), c(seed);
        fill_bf16_row(recipe, b, with_plan, ahead.data(), kWidth);
        fill_bf16_row(recipe, c, with_plan, wrong.data(), kWidth);
        ASSERT_EQ(alone, ahead) << name_of(recipe) << " row " << row;
        EXPECT_NE(std::count(wrong.begin(), wrong.end(), uint16_t{0x7E57}), 0)
            << name_of(recipe) << " row " << row << ": the plan was not taken";
      }
      if (recipe != ValueRecipe::kNanRows) {
        EXPECT_GT(planned, 0) << name_of(recipe);
      }
    }
  }
}

}  // namespace
}  // namespace qcheck
