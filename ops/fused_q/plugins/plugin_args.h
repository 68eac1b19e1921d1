// For plugins written in C++ against this project's own code (the examples
// here): the plugin ABI's launch (include/qcheck/qcheck_plugin.h) back into the
// project's FusedQArgs (ops/fused_q/args/fused_q_args.h). fuzz/backends/plugin.cc does the
// opposite; tests/harness/plugin_test.cc checks that the two are inverse.
#pragma once

#include <string>

#include <qcheck/qcheck_plugin.h>
#include "ops/fused_q/args/fused_q_args.h"

namespace qcheck::plugin {

inline InputView input_of(const qcheck_plugin_input& v) { return {v.data, v.token_stride, v.head_stride}; }
inline OutputView output_of(const qcheck_plugin_output& v) { return {v.data, v.token_stride, v.head_stride}; }
inline CacheView cache_of(const qcheck_plugin_cache& v) {
  return {v.data, static_cast<FloatType>(v.dtype), v.rows, v.row_stride};
}

inline FusedQArgs fused_q_args_of(const qcheck_plugin_args& a) {
  FusedQArgs f;
  f.num_tokens = a.num_tokens;
  f.mqa_heads = a.mqa_heads;
  f.indexer_heads = a.indexer_heads;
  f.index_dim = a.index_dim;
  f.rope_dim = a.rope_dim;
  f.nope_dim = a.nope_dim;
  f.query_path = static_cast<QueryPath>(a.query_path);
  f.has_indexer = a.has_indexer != 0;
  f.indexer_rope = static_cast<RopeStyle>(a.indexer_rope);
  f.positions = a.positions;
  f.mqa_cache = cache_of(a.mqa_cache);
  f.indexer_cache = cache_of(a.indexer_cache);
  f.q_pe = input_of(a.q_pe);
  f.ql_nope = input_of(a.ql_nope);
  f.index_q = input_of(a.index_q);
  f.index_weights = input_of(a.index_weights);
  f.index_weights_dtype = static_cast<FloatType>(a.index_weights_dtype);
  f.query_out = output_of(a.query_out);
  f.index_q_fp8 = output_of(a.index_q_fp8);
  f.index_weights_out = output_of(a.index_weights_out);
  f.index_weights_out_dtype = static_cast<FloatType>(a.index_weights_out_dtype);
  f.q_scale_bits = a.q_scale_bits;
  f.softmax_scale_bits = a.softmax_scale_bits;
  f.head_scale_bits = a.head_scale_bits;
  return f;
}

// Copies `text` into message[size] (NUL-terminated) and returns 1: a
// launch's failure.
inline int launch_failed(const std::string& text, char* message, size_t size) {
  if (message != nullptr && size > 0) {
    const size_t n = text.size() < size - 1 ? text.size() : size - 1;
    for (size_t i = 0; i < n; ++i) message[i] = text[i];
    message[n] = '\0';
  }
  return 1;
}

}  // namespace qcheck::plugin
