#include "ops/fused_k/oracle/fused_k_oracle.h"

#include <cstring>
#include <vector>

#include "numerics/conversions.h"
#include "numerics/float_bits.h"
#include "ops/fused_k/oracle/indexer_k_cache.h"

namespace qcheck::fused_k {
namespace {

float f32_at(const void* data, FloatType type, int64_t i) {
  if (type == FloatType::kF32) return static_cast<const float*>(data)[i];
  return spec::f32_from_bf16(static_cast<const uint16_t*>(data)[i]);
}

std::vector<float> f32_vector(const VectorIn& v, int64_t width) {
  std::vector<float> out(static_cast<size_t>(width));
  for (int64_t i = 0; i < width; ++i) out[static_cast<size_t>(i)] = f32_at(v.data, v.dtype, i);
  return out;
}

const uint16_t* bf16_row(const RowsIn& rows, int64_t t) {
  return static_cast<const uint16_t*>(rows.data) + t * rows.row_stride;
}

void store_bf16_row(const RowsOut& out, int64_t t, const float* values, int64_t width, Bf16Nan nan) {
  if (out.data == nullptr) return;
  uint16_t* row = static_cast<uint16_t*>(out.data) + t * out.row_stride;
  for (int64_t i = 0; i < width; ++i) row[i] = spec::bf16_from_f32(values[i], nan);
}

float eps_of(uint32_t bits) { return float_from_bits(bits); }

}  // namespace

FusedKRules qcheck_fused_k_rules() {
  spec::NormRules norm;
  norm.reduction.order = ReductionOrder::kBlockedLanes;
  norm.reduction.lanes = 32;
  norm.reduction.squares = SquareStep::kFused;
  norm.divide = spec::WidthDivision::kIeee;
  norm.rsqrt = spec::RsqrtKind::kApprox;
  FusedKRules rules;
  rules.index_k.norm = norm;
  rules.index_k.affine = spec::LayerNormAffine::kFma;
  rules.kv.norm = rules.q.norm = norm;
  rules.kv.weight = rules.q.weight = spec::RmsWeight::kF32;
  rules.mla.fp8_quotient = Quotient::kDivide;
  rules.mla.ds_ceiling = ScaleCeiling::kExactBits;
  rules.mla.ds_quotient = ScaleQuotient::kDivide;
  rules.mla.ds_floor = ScaleFloor::kAmax1e4;
  rules.mla.nvfp4_adds_zero = false;
  rules.mla.e2m1 = E2m1Rounding::kCvtRn;
  rules.bf16_nan = Bf16Nan::k7FFF;
  return rules;
}

std::string fused_k_rules_error(const FusedKArgs& a, const FusedKRules& rules) {
  const auto check = [](const char* role, const spec::NormRules& norm, int64_t width) -> std::string {
    const char* error = spec::norm_rules_error(norm, width);
    return error[0] == '\0' ? "" : std::string(role) + ": " + error;
  };
  std::string error;
  if (a.index_k) error = check("index_k rules", rules.index_k.norm, a.index_dim);
  if (error.empty() && a.kv) error = check("kv rules", rules.kv.norm, kMlaLatent);
  if (error.empty() && a.q_norm) error = check("q rules", rules.q.norm, a.q_dim);
  return error;
}

std::string run_fused_k_oracle(const FusedKArgs& a, const FusedKRules& rules, const NormOps& norms) {
  std::string problem = validate_fused_k_args(a);
  if (problem.empty()) problem = check_fused_k_inputs(a);
  if (problem.empty()) problem = fused_k_rules_error(a, rules);
  if (!problem.empty()) return problem;
  const int64_t half = a.rope_cache.width / 2;
  std::vector<float> cos(static_cast<size_t>(half)), sin(static_cast<size_t>(half));
  std::vector<float> ln_w, ln_b, kv_w, q_w;
  if (a.index_k) ln_w = f32_vector(a.ln_weight, a.index_dim), ln_b = f32_vector(a.ln_bias, a.index_dim);
  if (a.kv) kv_w = f32_vector(a.kv_weight, kMlaLatent);
  if (a.q_norm) q_w = f32_vector(a.q_weight, a.q_dim);
  std::vector<float> rotated(static_cast<size_t>(a.index_dim)), latent(kMlaLatent), rope(kMlaRope);
  std::vector<float> q_row(a.q_norm ? static_cast<size_t>(a.q_dim) : 0);
  std::vector<uint8_t> codes(static_cast<size_t>(a.index_dim)), entry(static_cast<size_t>(mla_entry_bytes(a.mla_format)));
  for (int64_t t = 0; t < a.num_tokens; ++t) {
    if (a.index_k || a.kv) {
      const int64_t row = a.positions[t] * a.rope_cache.row_stride;
      for (int64_t i = 0; i < half; ++i) {
        cos[static_cast<size_t>(i)] = f32_at(a.rope_cache.data, a.rope_cache.dtype, row + i);
        sin[static_cast<size_t>(i)] = f32_at(a.rope_cache.data, a.rope_cache.dtype, row + half + i);
      }
    }
    if (a.index_k) {
      const IndexKShape shape{a.index_dim, a.index_rope_dim, a.index_rope, a.index_fp8};
      const float scale = index_k_row(bf16_row(a.index_k_in, t), ln_w.data(), ln_b.data(), eps_of(a.ln_eps_bits),
                                      cos.data(), sin.data(), shape, rules.index_k, rotated.data(), codes.data(),
                                      norms);
      store_bf16_row(a.index_k_out, t, rotated.data(), a.index_dim, rules.bf16_nan);
      const int64_t slot = (a.index_slot_mapping != nullptr ? a.index_slot_mapping : a.slot_mapping)[t];
      const PagedCache& c = a.indexer_cache;
      write_indexer_k_entry(static_cast<uint8_t*>(c.data), c.block_stride, a.indexer_layout, c.block_size,
                            a.index_dim, slot, codes.data(), scale, a.indexer_scale);
    }
    if (a.kv) {
      kv_latent_row(bf16_row(a.kv_c, t), kv_w.data(), eps_of(a.kv_eps_bits), bf16_row(a.k_pe, t), cos.data(),
                    sin.data(), rules.kv, latent.data(), rope.data(), norms);
      store_bf16_row(a.kv_out, t, latent.data(), kMlaLatent, rules.bf16_nan);
      store_bf16_row(a.kpe_out, t, rope.data(), kMlaRope, rules.bf16_nan);
      const int64_t slot = a.slot_mapping[t];
      if (slot >= 0) {
        const PagedCache& c = a.mla_cache;
        mla_cache_entry(latent.data(), rope.data(), a.mla_format, float_from_bits(a.k_scale_bits), rules.mla,
                        entry.data());
        uint8_t* at = static_cast<uint8_t*>(c.data) + (slot / c.block_size) * c.block_stride +
                      (slot % c.block_size) * c.entry_stride;
        std::memcpy(at, entry.data(), entry.size());
      }
    }
    if (a.q_norm) {
      q_latent_row(bf16_row(a.q_c, t), q_w.data(), a.q_dim, eps_of(a.q_eps_bits), rules.q, q_row.data(), norms);
      store_bf16_row(a.q_c_out, t, q_row.data(), a.q_dim, rules.bf16_nan);
    }
    if (a.topk_fill) {
      int32_t* row = a.topk + t * a.topk_row_stride;
      for (int64_t i = 0; i < a.topk_width; ++i) row[i] = -1;
    }
  }
  return "";
}

}  // namespace qcheck::fused_k
