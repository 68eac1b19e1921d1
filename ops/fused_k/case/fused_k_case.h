// A fused_k case: the shape of one launch (which roles, their dims, dtypes,
// cache formats, layouts, block sizes and paddings) as named fields, plus the
// seed its values come from. A case file and its seed reproduce every byte
// (fused_k_launch.h builds the launch); the op's vocabulary (ops/fused_k/op.h)
// lists the same fields, so the generic binary and JSON forms carry it.
//
// Paddings are what a real launch has and a kernel may get wrong: elements
// after each input or output row (its row stride), bytes after each block of
// a paged cache (its block stride) and after each MLA entry (its entry
// stride), elements after each rope-cache row.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "numerics/types.h"
#include "ops/fused_k/args/fused_k_args.h"

namespace qcheck::fused_k {

struct FusedKCase {
  int64_t num_tokens = 5;
  bool index_k = true;  // the roles (fused_k_args.h): at least one is on
  bool kv = true;
  bool q_norm = true;
  bool topk_fill = true;
  // Shared by index-K and KV.
  int64_t rope_rows = 8;  // P
  FloatType rope_dtype = FloatType::kF32;
  int64_t rope_row_padding = 0;  // elements
  int64_t skip_percent = 10;     // the share of tokens whose slot is -1
  bool slots_at_end = false;     // slots among each cache's last 4 T (a large cache's far end)
  int64_t input_row_padding = 0;   // elements after every input row
  int64_t output_row_padding = 0;  // elements after every output row
  // Role 0, index-K prep.
  int64_t index_dim = 128;      // D
  int64_t index_rope_dim = 64;  // R (64 when kv is on: one rope cache serves both)
  RopeStyle index_rope = RopeStyle::kNeox;
  FloatType ln_weight_dtype = FloatType::kF32;
  FloatType ln_bias_dtype = FloatType::kF32;
  uint32_t ln_eps = 0x358637BDu;  // 1e-6f
  IndexerKLayout indexer_layout = IndexerKLayout::kFlat;
  IndexerKScale indexer_scale = IndexerKScale::kF32;
  IndexKFp8 index_fp8 = IndexKFp8::kOcp;
  int64_t indexer_block_size = 64;
  int64_t indexer_blocks = 1;
  int64_t indexer_block_padding = 0;  // bytes
  bool index_slots = false;           // its own slot mapping (else the MLA one)
  bool index_k_out = true;
  // Role 1, KV latent and the MLA cache.
  FloatType kv_weight_dtype = FloatType::kF32;
  uint32_t kv_eps = 0x358637BDu;
  MlaCacheFormat mla_format = MlaCacheFormat::kBf16;
  uint32_t k_scale = 0x3F800000u;  // fp8 only
  int64_t mla_block_size = 16;
  int64_t mla_blocks = 1;
  int64_t mla_entry_padding = 0;  // bytes (rounded up to the format's alignment)
  int64_t mla_block_padding = 0;  // bytes (rounded up likewise)
  bool kv_out = true;
  bool kpe_out = true;
  // Role 2, Q latent RMSNorm.
  int64_t q_dim = 1536;
  FloatType q_weight_dtype = FloatType::kF32;
  uint32_t q_eps = 0x358637BDu;
  // Role 3, top-k fill.
  int64_t topk_width = 2048;
  int64_t topk_row_padding = 0;
  uint64_t seed = 1;

  bool operator==(const FusedKCase& o) const;
  bool operator!=(const FusedKCase& o) const { return !(*this == o); }
};

// Limits of a case beyond the launch's own (FusedKLimits): what one
// launch's arena on the host may hold.
struct FusedKCaseLimits {
  static constexpr int64_t kMaxTokens = 1 << 17;
  static constexpr int64_t kMaxRopeRows = 1 << 16;
  static constexpr int64_t kMaxPadding = 256;
  static constexpr int64_t kMaxBlocks = int64_t(1) << 24;
  static constexpr int64_t kMaxArenaBytes = int64_t(16) << 30;  // two caches past 4 GiB fit
};

// The one list of a case's fields, in canonical order. A visitor provides
// integer(name, int64_t&), enumeration(name, Enum&, count), boolean(name,
// bool&), bits32(name, uint32_t&), u64(name, uint64_t&); an enumeration's
// choices are name_of(Enum(i)) for i < count.
template <typename Visitor>
void visit_fused_k_fields(FusedKCase& c, Visitor& v) {
  v.integer("num_tokens", c.num_tokens);
  v.boolean("index_k", c.index_k);
  v.boolean("kv", c.kv);
  v.boolean("q_norm", c.q_norm);
  v.boolean("topk_fill", c.topk_fill);
  v.integer("rope_rows", c.rope_rows);
  v.enumeration("rope_dtype", c.rope_dtype, 2);
  v.integer("rope_row_padding", c.rope_row_padding);
  v.integer("skip_percent", c.skip_percent);
  v.boolean("slots_at_end", c.slots_at_end);
  v.integer("input_row_padding", c.input_row_padding);
  v.integer("output_row_padding", c.output_row_padding);
  v.integer("index_dim", c.index_dim);
  v.integer("index_rope_dim", c.index_rope_dim);
  v.enumeration("index_rope", c.index_rope, 2);
  v.enumeration("ln_weight_dtype", c.ln_weight_dtype, 2);
  v.enumeration("ln_bias_dtype", c.ln_bias_dtype, 2);
  v.bits32("ln_eps", c.ln_eps);
  v.enumeration("indexer_layout", c.indexer_layout, 2);
  v.enumeration("indexer_scale", c.indexer_scale, 2);
  v.enumeration("index_fp8", c.index_fp8, 2);
  v.integer("indexer_block_size", c.indexer_block_size);
  v.integer("indexer_blocks", c.indexer_blocks);
  v.integer("indexer_block_padding", c.indexer_block_padding);
  v.boolean("index_slots", c.index_slots);
  v.boolean("index_k_out", c.index_k_out);
  v.enumeration("kv_weight_dtype", c.kv_weight_dtype, 2);
  v.bits32("kv_eps", c.kv_eps);
  v.enumeration("mla_format", c.mla_format, 4);
  v.bits32("k_scale", c.k_scale);
  v.integer("mla_block_size", c.mla_block_size);
  v.integer("mla_blocks", c.mla_blocks);
  v.integer("mla_entry_padding", c.mla_entry_padding);
  v.integer("mla_block_padding", c.mla_block_padding);
  v.boolean("kv_out", c.kv_out);
  v.boolean("kpe_out", c.kpe_out);
  v.integer("q_dim", c.q_dim);
  v.enumeration("q_weight_dtype", c.q_weight_dtype, 2);
  v.bits32("q_eps", c.q_eps);
  v.integer("topk_width", c.topk_width);
  v.integer("topk_row_padding", c.topk_row_padding);
  v.u64("seed", c.seed);
}

// "" when the case makes a launch the oracle takes, else one line naming the
// field and its limit (the case's own limits first, then the launch's:
// validate_fused_k_args on the planned geometry).
std::string validate_fused_k_case(const FusedKCase& c);

// A valid case drawn from `seed` (also the case's seed): every role
// combination, index dims 2 .. 512, both RoPE styles, f32 and bf16 caches and
// weights, flat and shuffled indexer caches with both scale words and both
// FP8 encodings (OCP, FNUZ), the four MLA formats, paddings, block sizes 1 .. 256, slots -1 and separate index
// slots, Q widths up to 8192. xoshiro256** and integer draws only (draws.h): the
// same case on every machine.
FusedKCase draw_fused_k_case(uint64_t seed);

// The shape in one line, for reports.
std::string describe(const FusedKCase& c);

// The seed corpus (corpus/fused_k): the default case, then the first drawn
// case (seeds 1, 2, ...) of each combination of roles, MLA format (with kv)
// and indexer layout, scale word and FP8 encoding (with index_k), among cases whose
// arena is at most 8 MiB, so that every file replays in milliseconds.
std::vector<FusedKCase> fused_k_seed_cases();

}  // namespace qcheck::fused_k
