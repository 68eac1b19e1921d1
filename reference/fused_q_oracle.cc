#include "reference/fused_q_oracle.h"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <vector>

#include "reference/conversions.h"
#include "reference/float_bits.h"
#include "reference/ue8m0.h"

namespace qcheck {
namespace {

// Element pointer of [token, head, 0] in a strided view.
template <typename T, typename View>
T* row_at(const View& view, int64_t token, int64_t head) {
  return static_cast<T*>(view.data) + token * view.token_stride + head * view.head_stride;
}

// One row of a cos/sin cache, converted to f32: cos in [0, R/2), sin after.
void load_cache_row(const CacheView& cache, int64_t position, int64_t rope_dim,
                    const RowOps& ops, float* out) {
  const int64_t offset = position * cache.row_stride;
  if (cache.dtype == FloatType::kF32) {
    std::memcpy(out, static_cast<const float*>(cache.data) + offset, rope_dim * sizeof(float));
  } else {
    ops.f32_from_bf16_row(static_cast<const uint16_t*>(cache.data) + offset, out, rope_dim);
  }
}

float load_weight(const FusedQArgs& a, int64_t token, int64_t head) {
  const int64_t offset = token * a.index_weights.token_stride + head * a.index_weights.head_stride;
  if (a.index_weights_dtype == FloatType::kF32) {
    return static_cast<const float*>(a.index_weights.data)[offset];
  }
  return float_from_bits(uint32_t(static_cast<const uint16_t*>(a.index_weights.data)[offset]) << 16);
}

void store_weight(const FusedQArgs& a, int64_t token, int64_t head, float weight,
                  const Profile& profile, const RowOps& ops) {
  const int64_t offset =
      token * a.index_weights_out.token_stride + head * a.index_weights_out.head_stride;
  if (a.index_weights_out_dtype == FloatType::kF32) {
    static_cast<float*>(a.index_weights_out.data)[offset] = spec::f32_stored(weight, profile.f32_nan);
  } else {
    ops.bf16_from_f32_row(&weight, static_cast<uint16_t*>(a.index_weights_out.data) + offset, 1,
                          profile.bf16_nan);
  }
}

// Scratch rows reused across tokens and heads.
struct Scratch {
  std::vector<float> mqa_cos_sin, indexer_cos_sin, input, roped, nope;
  std::vector<uint16_t> bf16_row;
  explicit Scratch(const FusedQArgs& a)
      : mqa_cos_sin(a.rope_dim),
        indexer_cos_sin(a.rope_dim),
        input(std::max(a.index_dim, a.rope_dim)),
        roped(std::max(a.index_dim, a.rope_dim)),
        nope(a.nope_dim),
        bf16_row(std::max(a.index_dim, a.rope_dim)) {}
};

void run_mqa_head(const FusedQArgs& a, const Profile& p, const RowOps& ops, int64_t t, int64_t h,
                  Scratch& s) {
  const int64_t R = a.rope_dim, L = a.nope_dim;
  const float* cos = s.mqa_cos_sin.data();
  const float* sin = cos + R / 2;
  ops.f32_from_bf16_row(row_at<const uint16_t>(a.q_pe, t, h), s.input.data(), R);
  const bool fp8 = a.query_path == QueryPath::kFp8Packed;
  ops.rope_row(s.input.data(), cos, sin, R, RopeStyle::kInterleaved,
               fp8 ? p.mqa_fp8_r1 : p.mqa_bf16_r1, fp8 ? p.mqa_fp8_r2 : p.mqa_bf16_r2,
               s.roped.data());
  switch (a.query_path) {
    case QueryPath::kFp8Packed: {
      uint8_t* out = row_at<uint8_t>(a.query_out, t, h);
      const float q_scale = float_from_bits(a.q_scale_bits);
      ops.f32_from_bf16_row(row_at<const uint16_t>(a.ql_nope, t, h), s.nope.data(), L);
      ops.quantize_row(s.nope.data(), q_scale, out, L, p.e4m3_overflow);
      ops.quantize_row(s.roped.data(), q_scale, out + L, R, p.e4m3_overflow);
      break;
    }
    case QueryPath::kBf16Packed: {
      uint16_t* out = row_at<uint16_t>(a.query_out, t, h);
      // With the exact alias the front already holds ql_nope: the copy is an
      // identity and is skipped, as a kernel may.
      if (!ql_nope_aliases_query_out(a)) {
        std::memcpy(out, row_at<const uint16_t>(a.ql_nope, t, h), L * sizeof(uint16_t));
      }
      ops.bf16_from_f32_row(s.roped.data(), out + L, R, p.bf16_nan);
      break;
    }
    case QueryPath::kBf16Separate:
      ops.bf16_from_f32_row(s.roped.data(), row_at<uint16_t>(a.query_out, t, h), R, p.bf16_nan);
      break;
  }
}

void run_indexer_head(const FusedQArgs& a, const Profile& p, const RowOps& ops, int64_t t,
                      int64_t h, Scratch& s) {
  const int64_t R = a.rope_dim, D = a.index_dim;
  const float* cos = s.indexer_cos_sin.data();
  const float* sin = cos + R / 2;
  float* row = s.roped.data();
  ops.f32_from_bf16_row(row_at<const uint16_t>(a.index_q, t, h), s.input.data(), D);
  // RoPE on the first R dims; dims R..D-1 pass through unchanged.
  ops.rope_row(s.input.data(), cos, sin, R, a.indexer_rope, p.indexer, p.indexer, row);
  std::memcpy(row + R, s.input.data() + R, (D - R) * sizeof(float));
  if (p.indexer_bf16_before_quant) {
    ops.bf16_from_f32_row(row, s.bf16_row.data(), D, p.bf16_nan);
    ops.f32_from_bf16_row(s.bf16_row.data(), row, D);
  }
  const float scale = spec::ue8m0_scale(ops.amax_row(row, D), p.scale_ceiling, p.scale_floor);
  ops.quantize_row(row, scale, row_at<uint8_t>(a.index_q_fp8, t, h), D, p.e4m3_overflow);

  const float softmax_scale = float_from_bits(a.softmax_scale_bits);
  const float head_scale = float_from_bits(a.head_scale_bits);
  const float scaled = load_weight(a, t, h) * scale;
  float weight;
  if (p.weights_order == WeightsOrder::kScaleSoftmaxHead) {
    const float with_softmax = scaled * softmax_scale;
    weight = with_softmax * head_scale;
  } else {
    const float folded = softmax_scale * head_scale;
    weight = scaled * folded;
  }
  store_weight(a, t, h, weight, p, ops);
}

bool is_power_of_two_bits(uint32_t bits) { return (bits & 0x007FFFFFu) == 0; }

}  // namespace

std::string check_oracle_inputs(const FusedQArgs& a, const Profile& p) {
  std::string error = validate_fused_q_args(a);
  if (!error.empty()) return error;
  if (a.query_path == QueryPath::kFp8Packed && p.mqa_division == Division::kDivFullPow2 &&
      !is_power_of_two_bits(a.q_scale_bits)) {
    std::ostringstream s;
    s << "q_scale = 0x" << std::hex << a.q_scale_bits << " is not a power of two: profile "
      << p.name << " models div.full.f32 only where it is exact (power-of-two q_scale)";
    return s.str();
  }
  for (int64_t t = 0; t < a.num_tokens; ++t) {
    const int64_t position = a.positions[t];
    const int64_t rows = a.has_indexer ? std::min(a.mqa_cache.rows, a.indexer_cache.rows)
                                       : a.mqa_cache.rows;
    if (position < 0 || position >= rows) {
      std::ostringstream s;
      s << "positions[" << t << "] = " << position << " is outside [0, " << rows
        << ") of the cos/sin cache";
      return s.str();
    }
  }
  return "";
}

std::string run_fused_q_oracle(const FusedQArgs& a, const Profile& p, const RowOps& ops) {
  std::string error = check_oracle_inputs(a, p);
  if (!error.empty() || a.num_tokens == 0) return error;
  Scratch s(a);
  for (int64_t t = 0; t < a.num_tokens; ++t) {
    const int64_t position = a.positions[t];
    load_cache_row(a.mqa_cache, position, a.rope_dim, ops, s.mqa_cos_sin.data());
    for (int64_t h = 0; h < a.mqa_heads; ++h) run_mqa_head(a, p, ops, t, h, s);
    if (!a.has_indexer) continue;
    load_cache_row(a.indexer_cache, position, a.rope_dim, ops, s.indexer_cos_sin.data());
    for (int64_t h = 0; h < a.indexer_heads; ++h) run_indexer_head(a, p, ops, t, h, s);
  }
  return "";
}

}  // namespace qcheck
