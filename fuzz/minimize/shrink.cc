#include "fuzz/minimize/shrink.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "fuzz/buffers/tensors.h"
#include "fuzz/case/case_names.h"

namespace qcheck {
namespace {

std::string arrow(const char* field, int64_t from, int64_t to) {
  return std::string(field) + " " + std::to_string(from) + " -> " + std::to_string(to);
}

// Keeps the default weight scales default when D or NI change (a case whose
// scales were set by hand keeps them).
void set_dims(Case& c, int64_t Case::*field, int64_t value) {
  const bool default_softmax = c.softmax_scale_bits == default_softmax_scale_bits(c.index_dim);
  const bool default_head = c.head_scale_bits == default_head_scale_bits(c.indexer_heads);
  c.*field = value;
  if (default_softmax) c.softmax_scale_bits = default_softmax_scale_bits(c.index_dim);
  if (default_head) c.head_scale_bits = default_head_scale_bits(c.indexer_heads);
  drop_unfit_edits(c);
}

// Smaller values of an integer field, smallest first: the minimum, then
// values halfway there, then one step down (and, for T, the same T % 16 a
// block lower).
std::vector<int64_t> smaller_values(int64_t value, int64_t minimum, int64_t step) {
  std::vector<int64_t> out;
  if (value <= minimum) return out;
  out.push_back(minimum);
  for (int64_t gap = (value - minimum) / 2; gap >= step; gap /= 2) {
    const int64_t v = minimum + (value - minimum - gap) / step * step;
    if (v > minimum && v < value) out.push_back(v);
  }
  if (value - step > minimum) out.push_back(value - step);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void add_integer(std::vector<Simplification>& out, const char* name, int64_t Case::*field, int64_t value,
                 int64_t minimum, int64_t step) {
  for (int64_t v : smaller_values(value, minimum, step)) {
    out.push_back({arrow(name, value, v), [field, v](Case& c) {
                     if (c.*field <= v) return false;
                     set_dims(c, field, v);
                     return true;
                   }});
  }
}

template <typename T>
void add_setting(std::vector<Simplification>& out, std::string step, T Case::*field, T value) {
  out.push_back({std::move(step), [field, value](Case& c) {
                   if (c.*field == value) return false;
                   c.*field = value;
                   drop_unfit_edits(c);
                   return true;
                 }});
}

std::vector<Simplification> token_steps(const Case& c) {
  std::vector<Simplification> out;
  add_integer(out, "T", &Case::num_tokens, c.num_tokens, 1, 1);
  // The same tail a block lower: T % 16 + 16, then T % 16 alone.
  const int64_t tail = c.num_tokens % 16;
  for (int64_t v : {tail + 16, tail}) {
    if (v >= 1 && v < c.num_tokens) {
      out.push_back({arrow("T", c.num_tokens, v), [v](Case& x) {
                       if (x.num_tokens <= v) return false;
                       set_dims(x, &Case::num_tokens, v);
                       return true;
                     }});
    }
  }
  return out;
}

// --- one token or one head, its values carried over as edits ------------------------

// Too many edits would make the case unreadable (and the limit stops them).
constexpr size_t kMaxCarriedEdits = 2048;

// Appends edits that give rows `to` of `id` (one head each, or every head
// when `from_head` is -1) the current values of row `from_row`, head
// `from_head`.
void carry_values(const TensorSet& set, TensorId id, int64_t from_row, int64_t to_row, int64_t from_head,
                  int64_t to_head, std::vector<ValueEdit>& edits) {
  const TensorGeometry* g = set.find(id);
  if (g == nullptr) return;
  const int64_t first = from_head == -1 ? 0 : from_head, last = from_head == -1 ? g->cols : from_head + 1;
  for (int64_t head = first; head < last; ++head) {
    for (int64_t i = 0; i < g->width; ++i) {
      uint64_t bits = 0;
      std::memcpy(&bits, set.element(*g, from_row, head, i), static_cast<size_t>(element_bytes(g->type)));
      edits.push_back({id, to_row, 1, from_head == -1 ? head : to_head, i, 1, bits});
    }
  }
}

void drop_edits_on(Case& c, const std::vector<TensorId>& ids) {
  c.edits.erase(std::remove_if(c.edits.begin(), c.edits.end(),
                               [&](const ValueEdit& e) { return std::find(ids.begin(), ids.end(), e.tensor) != ids.end(); }),
                c.edits.end());
}

// T = 1 with token t's inputs (its position, every head's rows).
std::vector<Simplification> one_token_steps(const Case& c) {
  std::vector<Simplification> out;
  if (c.num_tokens <= 1) return out;
  const auto set = std::make_shared<TensorSet>(build_tensor_set(c, Poison::kA));
  for (int64_t t = 1; t < c.num_tokens; ++t) {
    out.push_back({"T " + std::to_string(c.num_tokens) + " -> 1 with token " + std::to_string(t) + "'s values",
                   [set, t, tokens = c.num_tokens](Case& x) {
                     if (x.num_tokens != tokens) return false;  // made for another case
                     std::vector<ValueEdit> carried;
                     for (TensorId id : {TensorId::kPositions, TensorId::kQPe, TensorId::kQlNope, TensorId::kIndexQ,
                                         TensorId::kIndexWeights}) {
                       carry_values(*set, id, t, 0, -1, 0, carried);
                     }
                     if (carried.size() > kMaxCarriedEdits) return false;
                     drop_edits_on(x, {TensorId::kPositions, TensorId::kQPe, TensorId::kQlNope, TensorId::kIndexQ,
                                       TensorId::kIndexWeights});
                     set_dims(x, &Case::num_tokens, 1);
                     x.edits.insert(x.edits.end(), carried.begin(), carried.end());
                     return true;
                   }});
  }
  return out;
}

// H = 1 with MQA head h's rows, or NI = 1 with indexer head h's rows.
std::vector<Simplification> one_head_steps(const Case& c) {
  std::vector<Simplification> out;
  const auto set = std::make_shared<TensorSet>(build_tensor_set(c, Poison::kA));
  struct Kind {
    const char* name;
    int64_t Case::*heads;
    std::vector<TensorId> tensors;
  };
  static const Kind kinds[] = {{"H", &Case::mqa_heads, {TensorId::kQPe, TensorId::kQlNope}},
                               {"NI", &Case::indexer_heads, {TensorId::kIndexQ, TensorId::kIndexWeights}}};
  for (const Kind& k : kinds) {
    if (k.heads == &Case::indexer_heads && !c.has_indexer) continue;
    for (int64_t h = 1; h < c.*k.heads; ++h) {
      out.push_back({std::string(k.name) + " " + std::to_string(c.*k.heads) + " -> 1 with head " + std::to_string(h) +
                         "'s values",
                     [set, h, &k, heads = c.*k.heads, tokens = c.num_tokens](Case& x) {
                       if (x.*k.heads != heads || x.num_tokens != tokens) return false;
                       std::vector<ValueEdit> carried;
                       for (TensorId id : k.tensors) {
                         for (int64_t t = 0; t < tokens; ++t) carry_values(*set, id, t, t, h, 0, carried);
                       }
                       if (carried.size() > kMaxCarriedEdits) return false;
                       drop_edits_on(x, k.tensors);
                       set_dims(x, k.heads, 1);
                       x.edits.insert(x.edits.end(), carried.begin(), carried.end());
                       return true;
                     }});
    }
  }
  return out;
}

std::vector<Simplification> feature_steps(const Case& c) {
  std::vector<Simplification> out;
  add_setting(out, "indexer off", &Case::has_indexer, false);
  add_setting(out, "alias none", &Case::alias, AliasMode::kNone);
  const std::pair<const char*, Layout Case::*> layouts[] = {
      {"q_pe_layout", &Case::q_pe_layout},           {"ql_nope_layout", &Case::ql_nope_layout},
      {"index_q_layout", &Case::index_q_layout},     {"weights_layout", &Case::weights_layout},
      {"mqa_cache_layout", &Case::mqa_cache_layout}, {"indexer_cache_layout", &Case::indexer_cache_layout},
      {"query_out_layout", &Case::query_out_layout}, {"index_q_fp8_layout", &Case::index_q_fp8_layout},
      {"weights_out_layout", &Case::weights_out_layout}};
  for (const auto& [name, field] : layouts) {
    add_setting(out, std::string(name) + " contiguous", field, Layout::kContiguous);
  }
  add_integer(out, "weights_column_stride", &Case::weights_column_stride, c.weights_column_stride, 1, 1);
  add_integer(out, "row_padding", &Case::row_padding, c.row_padding, 1, 1);
  // Query paths from the simplest: bf16-separate (no ql_nope at all), then
  // bf16-packed (a raw front copy), then fp8-packed; a step only goes down.
  for (QueryPath p : {QueryPath::kBf16Separate, QueryPath::kBf16Packed}) {
    out.push_back({std::string("query_path ") + name_of(p), [p](Case& x) {
                     const auto rank = [](QueryPath q) {
                       return q == QueryPath::kBf16Separate ? 0 : q == QueryPath::kBf16Packed ? 1 : 2;
                     };
                     if (rank(p) >= rank(x.query_path)) return false;
                     x.query_path = p;
                     if (p != QueryPath::kBf16Packed) x.alias = AliasMode::kNone;
                     drop_unfit_edits(x);
                     return true;
                   }});
  }
  const std::pair<const char*, FloatType Case::*> dtypes[] = {{"mqa_cache_dtype", &Case::mqa_cache_dtype},
                                                             {"indexer_cache_dtype", &Case::indexer_cache_dtype},
                                                             {"weights_dtype", &Case::weights_dtype},
                                                             {"weights_out_dtype", &Case::weights_out_dtype}};
  for (const auto& [name, field] : dtypes) add_setting(out, std::string(name) + " f32", field, FloatType::kF32);
  add_setting(out, "values normal", &Case::values, ValueRecipe::kNormal);
  add_setting(out, "positions arange-mod-p", &Case::positions, PositionsRecipe::kArangeModP);
  add_setting(out, "q_scale 1.0", &Case::q_scale_bits, 0x3F800000u);
  add_setting(out, "softmax_scale default", &Case::softmax_scale_bits, default_softmax_scale_bits(c.index_dim));
  add_setting(out, "head_scale default", &Case::head_scale_bits, default_head_scale_bits(c.indexer_heads));
  add_setting(out, "seed 0", &Case::seed, uint64_t(0));
  return out;
}

std::vector<Simplification> dim_steps(const Case& c) {
  std::vector<Simplification> out;
  add_integer(out, "L", &Case::nope_dim, c.nope_dim, 8, 8);
  add_integer(out, "D", &Case::index_dim, c.index_dim, 16, 16);
  add_integer(out, "R", &Case::rope_dim, c.rope_dim, 2, 2);
  add_integer(out, "P", &Case::cache_rows, c.cache_rows, 1, 1);
  return out;
}

}  // namespace

const char* name_of(ShrinkPass pass) {
  switch (pass) {
    case ShrinkPass::kTokens: return "tokens";
    case ShrinkPass::kHeads: return "heads";
    case ShrinkPass::kOneToken: return "one token";
    case ShrinkPass::kOneHead: return "one head";
    case ShrinkPass::kFeatures: return "features";
    case ShrinkPass::kDims: return "dims";
    case ShrinkPass::kZeroTensors: return "zero inputs";
    case ShrinkPass::kZeroRows: return "zero rows";
    case ShrinkPass::kZeroElements: return "zero elements";
    case ShrinkPass::kSimpleValues: return "simple values";
  }
  return "?";
}

std::vector<Simplification> simplifications(const Case& c, ShrinkPass pass) {
  switch (pass) {
    case ShrinkPass::kTokens: return token_steps(c);
    case ShrinkPass::kHeads: {
      std::vector<Simplification> out;
      add_integer(out, "H", &Case::mqa_heads, c.mqa_heads, 1, 1);
      add_integer(out, "NI", &Case::indexer_heads, c.indexer_heads, 1, 1);
      return out;
    }
    case ShrinkPass::kOneToken: return one_token_steps(c);
    case ShrinkPass::kOneHead: return one_head_steps(c);
    case ShrinkPass::kFeatures: return feature_steps(c);
    case ShrinkPass::kDims: return dim_steps(c);
    case ShrinkPass::kZeroTensors:
    case ShrinkPass::kZeroRows:
    case ShrinkPass::kZeroElements:
    case ShrinkPass::kSimpleValues: return value_simplifications(c, pass);
  }
  return {};
}

std::vector<Simplification> field_alternatives(const Case& c) {
  std::vector<Simplification> out;
  const auto change = [&](const char* field, int64_t Case::*member, int64_t to) {
    out.push_back({arrow(field, c.*member, to), [member, to](Case& x) {
                     set_dims(x, member, to);
                     return true;
                   }});
  };
  change("T", &Case::num_tokens, c.num_tokens + 1);
  if (c.num_tokens > 1) change("T", &Case::num_tokens, c.num_tokens - 1);
  change("H", &Case::mqa_heads, c.mqa_heads + 1);
  change("NI", &Case::indexer_heads, c.indexer_heads + 1);
  change("D", &Case::index_dim, c.index_dim + 16);
  if (c.rope_dim + 2 <= c.index_dim) change("R", &Case::rope_dim, c.rope_dim + 2);
  change("L", &Case::nope_dim, c.nope_dim + 8);
  change("P", &Case::cache_rows, c.cache_rows + 1);
  const auto toggle = [&](std::string step, std::function<void(Case&)> f) {
    out.push_back({std::move(step), [f](Case& x) {
                     f(x);
                     drop_unfit_edits(x);
                     return true;
                   }});
  };
  toggle(std::string("has_indexer ") + (c.has_indexer ? "true -> false" : "false -> true"),
         [](Case& x) { x.has_indexer = !x.has_indexer; });
  for (QueryPath p : {QueryPath::kFp8Packed, QueryPath::kBf16Packed, QueryPath::kBf16Separate}) {
    if (p == c.query_path) continue;
    toggle(std::string("query_path ") + name_of(c.query_path) + " -> " + name_of(p), [p](Case& x) {
      x.query_path = p;
      if (p != QueryPath::kBf16Packed) x.alias = AliasMode::kNone;
    });
  }
  toggle(std::string("indexer_rope ") + name_of(c.indexer_rope) + " -> the other",
         [](Case& x) { x.indexer_rope = x.indexer_rope == RopeStyle::kNeox ? RopeStyle::kInterleaved : RopeStyle::kNeox; });
  toggle("mqa_cache_dtype -> the other", [](Case& x) {
    x.mqa_cache_dtype = x.mqa_cache_dtype == FloatType::kF32 ? FloatType::kBf16 : FloatType::kF32;
  });
  toggle("weights_out_dtype -> the other", [](Case& x) {
    x.weights_out_dtype = x.weights_out_dtype == FloatType::kF32 ? FloatType::kBf16 : FloatType::kF32;
  });
  toggle("query_out_layout -> padded-rows", [](Case& x) { x.query_out_layout = Layout::kPaddedRows; });
  if (c.query_path == QueryPath::kFp8Packed) toggle("q_scale 1 -> 2", [](Case& x) { x.q_scale_bits = 0x40000000u; });
  toggle("seed " + std::to_string(c.seed) + " -> " + std::to_string(c.seed + 1), [](Case& x) { ++x.seed; });
  for (size_t i = 0; i < c.edits.size(); ++i) {
    out.push_back({"edits[" + std::to_string(i) + "] removed", [i](Case& x) {
                     if (i >= x.edits.size()) return false;
                     x.edits.erase(x.edits.begin() + static_cast<std::ptrdiff_t>(i));
                     return true;
                   }});
  }
  return out;
}

void drop_unfit_edits(Case& c) {
  for (size_t i = c.edits.size(); i-- > 0;) {
    if (!validate_edit(c, i).empty()) c.edits.erase(c.edits.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

}  // namespace qcheck
