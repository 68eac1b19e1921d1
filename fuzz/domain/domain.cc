#include "fuzz/domain/domain.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "fuzz/case/case_names.h"
#include "fuzz/case/tensor_plan.h"

namespace qcheck {
namespace {

constexpr const char* kDimNames[kDimCount] = {"num_tokens", "mqa_heads", "indexer_heads", "index_dim",
                                              "rope_dim",   "nope_dim",  "cache_rows"};
constexpr const char* kDimShortNames[kDimCount] = {"T", "H", "NI", "D", "R", "L", "P"};
// The largest value nearest() and friends search up to: CaseLimits::kMaxTokens.
constexpr int64_t kSearchLimit = int64_t(1) << 24;

bool is_power_of_two(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// The first allowed value from v on, in `direction` (+1 up, -1 down),
// inside [1, kSearchLimit]; 0 when there is none. Candidates are the
// listed values, the powers of two or the multiples, as the rule says, so
// the walk is short.
int64_t walk(const DimRule& r, int64_t v, int direction) {
  const int64_t lo = std::max<int64_t>(1, r.min), hi = r.max > 0 ? r.max : kSearchLimit;
  int64_t best = 0;
  auto consider = [&](int64_t x) {
    if (!r.allows(x)) return;
    if (direction > 0 ? x >= v && (best == 0 || x < best) : x <= v && x > best) best = x;
  };
  if (!r.values.empty()) {
    for (int64_t x : r.values) consider(x);
  } else if (r.power_of_two) {
    for (int64_t p = 1; p <= hi; p <<= 1) consider(p);
  } else {
    const int64_t step = std::max<int64_t>(1, r.multiple_of);
    int64_t x = direction > 0 ? std::max(v, lo) : std::min(v, hi);
    x = direction > 0 ? (x + step - 1) / step * step : x / step * step;
    if (x >= lo && x <= hi) consider(x);
  }
  return best;
}

std::string join_values(const std::vector<int64_t>& values) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == values.size() ? " or " : ", ") + std::to_string(values[i]);
  }
  return text;
}

bool in_mask(uint32_t mask, int value) { return (mask >> value & 1u) != 0; }

template <typename Enum>
std::string mask_names(uint32_t mask) {
  std::string text;
  for (unsigned v = 0; v < enum_count<Enum>(); ++v) {
    if (in_mask(mask, static_cast<int>(v))) text += (text.empty() ? "" : ", ") + std::string(name_of(static_cast<Enum>(v)));
  }
  return text.empty() ? "nothing" : text;
}

template <typename Enum>
Enum nearest_in_mask(uint32_t mask, Enum current) {
  if (in_mask(mask, static_cast<int>(current))) return current;
  for (unsigned v = 0; v < enum_count<Enum>(); ++v) {
    if (in_mask(mask, static_cast<int>(v))) return static_cast<Enum>(v);
  }
  return current;
}

struct LayoutOf {
  TensorId tensor;
  Layout Case::*layout;
};
constexpr LayoutOf kLayouts[] = {
    {TensorId::kQPe, &Case::q_pe_layout},           {TensorId::kQlNope, &Case::ql_nope_layout},
    {TensorId::kIndexQ, &Case::index_q_layout},     {TensorId::kIndexWeights, &Case::weights_layout},
    {TensorId::kMqaCache, &Case::mqa_cache_layout}, {TensorId::kIndexerCache, &Case::indexer_cache_layout},
    {TensorId::kQueryOut, &Case::query_out_layout}, {TensorId::kIndexQFp8, &Case::index_q_fp8_layout},
    {TensorId::kIndexWeightsOut, &Case::weights_out_layout}};

bool has(uint32_t tensors, TensorId id) { return in_mask(tensors, static_cast<int>(id)); }

std::string outside(const std::string& field, const std::string& value, const std::string& allowed) {
  return field + " " + value + " (the domain allows " + allowed + ")";
}

}  // namespace

const char* name_of(Dim dim) { return kDimNames[static_cast<int>(dim)]; }

bool parse_name(const std::string& name, Dim* out) {
  for (int i = 0; i < kDimCount; ++i) {
    if (name == kDimNames[i] || name == kDimShortNames[i]) {
      *out = static_cast<Dim>(i);
      return true;
    }
  }
  return false;
}

int64_t& dim_field(Case& c, Dim dim) {
  switch (dim) {
    case Dim::kNumTokens: return c.num_tokens;
    case Dim::kMqaHeads: return c.mqa_heads;
    case Dim::kIndexerHeads: return c.indexer_heads;
    case Dim::kIndexDim: return c.index_dim;
    case Dim::kRopeDim: return c.rope_dim;
    case Dim::kNopeDim: return c.nope_dim;
    case Dim::kCacheRows: break;
  }
  return c.cache_rows;
}

int64_t dim_value(const Case& c, Dim dim) { return dim_field(const_cast<Case&>(c), dim); }

bool DimRule::allows(int64_t v) const {
  if (min > 0 && v < min) return false;
  if (max > 0 && v > max) return false;
  if (power_of_two && !is_power_of_two(v)) return false;
  if (multiple_of > 1 && v % multiple_of != 0) return false;
  if (!values.empty()) {
    for (int64_t x : values) {
      if (x == v) return true;
    }
    return false;
  }
  return true;
}

int64_t DimRule::at_most(int64_t v) const { return walk(*this, v, -1); }
int64_t DimRule::at_least(int64_t v) const { return walk(*this, v, +1); }

int64_t DimRule::nearest(int64_t v) const {
  if (allows(v)) return v;
  const int64_t below = at_most(v), above = at_least(v);
  if (below == 0 && above == 0) return v;
  if (below == 0) return above;
  if (above == 0) return below;
  return v - below <= above - v ? below : above;
}

std::string DimRule::text() const {
  std::vector<std::string> parts;
  if (!values.empty()) parts.push_back(join_values(values));
  if (min > 0 && max > 0) {
    parts.push_back(std::to_string(min) + ".." + std::to_string(max));
  } else if (min > 0) {
    parts.push_back("at least " + std::to_string(min));
  } else if (max > 0) {
    parts.push_back("up to " + std::to_string(max));
  }
  if (power_of_two) parts.push_back("a power of two");
  if (multiple_of > 1) parts.push_back("a multiple of " + std::to_string(multiple_of));
  if (parts.empty()) return "any value";
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) text += (i == 0 ? "" : ", ") + parts[i];
  return text;
}

bool DimRule::operator==(const DimRule& o) const {
  return min == o.min && max == o.max && values == o.values && power_of_two == o.power_of_two &&
         std::max<int64_t>(multiple_of, 1) == std::max<int64_t>(o.multiple_of, 1);
}

bool Relation::holds(const Case& c) const {
  const int64_t l = dim_value(c, left), r = dim_value(c, right);
  switch (op) {
    case Op::kLess: return l < factor * r;
    case Op::kLessEqual: return l <= factor * r;
    case Op::kEqual: return l == factor * r;
    case Op::kGreaterEqual: return l >= factor * r;
    case Op::kGreater: return l > factor * r;
    case Op::kDivides: return r > 0 && l % r == 0;
  }
  return false;
}

namespace {
constexpr const char* kOpNames[] = {"<", "<=", "==", ">=", ">", "%"};
}

std::string Relation::text() const {
  if (op == Op::kDivides) return std::string(name_of(left)) + " % " + name_of(right) + " == 0";
  return std::string(name_of(left)) + " " + kOpNames[static_cast<int>(op)] + " " +
         (factor == 1 ? "" : std::to_string(factor) + " * ") + name_of(right);
}

bool Relation::operator==(const Relation& o) const {
  return left == o.left && op == o.op && factor == o.factor && right == o.right;
}

std::string parse_relation(const std::string& text, Relation* out) {
  // Tokens: names, numbers and the operators, spaces optional.
  std::vector<std::string> tokens;
  for (size_t i = 0; i < text.size();) {
    const char ch = text[i];
    if (std::isspace(static_cast<unsigned char>(ch))) {
      ++i;
    } else if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_') {
      size_t j = i;
      while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) ++j;
      tokens.push_back(text.substr(i, j - i));
      i = j;
    } else {
      size_t j = i + 1;
      if (j < text.size() && text[j] == '=') ++j;
      tokens.push_back(text.substr(i, j - i));
      i = j;
    }
  }
  const std::string form =
      "relation '" + text + "': expected 'DIM OP [K *] DIM' (OP one of < <= == >= >) or 'DIM % DIM == 0', DIM one of "
      "num_tokens (T), mqa_heads (H), indexer_heads (NI), index_dim (D), rope_dim (R), nope_dim (L), cache_rows (P)";
  Relation r;
  if (tokens.size() < 3 || !parse_name(tokens[0], &r.left)) return form;
  if (tokens[1] == "%") {
    if (tokens.size() != 5 || !parse_name(tokens[2], &r.right) || tokens[3] != "==" || tokens[4] != "0") return form;
    r.op = Relation::Op::kDivides;
    *out = r;
    return "";
  }
  int op = -1;
  for (int i = 0; i < 5; ++i) {
    if (tokens[1] == kOpNames[i]) op = i;
  }
  if (op < 0) return form;
  r.op = static_cast<Relation::Op>(op);
  size_t next = 2;
  if (tokens.size() == 5 && tokens[3] == "*") {
    char* end = nullptr;
    const long long k = std::strtoll(tokens[2].c_str(), &end, 10);
    if (*end != 0 || k < 1 || k > (1 << 20)) return form + " (K a whole number in 1..1048576)";
    r.factor = k;
    next = 4;
  }
  if (tokens.size() != next + 1 || !parse_name(tokens[next], &r.right)) return form;
  *out = r;
  return "";
}

bool Domain::any() const { return *this == Domain{}; }

bool Domain::operator==(const Domain& o) const {
  for (int i = 0; i < kDimCount; ++i) {
    if (!(dims[i] == o.dims[i])) return false;
  }
  return query_paths == o.query_paths && indexer == o.indexer && alias == o.alias &&
         indexer_ropes == o.indexer_ropes && mqa_cache_dtypes == o.mqa_cache_dtypes &&
         indexer_cache_dtypes == o.indexer_cache_dtypes && weights_dtypes == o.weights_dtypes &&
         weights_out_dtypes == o.weights_out_dtypes && contiguous == o.contiguous &&
         unit_inner_stride == o.unit_inner_stride && relations == o.relations;
}

std::string outside_domain(const Domain& d, const Case& c) {
  if (!in_mask(d.query_paths, static_cast<int>(c.query_path))) {
    return outside("query_path", name_of(c.query_path), mask_names<QueryPath>(d.query_paths));
  }
  if (!in_mask(d.indexer, c.has_indexer ? 1 : 0)) {
    return outside("has_indexer", c.has_indexer ? "true" : "false",
                   d.indexer == 0b01 ? "cases without the indexer only" : "cases with the indexer only");
  }
  if (!in_mask(d.alias, c.alias == AliasMode::kExactFront ? 1 : 0)) {
    return outside("alias", name_of(c.alias), d.alias == 0b01 ? "ql_nope apart only" : "ql_nope aliased only");
  }
  if (!in_mask(d.mqa_cache_dtypes, static_cast<int>(c.mqa_cache_dtype))) {
    return outside("mqa_cache_dtype", name_of(c.mqa_cache_dtype), mask_names<FloatType>(d.mqa_cache_dtypes));
  }
  for (const LayoutOf& l : kLayouts) {
    const bool needed = c.has_indexer || !(l.tensor == TensorId::kIndexQ || l.tensor == TensorId::kIndexWeights ||
                                           l.tensor == TensorId::kIndexerCache);
    if (needed && has(d.contiguous, l.tensor) && c.*l.layout != Layout::kContiguous) {
      return outside(std::string(name_of(l.tensor)) + "_layout", name_of(c.*l.layout), "contiguous only");
    }
  }
  const bool weights_contiguous = has(d.contiguous, TensorId::kIndexWeights);
  if (c.has_indexer && (weights_contiguous || has(d.unit_inner_stride, TensorId::kIndexWeights)) &&
      c.weights_column_stride != 1) {
    return outside("weights_column_stride", std::to_string(c.weights_column_stride),
                   std::string("1 only (index_weights ") + (weights_contiguous ? "contiguous" : "with unit inner stride") +
                       ")");
  }
  for (int i = 0; i < kDimCount; ++i) {
    const Dim dim = static_cast<Dim>(i);
    const bool indexer_dim = dim == Dim::kIndexerHeads || dim == Dim::kIndexDim;
    if (indexer_dim && !c.has_indexer) continue;
    if (!d.dims[i].allows(dim_value(c, dim))) {
      return outside(name_of(dim), std::to_string(dim_value(c, dim)), d.dims[i].text());
    }
  }
  if (c.has_indexer) {
    if (!in_mask(d.indexer_ropes, static_cast<int>(c.indexer_rope))) {
      return outside("indexer_rope", name_of(c.indexer_rope), mask_names<RopeStyle>(d.indexer_ropes));
    }
    if (!in_mask(d.indexer_cache_dtypes, static_cast<int>(c.indexer_cache_dtype))) {
      return outside("indexer_cache_dtype", name_of(c.indexer_cache_dtype),
                     mask_names<FloatType>(d.indexer_cache_dtypes));
    }
    if (!in_mask(d.weights_dtypes, static_cast<int>(c.weights_dtype))) {
      return outside("weights_dtype", name_of(c.weights_dtype), mask_names<FloatType>(d.weights_dtypes));
    }
    if (!in_mask(d.weights_out_dtypes, static_cast<int>(c.weights_out_dtype))) {
      return outside("weights_out_dtype", name_of(c.weights_out_dtype), mask_names<FloatType>(d.weights_out_dtypes));
    }
  }
  for (const Relation& r : d.relations) {
    const bool indexer_relation = r.left == Dim::kIndexerHeads || r.left == Dim::kIndexDim ||
                                  r.right == Dim::kIndexerHeads || r.right == Dim::kIndexDim;
    if (indexer_relation && !c.has_indexer) continue;
    if (!r.holds(c)) {
      return "relation " + r.text() + " does not hold (" + name_of(r.left) + " " +
             std::to_string(dim_value(c, r.left)) + ", " + name_of(r.right) + " " +
             std::to_string(dim_value(c, r.right)) + ")";
    }
  }
  return "";
}

void fit_to_domain(const Domain& d, Case& c) {
  const Case before = c;
  c.query_path = nearest_in_mask(d.query_paths, c.query_path);
  if (!in_mask(d.indexer, c.has_indexer ? 1 : 0)) c.has_indexer = !c.has_indexer;
  if (!in_mask(d.alias, c.alias == AliasMode::kExactFront ? 1 : 0)) {
    c.alias = c.alias == AliasMode::kExactFront ? AliasMode::kNone : AliasMode::kExactFront;
  }
  c.indexer_rope = nearest_in_mask(d.indexer_ropes, c.indexer_rope);
  c.mqa_cache_dtype = nearest_in_mask(d.mqa_cache_dtypes, c.mqa_cache_dtype);
  c.indexer_cache_dtype = nearest_in_mask(d.indexer_cache_dtypes, c.indexer_cache_dtype);
  c.weights_dtype = nearest_in_mask(d.weights_dtypes, c.weights_dtype);
  c.weights_out_dtype = nearest_in_mask(d.weights_out_dtypes, c.weights_out_dtype);
  for (const LayoutOf& l : kLayouts) {
    if (has(d.contiguous, l.tensor)) c.*l.layout = Layout::kContiguous;
  }
  if (has(d.contiguous, TensorId::kIndexWeights) || has(d.unit_inner_stride, TensorId::kIndexWeights)) {
    c.weights_column_stride = 1;
  }
  for (int i = 0; i < kDimCount; ++i) {
    int64_t& v = dim_field(c, static_cast<Dim>(i));
    v = d.dims[i].nearest(v);
  }
  // The relations move their left side to the nearest allowed value that
  // holds (two passes: one relation's move may be another's right side).
  for (int pass = 0; pass < 2; ++pass) {
    for (const Relation& r : d.relations) {
      if (r.holds(c)) continue;
      const DimRule& rule = d.dim(r.left);
      int64_t& left = dim_field(c, r.left);
      const int64_t bound = r.factor * dim_value(c, r.right);
      switch (r.op) {
        case Relation::Op::kLess: left = rule.at_most(bound - 1); break;
        case Relation::Op::kLessEqual: left = rule.at_most(bound); break;
        case Relation::Op::kEqual: left = rule.allows(bound) ? bound : left; break;
        case Relation::Op::kGreaterEqual: left = rule.at_least(bound); break;
        case Relation::Op::kGreater: left = rule.at_least(bound + 1); break;
        case Relation::Op::kDivides: {
          const int64_t right = dim_value(c, r.right);
          if (right <= 0) {  // T = 0 divides nothing: no value holds
            left = 0;
            break;
          }
          int64_t m = left / right * right;
          while (m > 0 && !rule.allows(m)) m -= right;
          left = m > 0 ? m : rule.at_least(right);
          break;
        }
      }
      if (left == 0) left = dim_value(before, r.left);  // no value holds: left as it was, still outside
    }
  }
  // R <= D (validate_case): a rope fixed by the domain widens an index dim
  // left free, to the nearest allowed D >= R.
  if (c.rope_dim > c.index_dim) {
    const int64_t wider = d.dim(Dim::kIndexDim).at_least(c.rope_dim);
    if (wider != 0) c.index_dim = wider;
  }
  // The alias needs the bf16 packed path and a contiguous ql_nope
  // (validate_case).
  if (c.query_path != QueryPath::kBf16Packed || c.ql_nope_layout != Layout::kContiguous) c.alias = AliasMode::kNone;
  // New dims: the default scales of the new D and NI, and the edits (which
  // name elements of the old shape) dropped; the mutator's scales are kept
  // otherwise.
  bool reshaped = false;
  for (int i = 0; i < kDimCount; ++i) {
    reshaped |= dim_value(c, static_cast<Dim>(i)) != dim_value(before, static_cast<Dim>(i));
  }
  if (c.index_dim != before.index_dim || c.indexer_heads != before.indexer_heads) set_default_scales(c);
  if (reshaped) c.edits.clear();
}

}  // namespace qcheck
