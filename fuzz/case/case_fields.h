// The one list of a Case's fields, in their canonical order. The binary
// encoding (fuzz/case/case_binary.h) and the JSON form (fuzz/case/case_json.h) both walk
// it, so adding a field means adding one line here (and bumping the binary
// version).
//
// A visitor provides: integer(name, int64_t&, required), enumeration(name,
// Enum&, required), boolean(name, bool&), bits32(name, uint32_t&),
// u64(name, uint64_t&), text(name, std::string&), edits(name,
// std::vector<ValueEdit>&).
#pragma once

#include "fuzz/case/case.h"

namespace qcheck {

constexpr bool kRequired = true;
constexpr bool kOptional = false;

template <typename Visitor>
void visit_case_fields(Case& c, Visitor& v) {
  v.integer("num_tokens", c.num_tokens, kRequired);
  v.integer("mqa_heads", c.mqa_heads, kRequired);
  v.integer("indexer_heads", c.indexer_heads, kRequired);
  v.integer("index_dim", c.index_dim, kRequired);
  v.integer("rope_dim", c.rope_dim, kRequired);
  v.integer("nope_dim", c.nope_dim, kRequired);
  v.enumeration("query_path", c.query_path, kRequired);
  v.boolean("has_indexer", c.has_indexer);
  v.enumeration("indexer_rope", c.indexer_rope, kOptional);
  v.enumeration("mqa_cache_dtype", c.mqa_cache_dtype, kOptional);
  v.enumeration("indexer_cache_dtype", c.indexer_cache_dtype, kOptional);
  v.enumeration("weights_dtype", c.weights_dtype, kOptional);
  v.enumeration("weights_out_dtype", c.weights_out_dtype, kOptional);
  v.enumeration("q_pe_layout", c.q_pe_layout, kOptional);
  v.enumeration("ql_nope_layout", c.ql_nope_layout, kOptional);
  v.enumeration("index_q_layout", c.index_q_layout, kOptional);
  v.enumeration("weights_layout", c.weights_layout, kOptional);
  v.enumeration("mqa_cache_layout", c.mqa_cache_layout, kOptional);
  v.enumeration("indexer_cache_layout", c.indexer_cache_layout, kOptional);
  v.integer("weights_column_stride", c.weights_column_stride, kOptional);
  v.enumeration("query_out_layout", c.query_out_layout, kOptional);
  v.enumeration("index_q_fp8_layout", c.index_q_fp8_layout, kOptional);
  v.enumeration("weights_out_layout", c.weights_out_layout, kOptional);
  v.integer("row_padding", c.row_padding, kOptional);
  v.enumeration("alias", c.alias, kOptional);
  v.integer("cache_rows", c.cache_rows, kOptional);
  v.enumeration("positions", c.positions, kOptional);
  v.enumeration("values", c.values, kOptional);
  v.bits32("q_scale", c.q_scale_bits);
  v.bits32("softmax_scale", c.softmax_scale_bits);
  v.bits32("head_scale", c.head_scale_bits);
  v.u64("seed", c.seed);
  v.text("profile", c.profile);
  v.u64("memory_limit_bytes", c.memory_limit_bytes);
  v.edits("edits", c.edits);
}

}  // namespace qcheck
