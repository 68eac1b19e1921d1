// fused_k's launch on the CPU: every role the args turn on, token by token,
// with the rows of index_k_row.h and latent_rows.h and the cache bytes of
// indexer_k_cache.h and mla_cache.h. Host pointers only.
//   role 0: index_k_out[t] = bf16(rotated); the indexer cache entry of
//           index_slot_mapping[t] (slot_mapping[t] when not given), if >= 0
//   role 1: kv_out[t] = bf16(latent), kpe_out[t] = bf16(rope); the MLA cache
//           entry of slot_mapping[t], if >= 0
//   role 2: q_c_out[t] = bf16(RMSNorm(q_c[t]))
//   role 3: topk[t, 0 .. K) = -1
// Every output is written for every token; a cache entry only where its
// slot says. Bytes no rule names (padding, other slots) are left alone.
#pragma once

#include <string>

#include "numerics/profile.h"
#include "ops/fused_k/args/fused_k_args.h"
#include "ops/fused_k/oracle/index_k_row.h"
#include "ops/fused_k/oracle/latent_rows.h"
#include "ops/fused_k/oracle/mla_cache.h"

namespace qcheck::fused_k {

// The conventions of one kernel, role by role.
struct FusedKRules {
  IndexKRules index_k;
  LatentRules kv, q;
  MlaCacheRules mla;
  Bf16Nan bf16_nan = Bf16Nan::k7FFF;  // the bf16 outputs' NaN
};

// The conventions of qcheck's own CUDA kernel (ops/fused_k/kernels): every
// row sum in the blocked-lanes order of 32 lanes with the squares fused, S / n
// by IEEE division, the GPU's rsqrt.approx.f32; RMSNorm's weight in f32,
// LayerNorm's affine an fma, RoPE fused on cos; UE8M0 scales from the exact
// bits of RN(max(amax, 1e-4) / 448) (224 and e4m3fnuz codes, saturating,
// on an FNUZ indexer cache), fp8_ds_mla's tiles too; fp8 codes of
// x / k_scale; nvfp4 tiles cvt-rn without the +0 add.
FusedKRules qcheck_fused_k_rules();

// Why the rules cannot compute the launch's rows ("" when they can): a norm
// width or reduction layout out of range (norm_rules_error), naming the role.
std::string fused_k_rules_error(const FusedKArgs& args, const FusedKRules& rules);

// Validates the args and their inputs (validate_fused_k_args,
// check_fused_k_inputs) and the rules (fused_k_rules_error), then runs the
// launch. "" or the first problem. `norms` computes the row norms: the
// scalar spec, or the Highway rows (simd_norm_ops(), the fuzz target's:
// the same bits, checked over every order in tests/fused_k).
std::string run_fused_k_oracle(const FusedKArgs& args, const FusedKRules& rules,
                               const NormOps& norms = scalar_norm_ops());

}  // namespace qcheck::fused_k
