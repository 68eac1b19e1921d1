#include "ops/fused_k/cpu_model/fused_k_cpu_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>
#include <vector>

#include "numerics/conversions.h"
#include "numerics/device/e4m3fnuz_via_ocp.h"
#include "numerics/e2m1.h"
#include "numerics/float_bits.h"
#include "numerics/rsqrt_approx.h"
#include "numerics/ue8m0.h"

namespace qcheck::fused_k {
namespace {

using namespace planted;  // the catalogue's Bug names

constexpr int kLanes = 32;
using Lanes = std::array<float, kLanes>;

// The kernel's butterfly: at each offset 16 .. 1 lane l takes v[l] + v[l ^ offset].
float warp_sum(Lanes v) {
  for (int offset = kLanes / 2; offset >= 1; offset /= 2) {
    Lanes next;
    for (int l = 0; l < kLanes; ++l) next[l] = v[l] + v[l ^ offset];
    v = next;
  }
  return v[0];
}

float value_at(const void* data, FloatType type, int64_t i) {
  if (type == FloatType::kF32) return static_cast<const float*>(data)[i];
  return spec::f32_from_bf16(static_cast<const uint16_t*>(data)[i]);
}

float value_as_bf16(const void* data, FloatType type, int64_t i) {
  if (type == FloatType::kF32) {
    return spec::f32_from_bf16(static_cast<uint16_t>(bits_of(static_cast<const float*>(data)[i]) >> 16));
  }
  return value_at(data, type, i);
}

uint16_t bf16(float v) { return spec::bf16_from_f32(v, Bf16Nan::k7FFF); }

template <int B>
uint8_t e4m3(float v) {
  if constexpr (B == kNoSaturation) {
    if (std::fabs(v) >= 464.0f && !std::isnan(v)) return 0x7F;
  }
  return spec::e4m3_from_f32(v, E4m3Overflow::kSatFinite);
}

float rsqrt_approx(float v) { return spec::rsqrt_approx(v, /*ftz=*/false); }

template <int B>
float norm_rsqrt(float mean, uint32_t eps_bits) {
  if constexpr (B == kEpsAfterRsqrt) return rsqrt_approx(mean) + float_from_bits(eps_bits);
  return rsqrt_approx(mean + float_from_bits(eps_bits));
}

template <int B>
float rms_output(float x, float r, float w) {
  if constexpr (B == kRmsBf16BeforeWeight) return spec::f32_from_bf16(bf16(x * r)) * w;
  return (x * r) * w;
}

float rope_term(float a, float c, float b, float s) { return std::fma(a, c, b * s); }

float ue8m0_scale(float amax) { return spec::ue8m0_scale(amax, ScaleCeiling::kExactBits, ScaleFloor::kAmax1e4); }

// An index-K code as the kernel writes it: OCP e4m3, or on an FNUZ cache
// e4m3fnuz through the OCP encoder (numerics/device/e4m3fnuz_via_ocp.h).
template <int B>
uint8_t index_code(float q, bool fnuz) {
  if (!fnuz || B == kOcpBytesOnFnuz) return e4m3<B>(q);
  return device::e4m3fnuz_via_ocp(q, [](float v) { return spec::e4m3_from_f32(v, E4m3Overflow::kSatFinite); });
}

// 1 / a UE8M0 scale (a power of two, or +Inf -> +0), exactly.
float reciprocal_of_scale(float scale) {
  const uint32_t bits = bits_of(scale);
  return bits == 0x7F800000u ? 0.0f : float_from_bits((254u << 23) - bits);
}

template <int B>
int64_t byte_offset(int64_t offset) {
  if constexpr (B == kOffset32) return static_cast<int32_t>(static_cast<uint32_t>(offset));
  return offset;
}

void store_u32(uint8_t* at, uint32_t word) {
  for (int i = 0; i < 4; ++i) at[i] = static_cast<uint8_t>(word >> (8 * i));
}

const uint16_t* bf16_row(const RowsIn& rows, int64_t t) {
  return static_cast<const uint16_t*>(rows.data) + t * rows.row_stride;
}

void store_bf16(const RowsOut& out, int64_t t, int64_t i, float value) {
  if (out.data != nullptr) static_cast<uint16_t*>(out.data)[t * out.row_stride + i] = bf16(value);
}

template <int B>
void index_k_task(const FusedKArgs& a, int64_t t) {
  const int64_t dim = a.index_dim, chunk = (dim + kLanes - 1) / kLanes;
  const auto in_lane = [&](int l, int64_t i) { return i >= l * chunk && i < (l + 1) * chunk && i < dim; };
  const uint16_t* row = bf16_row(a.index_k_in, t);
  std::vector<float> x(static_cast<size_t>(dim)), shared(static_cast<size_t>(dim));
  Lanes sums{}, squares{}, raw{};
  for (int64_t i = 0; i < dim; ++i) x[static_cast<size_t>(i)] = spec::f32_from_bf16(row[i]);
  for (int l = 0; l < kLanes; ++l) {
    for (int64_t i = l * chunk; in_lane(l, i); ++i) sums[l] = sums[l] + x[static_cast<size_t>(i)];
  }
  const float mean = warp_sum(sums) / static_cast<float>(dim);
  for (int l = 0; l < kLanes; ++l) {
    for (int64_t i = l * chunk; in_lane(l, i); ++i) {
      float& v = x[static_cast<size_t>(i)];
      raw[l] = std::fma(v, v, raw[l]);
      v = v - mean;
      squares[l] = std::fma(v, v, squares[l]);
    }
  }
  float variance = warp_sum(squares) / static_cast<float>(dim);
  if constexpr (B == kVarianceUncentred) variance = warp_sum(raw) / static_cast<float>(dim) - mean * mean;
  const float rstd = norm_rsqrt<B>(variance, a.ln_eps_bits);
  for (int64_t i = 0; i < dim; ++i) {
    const float p = x[static_cast<size_t>(i)] * rstd;
    const float w = B == kLnWeightReadAsBf16 ? value_as_bf16(a.ln_weight.data, a.ln_weight.dtype, i)
                                             : value_at(a.ln_weight.data, a.ln_weight.dtype, i);
    const float bias = B == kLnBiasReadAsBf16 ? value_as_bf16(a.ln_bias.data, a.ln_bias.dtype, i)
                                              : value_at(a.ln_bias.data, a.ln_bias.dtype, i);
    shared[static_cast<size_t>(i)] = std::fma(p, w, bias);
  }
  const int64_t rope_dim = a.index_rope_dim, half = rope_dim / 2;
  const RopeCache& rc = a.rope_cache;
  const int64_t rope_row = a.positions[t] * rc.row_stride;
  const bool interleaved = (a.index_rope == RopeStyle::kInterleaved) != (B == kIndexRopeStyleSwapped);
  // Each element's rotation stands alone, so the lanes' order does not matter here.
  std::vector<float> rotated(static_cast<size_t>(dim));
  for (int64_t i = 0; i < dim; ++i) {
    float r = shared[static_cast<size_t>(i)];
    if (i < rope_dim) {
      int64_t partner, index;
      bool minus;
      if (interleaved) {
        partner = i ^ 1, index = i / 2, minus = (i % 2) == 0;
      } else {
        minus = i < half, partner = minus ? i + half : i - half, index = minus ? i : i - half;
      }
      const float b = minus ? -shared[static_cast<size_t>(partner)] : shared[static_cast<size_t>(partner)];
      r = rope_term(r, value_at(rc.data, rc.dtype, rope_row + index), b,
                    value_at(rc.data, rc.dtype, rope_row + half + index));
    }
    rotated[static_cast<size_t>(i)] = r;
    store_bf16(a.index_k_out, t, i, r);
  }
  // The kernel's lane maxima and their shuffle give the row's amax, NaN skipped (a maximum has no order:
  // kTwinMaxOtherOrder changes nothing here).
  const float row_amax = spec::row_amax(rotated.data(), static_cast<size_t>(dim));
  // FNUZ divides by 224: RN(amax / 224) is exactly 2 RN(amax / 448) (amax >= 1e-4, no subnormal quotient),
  // so its power-of-two ceiling is twice OCP's.
  const bool fnuz = a.index_fp8 == IndexKFp8::kFnuz;
  float scale = ue8m0_scale(row_amax);
  if constexpr (B == kTwinScaleTimesReciprocal448) {
    const uint32_t bits = bits_of(std::max(row_amax, 1e-4f) * float_from_bits(0x3B124925u));  // RN(1/448)
    scale = float_from_bits(bits >= 0x7F800000u ? bits : (bits + 0x7FFFFFu) & 0x7F800000u);
  }
  if (fnuz && B != kFnuzScaleOf448) scale *= 2.0f;
  if constexpr (B == kUe8m0Skipped) scale = std::max(row_amax, 1e-4f) / 448.0f;
  if constexpr (B == kNoAmaxFloor) {
    if (row_amax == 0.0f) scale = 0.0f;
  }
  const float reciprocal = reciprocal_of_scale(scale);
  const int64_t* slots = a.index_slot_mapping != nullptr ? a.index_slot_mapping : a.slot_mapping;
  if constexpr (B == kIndexSlotsIgnored) slots = a.slot_mapping != nullptr ? a.slot_mapping : slots;
  const int64_t slot = slots[t];
  if (slot < 0) return;
  const PagedCache& c = a.indexer_cache;
  const int64_t block_stride = B == kDenseBlockStride ? c.block_size * (dim + 4) : c.block_stride;
  uint8_t* block = static_cast<uint8_t*>(c.data) + byte_offset<B>((slot / c.block_size) * block_stride);
  const int64_t token = slot % c.block_size;
  bool shuffled = a.indexer_layout == IndexerKLayout::kShuffled;
  if constexpr (B == kShuffledWrittenFlat) shuffled = shuffled && c.block_size > 64;
  for (int64_t i = 0; i < dim; ++i) {
    const int64_t byte = !shuffled ? token * dim + i
                                   : (token / 16) * 16 * dim + (i / 16) * 256 + (token % 16) * 16 + i % 16;
    const float v = rotated[static_cast<size_t>(i)];
    float quotient = v * reciprocal;
    if constexpr (B == kUe8m0Skipped || B == kTwinDivideByPow2) quotient = v / scale;
    if constexpr (B == kScaleRoundedAfterCodes) quotient = v / (std::max(row_amax, 1e-4f) / 448.0f);
    if constexpr (B == kNoAmaxFloor) {
      if (scale == 0.0f) quotient = v / scale;
    }
    block[byte] = index_code<B>(quotient, fnuz);
  }
  const uint32_t bits = bits_of(scale);
  uint32_t word = a.indexer_scale == IndexerKScale::kF32 ? bits : ((bits >> 23) & 0xFFu) * 0x01010101u;
  if constexpr (B == kUe8m0WordOneByte) {
    if (a.indexer_scale == IndexerKScale::kUe8m0x4) word = (bits >> 23) & 0xFFu;
  }
  const int64_t at = B == kScaleInterleavedPerToken ? token * (dim + 4) + dim : c.block_size * dim + 4 * token;
  store_u32(block + at, word);
}

// The MLA entry from the 512 latent values and the 64 rotated k_pe values.
template <int B>
void write_mla_entry(const FusedKArgs& a, uint8_t* entry, const float* latent, const float* rope) {
  switch (a.mla_format) {
    case MlaCacheFormat::kBf16:
      for (int64_t i = 0; i < kMlaLatent + kMlaRope; ++i) {
        const uint16_t code = bf16(i < kMlaLatent ? latent[i] : rope[i - kMlaLatent]);
        entry[2 * i] = static_cast<uint8_t>(code), entry[2 * i + 1] = static_cast<uint8_t>(code >> 8);
      }
      return;
    case MlaCacheFormat::kFp8: {
      const float k_scale = float_from_bits(a.k_scale_bits);
      for (int64_t i = 0; i < kMlaLatent + kMlaRope; ++i) {
        const float x = i < kMlaLatent ? latent[i] : rope[i - kMlaLatent];
        entry[i] = e4m3<B>(B == kKScaleMultiplied ? x * k_scale : x / k_scale);
      }
      return;
    }
    case MlaCacheFormat::kFp8DsMla:
      for (int64_t tile = 0; tile < 4; ++tile) {
        const float* x = latent + 128 * tile;
        const float amax = spec::row_amax(x, B == kDsTileOf64 ? 64 : 128);
        const float scale = ue8m0_scale(amax), reciprocal = reciprocal_of_scale(scale);
        for (int64_t i = 0; i < 128; ++i) entry[128 * tile + i] = e4m3<B>(B == kTwinDivideByPow2 ? x[i] / scale : x[i] * reciprocal);
        store_u32(entry + kMlaLatent + 4 * tile, bits_of(scale));
      }
      for (int64_t i = 0; i < kMlaRope; ++i) {
        const uint16_t code = bf16(rope[i]);
        entry[kMlaLatent + 16 + 2 * i] = static_cast<uint8_t>(code), entry[kMlaLatent + 17 + 2 * i] = static_cast<uint8_t>(code >> 8);
      }
      return;
    case MlaCacheFormat::kNvfp4DsMla:
      for (int64_t tile = 0; tile < kMlaLatent / 16; ++tile) {
        const float* x = latent + 16 * tile;
        const float amax = spec::row_amax(x, 16);
        const uint8_t scale_code = e4m3<B>(std::max(amax * float_from_bits(0x3E2AAAABu), 0.001953125f));  // RN(1/6)
        const float inverse = 1.0f / spec::f32_from_e4m3(scale_code);
        for (int64_t k = 0; k < 8; ++k) {
          const uint8_t even = spec::e2m1_from_f32(x[2 * k] * inverse, E2m1Rounding::kCvtRn);
          const uint8_t odd = spec::e2m1_from_f32(x[2 * k + 1] * inverse, E2m1Rounding::kCvtRn);
          entry[8 * tile + k] = B == kNvfp4NibblesSwapped ? spec::pack_e2m1_pair(odd, even) : spec::pack_e2m1_pair(even, odd);
        }
        entry[B == kNvfp4ScalesUnpermuted ? 320 + tile : 320 + 8 * (tile % 4) + tile / 4] = scale_code;
      }
      for (int64_t i = 0; i < kMlaRope; ++i) entry[kMlaLatent / 2 + i] = e4m3<B>(rope[i]);
      return;
  }
}

template <int B>
void kv_task(const FusedKArgs& a, int64_t t) {
  const uint16_t* row = bf16_row(a.kv_c, t);
  std::array<float, kMlaLatent> latent;
  Lanes squares{};
  for (int64_t i = 0; i < kMlaLatent; ++i) {
    latent[static_cast<size_t>(i)] = spec::f32_from_bf16(row[i]);
    float& s = squares[static_cast<size_t>(i / 16)];
    s = std::fma(latent[static_cast<size_t>(i)], latent[static_cast<size_t>(i)], s);
  }
  const float r = norm_rsqrt<B>(warp_sum(squares) / static_cast<float>(kMlaLatent), a.kv_eps_bits);
  for (int64_t i = 0; i < kMlaLatent; ++i) {
    float& v = latent[static_cast<size_t>(i)];
    v = rms_output<B>(v, r, value_at(a.kv_weight.data, a.kv_weight.dtype, i));
    store_bf16(a.kv_out, t, i, v);
  }
  const uint16_t* pe = bf16_row(a.k_pe, t);
  const RopeCache& rc = a.rope_cache;
  const int64_t rope_row = a.positions[t] * rc.row_stride;
  std::array<float, kMlaRope> rope;
  for (int64_t p = 0; p < kMlaRope / 2; ++p) {
    const float x0 = spec::f32_from_bf16(pe[2 * p]), x1 = spec::f32_from_bf16(pe[2 * p + 1]);
    const float c = value_at(rc.data, rc.dtype, rope_row + p), s = value_at(rc.data, rc.dtype, rope_row + 32 + p);
    rope[static_cast<size_t>(2 * p)] = B == kKpeNotRotated ? x0 : rope_term(x0, c, -x1, s);
    rope[static_cast<size_t>(2 * p + 1)] = B == kKpeNotRotated ? x1 : rope_term(x1, c, x0, s);
    store_bf16(a.kpe_out, t, 2 * p, rope[static_cast<size_t>(2 * p)]);
    store_bf16(a.kpe_out, t, 2 * p + 1, rope[static_cast<size_t>(2 * p + 1)]);
  }
  const int64_t slot = a.slot_mapping[t];
  if (slot < 0 && B != kSlotMinusOneWritten) return;
  const PagedCache& cache = a.mla_cache;
  uint8_t* entry = static_cast<uint8_t*>(cache.data) + byte_offset<B>((slot / cache.block_size) * cache.block_stride +
                                                                      (slot % cache.block_size) * cache.entry_stride);
  write_mla_entry<B>(a, entry, latent.data(), rope.data());
}

template <int B>
void q_norm_task(const FusedKArgs& a, int64_t t) {
  const int64_t width = a.q_dim, chunk = B == kQTailDropped ? width / kLanes : (width + kLanes - 1) / kLanes;
  const uint16_t* row = bf16_row(a.q_c, t);
  Lanes squares{};
  for (int l = 0; l < kLanes; ++l) {
    for (int64_t i = l * chunk; i < (l + 1) * chunk && i < width; ++i) {
      const float x = spec::f32_from_bf16(row[i]);
      squares[l] = std::fma(x, x, squares[l]);
    }
  }
  const float r = norm_rsqrt<B>(warp_sum(squares) / static_cast<float>(width), a.q_eps_bits);
  for (int64_t i = 0; i < kLanes * chunk && i < width; ++i) {
    store_bf16(a.q_c_out, t, i, rms_output<B>(spec::f32_from_bf16(row[i]), r, value_at(a.q_weight.data, a.q_weight.dtype, i)));
  }
}

template <int B>
void topk_task(const FusedKArgs& a, int64_t t) {
  int32_t* row = a.topk + t * (B == kTopkWidthAsStride ? a.topk_width : a.topk_row_stride);
  for (int64_t i = 0; i < a.topk_width; ++i) row[i] = -1;
}

template <int B>
void run(const FusedKArgs& a) {
  for (int64_t t = 0; t < a.num_tokens; ++t) {
    if (a.index_k) index_k_task<B>(a, t);
    if (a.kv) kv_task<B>(a, t);
    if (a.q_norm) q_norm_task<B>(a, t);
    if (a.topk_fill) topk_task<B>(a, t);
  }
}

using Model = void (*)(const FusedKArgs&);

template <int... Bugs>
constexpr std::array<Model, sizeof...(Bugs)> model_table(std::integer_sequence<int, Bugs...>) {
  return {&run<Bugs>...};
}

}  // namespace

std::string run_fused_k_cpu_model(const FusedKArgs& args, planted::Bug bug) {
  const std::string problem = validate_fused_k_args(args);
  if (!problem.empty()) return problem;
  if (bug < kNone || bug >= kCount) return "planted bug " + std::to_string(bug) + " is not in the catalogue";
  static constexpr auto kModels = model_table(std::make_integer_sequence<int, kCount>{});
  kModels[static_cast<size_t>(bug)](args);
  return "";
}

}  // namespace qcheck::fused_k
