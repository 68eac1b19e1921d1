#include "tests/gpu_gate/covering_grid.h"

#include <array>
#include <cstdint>
#include <set>
#include <utility>

#include "core/random/prng.h"
#include "ops/fused_q/args/fused_q_args.h"

namespace qcheck {
namespace {

// The discrete factors, each with its number of levels.
enum Factor { kPath, kAlias, kStyle, kMqaCache, kIndexerCache, kWeightsIn, kWeightsOut,
              kIndexer, kLayouts, kFactorCount };
constexpr std::array<int, kFactorCount> kLevels = {3, 2, 2, 2, 2, 2, 2, 2, 3};

using Row = std::array<int, kFactorCount>;

// The exact alias exists only on the bf16 packed path (path level 1).
bool allowed(const Row& r) { return r[kAlias] == 0 || r[kPath] == 1; }

bool pair_possible(int f, int a, int g, int b) {
  Row r{};
  r[f] = a;
  r[g] = b;
  if (f == kAlias || g == kAlias) r[kPath] = (f == kPath ? a : g == kPath ? b : 1);
  return allowed(r);
}

// Greedy pairwise covering: among candidate rows drawn from a fixed-seed
// generator, keep the one covering the most uncovered pairs, until none is left.
std::vector<Row> pairwise_rows() {
  std::set<std::array<int, 4>> uncovered;
  for (int f = 0; f < kFactorCount; ++f)
    for (int g = f + 1; g < kFactorCount; ++g)
      for (int a = 0; a < kLevels[f]; ++a)
        for (int b = 0; b < kLevels[g]; ++b)
          if (pair_possible(f, a, g, b)) uncovered.insert({f, a, g, b});
  uint64_t state = 0x5EEDC0DEull;
  std::vector<Row> rows;
  while (!uncovered.empty()) {
    Row best{};
    size_t best_gain = 0;
    for (int candidate = 0; candidate < 200; ++candidate) {
      Row r;
      for (int f = 0; f < kFactorCount; ++f) r[f] = int(splitmix64_next(state) % kLevels[f]);
      if (!allowed(r)) continue;
      size_t gain = 0;
      for (int f = 0; f < kFactorCount; ++f)
        for (int g = f + 1; g < kFactorCount; ++g) gain += uncovered.count({f, r[f], g, r[g]});
      if (gain > best_gain) best_gain = gain, best = r;
    }
    if (best_gain == 0) continue;
    for (int f = 0; f < kFactorCount; ++f)
      for (int g = f + 1; g < kFactorCount; ++g) uncovered.erase({f, best[f], g, best[g]});
    rows.push_back(best);
  }
  return rows;
}

FloatType float_type(int level) { return level == 0 ? FloatType::kF32 : FloatType::kBf16; }

void apply_layouts(int level, Case& c) {
  if (level == 1) {  // padded rows everywhere, weights with a column stride
    c.q_pe_layout = c.ql_nope_layout = c.index_q_layout = c.weights_layout = Layout::kPaddedRows;
    c.mqa_cache_layout = c.indexer_cache_layout = Layout::kPaddedRows;
    c.query_out_layout = c.index_q_fp8_layout = c.weights_out_layout = Layout::kPaddedRows;
    c.weights_column_stride = 3;
    c.row_padding = 24;
  } else if (level == 2) {  // production: head-major ql_nope, q_pe a view of a wider row
    c.q_pe_layout = Layout::kWideRowView;
    c.ql_nope_layout = Layout::kHeadMajor;
    c.weights_layout = Layout::kPaddedRows;
    c.query_out_layout = Layout::kPaddedRows;
    c.row_padding = 8;
  }
}

}  // namespace

std::vector<Case> gpu_covering_grid(bool small) {
  const std::vector<int64_t> tokens = {1, 2, 15, 16, 17, 31, 33, 4096};
  const std::vector<int64_t> heads = {1, 3, 8, 16, 17, 64, 128};
  const std::vector<int64_t> indexer_heads = {1, 32, 64};
  const std::vector<Row> rows = pairwise_rows();
  // At least as many cases as the longest value list, so every value shows.
  const size_t count = std::max(rows.size(), tokens.size() * 2);
  std::vector<Case> cases;
  for (size_t i = 0; i < count; ++i) {
    const Row& r = rows[i % rows.size()];
    Case c;
    c.num_tokens = tokens[i % tokens.size()];
    c.mqa_heads = heads[i % heads.size()];
    c.indexer_heads = indexer_heads[i % indexer_heads.size()];
    // Keep one case's host tensors well under the 1 GiB cap: the largest T
    // goes with a mid-size H.
    if (c.num_tokens >= 4096 && c.mqa_heads > 16) c.mqa_heads = 16;
    if (small) {
      c.num_tokens = std::min<int64_t>(c.num_tokens, 33);
      c.mqa_heads = std::min<int64_t>(c.mqa_heads, 5);
      c.indexer_heads = std::min<int64_t>(c.indexer_heads, 4);
    }
    c.query_path = static_cast<QueryPath>(r[kPath]);
    c.alias = r[kAlias] ? AliasMode::kExactFront : AliasMode::kNone;
    c.indexer_rope = r[kStyle] ? RopeStyle::kInterleaved : RopeStyle::kNeox;
    c.mqa_cache_dtype = float_type(r[kMqaCache]);
    c.indexer_cache_dtype = float_type(r[kIndexerCache]);
    c.weights_dtype = float_type(r[kWeightsIn]);
    c.weights_out_dtype = float_type(r[kWeightsOut]);
    c.has_indexer = r[kIndexer] == 0;
    apply_layouts(r[kLayouts], c);
    // Under the exact alias ql_nope is query_out's front and takes its strides.
    if (c.alias == AliasMode::kExactFront) c.ql_nope_layout = Layout::kContiguous;
    c.values = static_cast<ValueRecipe>(i % 9);
    c.positions = static_cast<PositionsRecipe>(i % 4);
    c.head_scale_bits = default_head_scale_bits(c.indexer_heads);
    c.softmax_scale_bits = default_softmax_scale_bits(c.index_dim);
    if (c.query_path == QueryPath::kFp8Packed && i % 2 == 1) c.q_scale_bits = 0x3EBD70A4u;  // 0.37f
    c.seed = 1000 + i;
    cases.push_back(c);
  }
  return cases;
}

std::vector<Case> gpu_kernel_path_cases(bool small) {
  struct Shape {
    int64_t T, H, NI, D, R, L;
    QueryPath path;
    bool alias;
    RopeStyle style;
    FloatType cache, weights_in, weights_out;
    int64_t padding, weights_column_stride;
  };
  const Shape shapes[] = {
      // Odd dims and odd padding: no 16-byte alignment, the element paths.
      {19, 3, 1, 48, 6, 24, QueryPath::kFp8Packed, false, RopeStyle::kNeox, FloatType::kBf16,
       FloatType::kBf16, FloatType::kF32, 3, 2},
      // D > 128: the two-pass indexer.
      {20, 2, 5, 256, 32, 64, QueryPath::kBf16Separate, false, RopeStyle::kNeox, FloatType::kF32,
       FloatType::kF32, FloatType::kF32, 0, 1},
      {3, 1, 2, 512, 512, 1024, QueryPath::kBf16Packed, false, RopeStyle::kInterleaved,
       FloatType::kF32, FloatType::kF32, FloatType::kF32, 0, 1},
      // T >= 2048: the blocked kernel's staged configuration.
      {2100, 2, 3, 128, 64, 64, QueryPath::kFp8Packed, false, RopeStyle::kNeox, FloatType::kF32,
       FloatType::kF32, FloatType::kF32, 0, 1},
      {2061, 1, 2, 128, 64, 32, QueryPath::kBf16Packed, true, RopeStyle::kInterleaved,
       FloatType::kBf16, FloatType::kBf16, FloatType::kBf16, 0, 1},
  };
  std::vector<Case> cases;
  uint64_t seed = 5000;
  for (const Shape& s : shapes) {
    if (small && s.T > 64) continue;
    Case c;
    c.num_tokens = s.T;
    c.mqa_heads = s.H;
    c.indexer_heads = s.NI;
    c.index_dim = s.D;
    c.rope_dim = s.R;
    c.nope_dim = s.L;
    c.query_path = s.path;
    c.alias = s.alias ? AliasMode::kExactFront : AliasMode::kNone;
    c.indexer_rope = s.style;
    c.mqa_cache_dtype = c.indexer_cache_dtype = s.cache;
    c.weights_dtype = s.weights_in;
    c.weights_out_dtype = s.weights_out;
    if (s.padding > 0) {
      apply_layouts(1, c);
      c.row_padding = s.padding;
    }
    c.weights_column_stride = s.weights_column_stride;
    c.values = ValueRecipe::kMixed;
    c.head_scale_bits = default_head_scale_bits(c.indexer_heads);
    c.softmax_scale_bits = default_softmax_scale_bits(c.index_dim);
    c.seed = seed++;
    cases.push_back(c);
  }
  return cases;
}

std::vector<Case> gpu_token_limit_cases() {
  std::vector<Case> cases;
  for (int64_t tokens : {int64_t(65537), (int64_t(1) << 20) + 3}) {
    for (QueryPath path : {QueryPath::kBf16Separate, QueryPath::kFp8Packed}) {
      Case c;
      c.num_tokens = tokens;
      c.mqa_heads = 1;
      c.indexer_heads = 1;
      c.index_dim = 64;
      c.nope_dim = 64;
      c.query_path = path;
      c.values = ValueRecipe::kMixed;
      c.positions = PositionsRecipe::kRandom;
      c.head_scale_bits = default_head_scale_bits(1);
      c.softmax_scale_bits = default_softmax_scale_bits(64);
      c.seed = uint64_t(tokens) + static_cast<uint64_t>(path);
      cases.push_back(c);
    }
  }
  return cases;
}

}  // namespace qcheck
