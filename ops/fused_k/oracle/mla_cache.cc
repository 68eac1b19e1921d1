#include "ops/fused_k/oracle/mla_cache.h"

#include <algorithm>
#include <cstring>

#include "numerics/conversions.h"
#include "numerics/e2m1.h"
#include "numerics/float_bits.h"
#include "numerics/quotient.h"
#include "numerics/ue8m0.h"

namespace qcheck::fused_k {
namespace {

void store_bf16(float value, uint8_t* at) {
  const uint16_t code = spec::bf16_from_f32(value, Bf16Nan::k7FFF);
  at[0] = static_cast<uint8_t>(code);
  at[1] = static_cast<uint8_t>(code >> 8);
}

void store_f32(float value, uint8_t* at) {
  const uint32_t bits = bits_of(value);
  for (int i = 0; i < 4; ++i) at[i] = static_cast<uint8_t>(bits >> (8 * i));
}

uint8_t e4m3(float value) { return spec::e4m3_from_f32(value, E4m3Overflow::kSatFinite); }

}  // namespace

void mla_cache_entry(const float* latent, const float* rope, MlaCacheFormat format, float k_scale,
                     const MlaCacheRules& rules, uint8_t* entry) {
  switch (format) {
    case MlaCacheFormat::kBf16:
      for (int64_t i = 0; i < kMlaLatent; ++i) store_bf16(latent[i], entry + 2 * i);
      for (int64_t i = 0; i < kMlaRope; ++i) store_bf16(rope[i], entry + 2 * (kMlaLatent + i));
      return;
    case MlaCacheFormat::kFp8:
      for (int64_t i = 0; i < kMlaLatent; ++i) entry[i] = e4m3(spec::quotient(latent[i], k_scale, rules.fp8_quotient));
      for (int64_t i = 0; i < kMlaRope; ++i) {
        entry[kMlaLatent + i] = e4m3(spec::quotient(rope[i], k_scale, rules.fp8_quotient));
      }
      return;
    case MlaCacheFormat::kFp8DsMla: {
      Profile scale_rules;
      scale_rules.scale_ceiling = rules.ds_ceiling;
      scale_rules.scale_quotient = rules.ds_quotient;
      scale_rules.scale_floor = rules.ds_floor;
      for (int64_t t = 0; t < 4; ++t) {
        const float* tile = latent + 128 * t;
        const float s = spec::row_scale(tile, 128, scale_rules);
        for (int64_t i = 0; i < 128; ++i) entry[128 * t + i] = e4m3(tile[i] / s);  // exact: s is a power of two
        store_f32(s, entry + kMlaLatent + 4 * t);
      }
      for (int64_t i = 0; i < kMlaRope; ++i) store_bf16(rope[i], entry + kMlaLatent + 16 + 2 * i);
      return;
    }
    case MlaCacheFormat::kNvfp4DsMla: {
      constexpr float kReciprocal6 = 1.0f / 6.0f;  // RN(1/6): not exact
      for (int64_t t = 0; t < kMlaLatent / 16; ++t) {
        const float* tile = latent + 16 * t;
        const float a = spec::row_amax(tile, 16);
        const uint8_t sf_code = e4m3(std::max(a * kReciprocal6, 0.001953125f));  // a NaN-free amax
        const float inv = 1.0f / spec::f32_from_e4m3(sf_code);
        for (int64_t k = 0; k < 8; ++k) {
          float q0 = tile[2 * k] * inv, q1 = tile[2 * k + 1] * inv;
          if (rules.nvfp4_adds_zero) q0 += 0.0f, q1 += 0.0f;
          entry[8 * t + k] = spec::pack_e2m1_pair(spec::e2m1_from_f32(q0, rules.e2m1), spec::e2m1_from_f32(q1, rules.e2m1));
        }
        entry[nvfp4_scale_byte(t)] = sf_code;
      }
      for (int64_t i = 0; i < kMlaRope; ++i) entry[kMlaLatent / 2 + i] = e4m3(rope[i]);
      return;
    }
  }
}

}  // namespace qcheck::fused_k
