#include "ops/fused_q/oracle/fused_q_oracle.h"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <vector>

#include "numerics/conversions.h"
#include "numerics/float_bits.h"
#include "numerics/quotient.h"
#include "numerics/simd_rows_stream.h"

namespace qcheck {
namespace {

// Element pointer of [token, head, 0] in a strided view.
template <typename T, typename View>
T* row_at(const View& view, int64_t token, int64_t head) {
  return static_cast<T*>(view.data) + token * view.token_stride + head * view.head_stride;
}

// cos/sin of one position: [cos(R/2), sin(R/2)]. An f32 cache row is read
// where it lies; a bf16 row is converted into `scratch` (exact).
const float* cache_row(const CacheView& cache, int64_t position, int64_t rope_dim, const RowOps& ops,
                       float* scratch) {
  const int64_t offset = position * cache.row_stride;
  if (cache.dtype == FloatType::kF32) return static_cast<const float*>(cache.data) + offset;
  ops.f32_from_bf16_row(static_cast<const uint16_t*>(cache.data) + offset, scratch, rope_dim);
  return scratch;
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

// Output bytes reach memory through streaming stores (simd_rows_stream.h)
// where a launch writes whole runs of lines: the ql_nope copy into the
// packed front, and the indexer codes, which are staged (a cache-resident
// buffer of about this size, whole rows) and then streamed out. A plain
// store first reads the line it writes; at 16k tokens that read cost as much
// as the SIMD row work. Both row tables go through this same composition.
constexpr size_t kStageBytes = 32 * 1024;

// Rows of `row_bytes` bytes per stage (at least one).
int64_t rows_per_stage(int64_t row_bytes) { return std::max<int64_t>(1, int64_t(kStageBytes) / row_bytes); }

// Scratch reused across tokens and heads.
struct Scratch {
  std::vector<float> mqa_cos_sin, indexer_cos_sin, input, roped, nope, indexer_scales;
  std::vector<uint8_t> codes_stage;  // indexer code rows [D]
  explicit Scratch(const FusedQArgs& a)
      : mqa_cos_sin(a.rope_dim),
        indexer_cos_sin(a.rope_dim),
        input(a.rope_dim),
        roped(a.rope_dim),
        nope(a.nope_dim),
        indexer_scales(a.indexer_heads),
        codes_stage(size_t(std::min(a.indexer_heads, rows_per_stage(a.index_dim)) * a.index_dim)) {}
};

// e4m3 of in[i] / q_scale under the profile's MQA division rule, NaN
// quotients pinned (spec::e4m3_of_quotient; quantize_row leaves them to the
// host, which only the non-saturating rule sees).
void quantize_by_q_scale(const RowOps& ops, const Profile& p, const float* in, float q_scale, uint8_t* out,
                         int64_t count) {
  if (spec::division_is_ieee(p.mqa_division, q_scale) && p.e4m3_overflow == E4m3Overflow::kSatFinite) {
    ops.quantize_row(in, q_scale, out, size_t(count), p.e4m3_overflow);
    return;
  }
  for (int64_t i = 0; i < count; ++i) {
    out[i] = spec::e4m3_of_quotient(spec::mqa_quotient(in[i], q_scale, p.mqa_division), p.e4m3_overflow);
  }
}

// The MQA heads of token t: q_pe RoPE'd into the back (packed paths) or
// into q_pe_out, and on the packed paths ql_nope into the front.
void run_mqa_token(const FusedQArgs& a, const Profile& p, const RowOps& ops, int64_t t,
                   const float* cos_sin, Scratch& s) {
  const int64_t R = a.rope_dim, L = a.nope_dim, H = a.mqa_heads;
  const float* cos = cos_sin;
  const float* sin = cos_sin + R / 2;
  const size_t q_pe_stride = size_t(a.q_pe.head_stride), out_stride = size_t(a.query_out.head_stride);
  switch (a.query_path) {
    case QueryPath::kFp8Packed: {
      const float q_scale = float_from_bits(a.q_scale_bits);
      for (int64_t h = 0; h < H; ++h) {
        uint8_t* out = row_at<uint8_t>(a.query_out, t, h);
        ops.f32_from_bf16_row(row_at<const uint16_t>(a.ql_nope, t, h), s.nope.data(), L);
        quantize_by_q_scale(ops, p, s.nope.data(), q_scale, out, L);
        ops.f32_from_bf16_row(row_at<const uint16_t>(a.q_pe, t, h), s.input.data(), R);
        ops.rope_row(s.input.data(), cos, sin, R, RopeStyle::kInterleaved, p.mqa_fp8_r1, p.mqa_fp8_r2,
                     s.roped.data());
        quantize_by_q_scale(ops, p, s.roped.data(), q_scale, out + L, R);
      }
      break;
    }
    case QueryPath::kBf16Packed:
    case QueryPath::kBf16Separate: {
      const bool packed = a.query_path == QueryPath::kBf16Packed;
      // ql_nope into the packed front with streaming stores. With the exact
      // alias the front already holds ql_nope: the copy is an identity and is
      // skipped, as a kernel may.
      if (packed && !ql_nope_aliases_query_out(a)) {
        store_rows_streaming(row_at<const uint16_t>(a.ql_nope, t, 0),
                             size_t(a.ql_nope.head_stride) * sizeof(uint16_t), row_at<uint16_t>(a.query_out, t, 0),
                             out_stride * sizeof(uint16_t), size_t(L) * sizeof(uint16_t), size_t(H));
      }
      // The RoPE'd q_pe into the packed back, or into q_pe_out.
      ops.rope_bf16_rows(row_at<const uint16_t>(a.q_pe, t, 0), q_pe_stride, cos, sin, R,
                         RopeStyle::kInterleaved, p.mqa_bf16_r1, p.mqa_bf16_r2, p.bf16_nan,
                         row_at<uint16_t>(a.query_out, t, 0) + (packed ? L : 0), out_stride, H);
      break;
    }
  }
}

// The indexer heads of token t: the codes and their scales, then the weights.
void run_indexer_token(const FusedQArgs& a, const Profile& p, const RowOps& ops, int64_t t,
                       const float* cos_sin, Scratch& s) {
  const int64_t R = a.rope_dim, D = a.index_dim, NI = a.indexer_heads;
  float* scales = s.indexer_scales.data();
  // The codes are staged, then streamed out.
  const int64_t stage_rows = rows_per_stage(D);
  for (int64_t h0 = 0; h0 < NI; h0 += stage_rows) {
    const int64_t rows = std::min(stage_rows, NI - h0);
    ops.indexer_rows(row_at<const uint16_t>(a.index_q, t, h0), size_t(a.index_q.head_stride), cos_sin,
                     cos_sin + R / 2, D, R, a.indexer_rope, p, s.codes_stage.data(), size_t(D), scales + h0,
                     size_t(rows));
    store_rows_streaming(s.codes_stage.data(), size_t(D), row_at<uint8_t>(a.index_q_fp8, t, h0),
                         size_t(a.index_q_fp8.head_stride), size_t(D), size_t(rows));
  }
  const float softmax_scale = float_from_bits(a.softmax_scale_bits);
  const float head_scale = float_from_bits(a.head_scale_bits);
  for (int64_t h = 0; h < NI; ++h) {
    const float w = load_weight(a, t, h);
    const float folded = softmax_scale * head_scale;
    float weight = 0.0f;
    switch (p.weights_order) {
      case WeightsOrder::kScaleSoftmaxHead: {
        const float with_softmax = (w * scales[h]) * softmax_scale;
        weight = with_softmax * head_scale;
        break;
      }
      case WeightsOrder::kFoldedScales: weight = (w * scales[h]) * folded; break;
      case WeightsOrder::kFoldedThenScale: weight = (w * folded) * scales[h]; break;
    }
    store_weight(a, t, h, weight, p, ops);
  }
}

}  // namespace

std::string check_oracle_inputs(const FusedQArgs& a) {
  std::string error = validate_fused_q_args(a);
  if (!error.empty()) return error;
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
  std::string error = check_oracle_inputs(a);
  if (!error.empty() || a.num_tokens == 0) return error;
  // A dispatching table is resolved to one target's table once per launch,
  // so that no row pays for the lookup.
  // The SIMD rows cover most profiles; the scalar spec serves the others.
  const RowOps& rows = simd_rows_cover(p) ? resolved(ops) : scalar_row_ops();
  Scratch s(a);
  for (int64_t t = 0; t < a.num_tokens; ++t) {
    const int64_t position = a.positions[t];
    run_mqa_token(a, p, rows, t, cache_row(a.mqa_cache, position, a.rope_dim, rows, s.mqa_cos_sin.data()),
                  s);
    if (!a.has_indexer) continue;
    run_indexer_token(a, p, rows, t,
                      cache_row(a.indexer_cache, position, a.rope_dim, rows, s.indexer_cos_sin.data()), s);
  }
  // The outputs are complete for any thread that reads them next.
  fence_streaming_stores();
  return "";
}

}  // namespace qcheck
