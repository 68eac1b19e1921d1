#include "fuzz/backends/plugin_domain.h"

namespace qcheck {
namespace {

uint32_t mask_or_any(uint32_t declared, uint32_t any) { return declared == 0 ? any : declared & any; }

void values_of(const int64_t (&list)[8], DimRule* rule) {
  for (int64_t v : list) {
    if (v == 0) break;
    rule->values.push_back(v);
  }
}

}  // namespace

Domain domain_of_plugin(const qcheck_plugin_domain& d) {
  Domain out;
  out.query_paths = mask_or_any(d.query_paths, out.query_paths);
  out.indexer = mask_or_any(d.indexer, out.indexer);
  out.alias = mask_or_any(d.aliasing, out.alias);
  out.indexer_ropes = mask_or_any(d.indexer_ropes, out.indexer_ropes);
  out.mqa_cache_dtypes = mask_or_any(d.cache_dtypes, out.mqa_cache_dtypes);
  out.indexer_cache_dtypes = mask_or_any(d.cache_dtypes, out.indexer_cache_dtypes);
  out.weights_dtypes = mask_or_any(d.weights_dtypes, out.weights_dtypes);
  out.weights_out_dtypes = mask_or_any(d.weights_out_dtypes, out.weights_out_dtypes);
  if (d.contiguous_only != 0) {
    for (TensorId id : kLaidOutTensors) out.contiguous |= 1u << static_cast<unsigned>(id);
  }
  values_of(d.rope_dims, &out.dim(Dim::kRopeDim));
  values_of(d.nope_dims, &out.dim(Dim::kNopeDim));
  values_of(d.index_dims, &out.dim(Dim::kIndexDim));
  out.dim(Dim::kMqaHeads).max = d.max_mqa_heads > 0 ? d.max_mqa_heads : 0;
  out.dim(Dim::kIndexerHeads).max = d.max_indexer_heads > 0 ? d.max_indexer_heads : 0;
  out.dim(Dim::kNumTokens).max = d.max_tokens > 0 ? d.max_tokens : 0;
  return out;
}

}  // namespace qcheck
