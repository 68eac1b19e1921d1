#include "ops/fused_k/case/fused_k_case.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "numerics/float_bits.h"
#include "ops/fused_k/case/case_launch.h"
#include "ops/fused_k/case/draws.h"

namespace qcheck::fused_k {
namespace {

// Compares field by field through the one list.
class Collect {
 public:
  std::vector<uint64_t> values;
  void integer(const char*, int64_t& v) { values.push_back(static_cast<uint64_t>(v)); }
  template <typename Enum>
  void enumeration(const char*, Enum& v, unsigned) {
    values.push_back(static_cast<uint64_t>(v));
  }
  void boolean(const char*, bool& v) { values.push_back(v); }
  void bits32(const char*, uint32_t& v) { values.push_back(v); }
  void u64(const char*, uint64_t& v) { values.push_back(v); }
};

std::vector<uint64_t> collected(const FusedKCase& c) {
  FusedKCase copy = c;  // the visitor takes a mutable case; collecting does not change it
  Collect collect;
  visit_fused_k_fields(copy, collect);
  return collect.values;
}

// The case's own limits: each field's range, then what the caches must hold.
class Limits {
 public:
  std::string error;
  void integer(const char* name, int64_t& v) {
    const auto range = range_of(name);
    if (error.empty() && (v < range.first || v > range.second)) {
      error = std::string(name) + " = " + std::to_string(v) + " is outside [" + std::to_string(range.first) + ", " +
              std::to_string(range.second) + "]";
    }
  }
  template <typename Enum>
  void enumeration(const char* name, Enum& v, unsigned count) {
    if (error.empty() && static_cast<unsigned>(v) >= count) {
      error = std::string(name) + " = " + std::to_string(static_cast<unsigned>(v)) + " is not one of its " +
              std::to_string(count) + " choices";
    }
  }
  void boolean(const char*, bool&) {}
  void bits32(const char*, uint32_t&) {}
  void u64(const char*, uint64_t&) {}

 private:
  static std::pair<int64_t, int64_t> range_of(const std::string& name) {
    using L = FusedKCaseLimits;
    if (name == "num_tokens") return {0, L::kMaxTokens};
    if (name == "rope_rows") return {1, L::kMaxRopeRows};
    if (name == "skip_percent") return {0, 100};
    if (name == "index_dim") return {1, FusedKLimits::kMaxIndexDim};
    if (name == "index_rope_dim") return {2, FusedKLimits::kMaxIndexDim};
    if (name == "indexer_block_size" || name == "mla_block_size") return {1, FusedKLimits::kMaxBlockSize};
    if (name == "indexer_blocks" || name == "mla_blocks") return {1, L::kMaxBlocks};
    if (name == "q_dim") return {1, FusedKLimits::kMaxQDim};
    if (name == "topk_width") return {1, FusedKLimits::kMaxTopk};
    return {0, L::kMaxPadding};  // the paddings
  }
};

std::string holds_the_tokens(const char* field, int64_t blocks, int64_t block_size, int64_t tokens) {
  if (blocks * block_size >= tokens) return "";
  return std::string(field) + " = " + std::to_string(blocks) + " holds " + std::to_string(blocks * block_size) +
         " slots, fewer than num_tokens = " + std::to_string(tokens) + " (every token a slot of its own)";
}

}  // namespace

bool FusedKCase::operator==(const FusedKCase& o) const { return collected(*this) == collected(o); }

std::string validate_fused_k_case(const FusedKCase& c) {
  FusedKCase copy = c;
  Limits limits;
  visit_fused_k_fields(copy, limits);
  if (!limits.error.empty()) return limits.error;
  if (!c.index_k && !c.kv && !c.q_norm && !c.topk_fill) return "index_k, kv, q_norm and topk_fill are all off";
  if (c.index_k) {
    const std::string e = holds_the_tokens("indexer_blocks", c.indexer_blocks, c.indexer_block_size, c.num_tokens);
    if (!e.empty()) return e;
  }
  if (c.kv) {
    const std::string e = holds_the_tokens("mla_blocks", c.mla_blocks, c.mla_block_size, c.num_tokens);
    if (!e.empty()) return e;
  }
  const CaseLaunch plan = plan_fused_k_launch(c);
  if (plan.arena.size() > FusedKCaseLimits::kMaxArenaBytes) {
    return "the launch's tensors take " + std::to_string(plan.arena.size()) + " bytes, more than " +
           std::to_string(FusedKCaseLimits::kMaxArenaBytes) + " (num_tokens, the dims and the caches' blocks)";
  }
  // The offsets on an aligned base, as a real arena's addresses (validation
  // checks alignment and overlaps, and reads no tensor).
  uint8_t* const base = reinterpret_cast<uint8_t*>(uintptr_t{1} << 40);
  return validate_fused_k_args(rebased(plan.args, base));
}

FusedKCase draw_fused_k_case(uint64_t seed) {
  Draws r(seed);
  FusedKCase c;
  c.seed = seed;
  const int64_t T = r.chance(10) ? r.in(100, 400) : r.pick<int64_t>({0, 1, 2, 3, 5, 8, 16, 17, 31, 64});
  c.num_tokens = T;
  do {
    c.index_k = r.chance(60), c.kv = r.chance(60), c.q_norm = r.chance(40), c.topk_fill = r.chance(30);
  } while (!c.index_k && !c.kv && !c.q_norm && !c.topk_fill);
  c.input_row_padding = r.pick<int64_t>({0, 0, 3, 8});
  c.output_row_padding = r.pick<int64_t>({0, 0, 2, 8});
  c.skip_percent = r.pick<int64_t>({0, 10, 50});
  c.rope_rows = r.in(1, 40);
  c.rope_dtype = r.chance(50) ? FloatType::kF32 : FloatType::kBf16;
  c.rope_row_padding = r.pick<int64_t>({0, 0, 1, 6});
  const auto eps = [&]() { return bits_of(r.pick<float>({1e-6f, 1e-6f, 1e-5f, 0.0f, 1e-30f})); };
  const auto dtype = [&]() { return r.chance(50) ? FloatType::kF32 : FloatType::kBf16; };
  const auto blocks_for = [&](int64_t block_size, int64_t spare) {
    return std::max<int64_t>(1, (T + block_size - 1) / block_size + r.in(0, spare));
  };
  if (c.index_k) {
    const bool shuffled = r.chance(50);
    int64_t dim = c.kv ? r.in(64, 512) : r.in(2, 512);
    if (r.chance(50)) dim = r.pick<int64_t>({64, 128, 128, 256, 512});
    if (shuffled) dim = (dim + 15) / 16 * 16;
    c.index_dim = dim;
    c.index_rope_dim = c.kv ? 64 : std::min<int64_t>(dim / 2 * 2, 2 * r.in(1, 64));
    c.index_rope = r.chance(50) ? RopeStyle::kNeox : RopeStyle::kInterleaved;
    c.ln_weight_dtype = dtype();
    c.ln_bias_dtype = dtype();
    c.ln_eps = eps();
    c.indexer_layout = shuffled ? IndexerKLayout::kShuffled : IndexerKLayout::kFlat;
    c.indexer_scale = r.chance(50) ? IndexerKScale::kF32 : IndexerKScale::kUe8m0x4;
    c.index_fp8 = r.chance(25) ? IndexKFp8::kFnuz : IndexKFp8::kOcp;
    c.indexer_block_size = shuffled ? r.pick<int64_t>({16, 64, 128, 256}) : r.pick<int64_t>({1, 2, 16, 64, 128, 256});
    c.indexer_blocks = blocks_for(c.indexer_block_size, 2);
    c.indexer_block_padding = r.pick<int64_t>({0, 0, 4, 13});
    c.index_slots = r.chance(30);
    c.index_k_out = r.chance(60);
  }
  if (c.kv) {
    c.kv_weight_dtype = dtype();
    c.kv_eps = eps();
    c.mla_format = static_cast<MlaCacheFormat>(r.below(4));
    c.k_scale = bits_of(r.pick<float>({1.0f, 0.37f, 0.0625f, 3.0f, 1e-3f}));
    c.mla_block_size = r.pick<int64_t>({1, 2, 16, 64});
    c.mla_blocks = blocks_for(c.mla_block_size, 1);
    c.mla_entry_padding = r.pick<int64_t>({0, 0, 4, 16});
    c.mla_block_padding = r.pick<int64_t>({0, 0, 4, 64});
    c.kv_out = r.chance(60);
    c.kpe_out = r.chance(60);
  }
  if (c.q_norm) {
    c.q_dim = r.chance(10) ? r.in(1, 8192) : r.pick<int64_t>({1, 7, 32, 100, 512, 1536, 1536, 2048});
    c.q_weight_dtype = dtype();
    c.q_eps = eps();
  }
  if (c.topk_fill) {
    c.topk_width = r.pick<int64_t>({1, 31, 2048, 2048});
    c.topk_row_padding = r.pick<int64_t>({0, 0, 5});
  }
  return c;
}

std::string describe(const FusedKCase& c) {
  std::string s = "T=" + std::to_string(c.num_tokens);
  if (c.index_k) {
    s += " index_k(D=" + std::to_string(c.index_dim) + " R=" + std::to_string(c.index_rope_dim) + " " +
         name_of(c.index_rope) + " " + name_of(c.indexer_layout) + " " + name_of(c.indexer_scale) + " " +
         name_of(c.index_fp8) +
         " bs=" + std::to_string(c.indexer_block_size) + ")";
  }
  if (c.kv) s += std::string(" kv(") + name_of(c.mla_format) + " bs=" + std::to_string(c.mla_block_size) + ")";
  if (c.q_norm) s += " q(Q=" + std::to_string(c.q_dim) + ")";
  if (c.topk_fill) s += " topk(K=" + std::to_string(c.topk_width) + ")";
  return s + " seed " + std::to_string(c.seed);
}

std::vector<FusedKCase> fused_k_seed_cases() {
  std::vector<FusedKCase> cases = {FusedKCase{}};
  std::set<std::vector<int>> seen;
  for (uint64_t seed = 1; seed <= 20000; ++seed) {
    const FusedKCase c = draw_fused_k_case(seed);
    const std::vector<int> key = {c.index_k, c.kv, c.q_norm, c.topk_fill,
                                  c.kv ? static_cast<int>(c.mla_format) : -1,
                                  c.index_k ? static_cast<int>(c.indexer_layout) : -1,
                                  c.index_k ? static_cast<int>(c.indexer_scale) : -1,
                                  c.index_k ? static_cast<int>(c.index_fp8) : -1};
    if (seen.count(key) || plan_fused_k_launch(c).arena.size() > (int64_t(8) << 20)) continue;
    seen.insert(key);
    cases.push_back(c);
  }
  return cases;
}

}  // namespace qcheck::fused_k
