#include "fuzz/backends/plugin_domain.h"

#include <cstdlib>

#include "fuzz/case/case_names.h"

namespace qcheck {
namespace {

bool in_mask(uint32_t mask, int value) { return mask == 0 || (mask >> value & 1u) != 0; }

// The supported values of a mask over [0, count), for messages.
std::string mask_text(uint32_t mask, int count, const char* (*name)(int)) {
  std::string text;
  for (int v = 0; v < count; ++v) {
    if (in_mask(mask, v)) text += (text.empty() ? "" : ", ") + std::string(name(v));
  }
  return text;
}

bool in_list(const int64_t (&list)[8], int64_t value) {
  if (list[0] == 0) return true;
  for (int64_t v : list) {
    if (v == value) return true;
    if (v == 0) break;
  }
  return false;
}

std::string list_text(const int64_t (&list)[8]) {
  std::string text;
  for (int64_t v : list) {
    if (v == 0) break;
    text += (text.empty() ? "" : ", ") + std::to_string(v);
  }
  return text;
}

// The value of the list nearest to `value` (the smaller one on a tie).
int64_t nearest_in_list(const int64_t (&list)[8], int64_t value) {
  int64_t best = list[0];
  for (int64_t v : list) {
    if (v == 0) break;
    if (std::llabs(v - value) < std::llabs(best - value)) best = v;
  }
  return best;
}

template <typename Enum>
Enum first_in_mask(uint32_t mask, Enum current, int count) {
  if (in_mask(mask, static_cast<int>(current))) return current;
  for (int v = 0; v < count; ++v) {
    if (in_mask(mask, v)) return static_cast<Enum>(v);
  }
  return current;
}

const char* path_name(int v) { return name_of(static_cast<QueryPath>(v)); }
const char* rope_name(int v) { return name_of(static_cast<RopeStyle>(v)); }
const char* dtype_name(int v) { return name_of(static_cast<FloatType>(v)); }
const char* indexer_name(int v) { return v == 0 ? "without the indexer" : "with the indexer"; }
const char* alias_name(int v) { return v == 0 ? "ql_nope apart" : "ql_nope aliased"; }

// Every layout of a case (what contiguous_only constrains, with the weights' column stride).
constexpr Layout Case::*kLayouts[] = {&Case::q_pe_layout,          &Case::ql_nope_layout,   &Case::index_q_layout,
                                      &Case::weights_layout,       &Case::mqa_cache_layout, &Case::indexer_cache_layout,
                                      &Case::query_out_layout,     &Case::index_q_fp8_layout,
                                      &Case::weights_out_layout};

bool all_contiguous(const Case& c) {
  for (Layout Case::*l : kLayouts) {
    if (c.*l != Layout::kContiguous) return false;
  }
  return c.weights_column_stride == 1;
}

}  // namespace

std::string outside_declared_domain(const qcheck_plugin_domain& d, const Case& c) {
  auto outside_mask = [](const char* field, const std::string& value, const std::string& supported) {
    return field + std::string(" ") + value + " (the plugin supports " + supported + ")";
  };
  if (!in_mask(d.query_paths, static_cast<int>(c.query_path))) {
    return outside_mask("query_path", name_of(c.query_path), mask_text(d.query_paths, 3, path_name));
  }
  if (!in_mask(d.indexer, c.has_indexer ? 1 : 0)) {
    return outside_mask("has_indexer", c.has_indexer ? "true" : "false", mask_text(d.indexer, 2, indexer_name));
  }
  if (!in_mask(d.cache_dtypes, static_cast<int>(c.mqa_cache_dtype))) {
    return outside_mask("mqa_cache_dtype", name_of(c.mqa_cache_dtype), mask_text(d.cache_dtypes, 2, dtype_name));
  }
  if (!in_mask(d.aliasing, c.alias == AliasMode::kExactFront ? 1 : 0)) {
    return outside_mask("alias", name_of(c.alias), mask_text(d.aliasing, 2, alias_name));
  }
  if (d.contiguous_only != 0 && !all_contiguous(c)) {
    return "a strided layout or weights_column_stride " + std::to_string(c.weights_column_stride) +
           " (the plugin supports contiguous tensors only)";
  }
  if (!in_list(d.rope_dims, c.rope_dim)) {
    return outside_mask("rope_dim", std::to_string(c.rope_dim), list_text(d.rope_dims));
  }
  if (!in_list(d.nope_dims, c.nope_dim)) {
    return outside_mask("nope_dim", std::to_string(c.nope_dim), list_text(d.nope_dims));
  }
  if (d.max_mqa_heads > 0 && c.mqa_heads > d.max_mqa_heads) {
    return "mqa_heads " + std::to_string(c.mqa_heads) + " (the plugin supports up to " +
           std::to_string(d.max_mqa_heads) + ")";
  }
  if (d.max_tokens > 0 && c.num_tokens > d.max_tokens) {
    return "num_tokens " + std::to_string(c.num_tokens) + " (the plugin supports up to " +
           std::to_string(d.max_tokens) + ")";
  }
  if (!c.has_indexer) return "";
  if (!in_mask(d.indexer_ropes, static_cast<int>(c.indexer_rope))) {
    return outside_mask("indexer_rope", name_of(c.indexer_rope), mask_text(d.indexer_ropes, 2, rope_name));
  }
  if (!in_mask(d.cache_dtypes, static_cast<int>(c.indexer_cache_dtype))) {
    return outside_mask("indexer_cache_dtype", name_of(c.indexer_cache_dtype),
                        mask_text(d.cache_dtypes, 2, dtype_name));
  }
  if (!in_mask(d.weights_dtypes, static_cast<int>(c.weights_dtype))) {
    return outside_mask("weights_dtype", name_of(c.weights_dtype), mask_text(d.weights_dtypes, 2, dtype_name));
  }
  if (!in_mask(d.weights_out_dtypes, static_cast<int>(c.weights_out_dtype))) {
    return outside_mask("weights_out_dtype", name_of(c.weights_out_dtype),
                        mask_text(d.weights_out_dtypes, 2, dtype_name));
  }
  if (!in_list(d.index_dims, c.index_dim)) {
    return outside_mask("index_dim", std::to_string(c.index_dim), list_text(d.index_dims));
  }
  if (d.max_indexer_heads > 0 && c.indexer_heads > d.max_indexer_heads) {
    return "indexer_heads " + std::to_string(c.indexer_heads) + " (the plugin supports up to " +
           std::to_string(d.max_indexer_heads) + ")";
  }
  return "";
}

void fit_to_plugin_domain(const qcheck_plugin_domain& d, Case& c) {
  const Case before = c;
  c.query_path = first_in_mask(d.query_paths, c.query_path, 3);
  if (!in_mask(d.indexer, c.has_indexer ? 1 : 0)) c.has_indexer = !c.has_indexer;
  c.indexer_rope = first_in_mask(d.indexer_ropes, c.indexer_rope, 2);
  c.mqa_cache_dtype = first_in_mask(d.cache_dtypes, c.mqa_cache_dtype, 2);
  c.indexer_cache_dtype = first_in_mask(d.cache_dtypes, c.indexer_cache_dtype, 2);
  c.weights_dtype = first_in_mask(d.weights_dtypes, c.weights_dtype, 2);
  c.weights_out_dtype = first_in_mask(d.weights_out_dtypes, c.weights_out_dtype, 2);
  if (!in_mask(d.aliasing, c.alias == AliasMode::kExactFront ? 1 : 0)) {
    c.alias = c.alias == AliasMode::kExactFront ? AliasMode::kNone : AliasMode::kExactFront;
  }
  if (d.contiguous_only != 0) {
    for (Layout Case::*l : kLayouts) c.*l = Layout::kContiguous;
    c.weights_column_stride = 1;
  }
  if (!in_list(d.index_dims, c.index_dim)) c.index_dim = nearest_in_list(d.index_dims, c.index_dim);
  if (!in_list(d.rope_dims, c.rope_dim)) c.rope_dim = nearest_in_list(d.rope_dims, c.rope_dim);
  if (!in_list(d.nope_dims, c.nope_dim)) c.nope_dim = nearest_in_list(d.nope_dims, c.nope_dim);
  // R <= D: a rope fixed by the plugin widens an index dim left free.
  if (c.rope_dim > c.index_dim) {
    int64_t wider = (c.rope_dim + 15) / 16 * 16;
    for (int64_t v : d.index_dims) {
      if (v == 0) break;
      if (v >= c.rope_dim && (wider < c.rope_dim || v < wider || !in_list(d.index_dims, wider))) wider = v;
    }
    c.index_dim = wider;
  }
  if (d.max_mqa_heads > 0 && c.mqa_heads > d.max_mqa_heads) c.mqa_heads = d.max_mqa_heads;
  if (d.max_indexer_heads > 0 && c.indexer_heads > d.max_indexer_heads) c.indexer_heads = d.max_indexer_heads;
  if (d.max_tokens > 0 && c.num_tokens > d.max_tokens) c.num_tokens = d.max_tokens;
  // The alias needs the bf16 packed path and a contiguous ql_nope
  // (validate_case); the edits name elements of the old shape.
  if (c.query_path != QueryPath::kBf16Packed || c.ql_nope_layout != Layout::kContiguous) c.alias = AliasMode::kNone;
  // New dims: the default scales of the new D and NI, and the edits (which
  // name elements of the old shape) dropped; the mutator's scales are kept
  // otherwise.
  const bool reshaped = c.num_tokens != before.num_tokens || c.mqa_heads != before.mqa_heads ||
                        c.indexer_heads != before.indexer_heads || c.index_dim != before.index_dim ||
                        c.rope_dim != before.rope_dim || c.nope_dim != before.nope_dim;
  if (c.index_dim != before.index_dim || c.indexer_heads != before.indexer_heads) set_default_scales(c);
  if (reshaped) c.edits.clear();
}

}  // namespace qcheck
