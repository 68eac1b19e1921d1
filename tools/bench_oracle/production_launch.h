// A fused_q launch shaped like production (GLM-5 at TP4, SEMANTICS.md "Real
// dimensions" and "What fused_q does"): bf16 packed query path, fp32 cos/sin
// caches, NeoX indexer, q_pe a view of a wider [T, H, 192] buffer, head-major
// ql_nope (strides L, T*L, 1), index weights with row stride D + NI, and
// deterministic non-trivial inputs (noise, positions scattered over the cache).
#pragma once

#include <cstdint>
#include <vector>

#include "reference/fused_q_args.h"

namespace qcheck::bench {

struct LaunchShape {
  int64_t tokens = 16384;  // T
  int64_t mqa_heads = 16;  // H
  int64_t indexer_heads = 32;  // NI
  int64_t index_dim = 128;  // D
  int64_t rope_dim = 64;  // R
  int64_t nope_dim = 512;  // L
  int64_t cache_rows = 32768;  // P
};

class ProductionLaunch {
 public:
  ProductionLaunch(const LaunchShape& shape, uint64_t seed);
  // The args over this object's buffers; num_tokens may be lowered to run a prefix.
  FusedQArgs args(int64_t num_tokens) const;
  // Bytes a launch of num_tokens tokens must read (inputs, cache rows) and write (outputs).
  uint64_t input_bytes(int64_t num_tokens) const;
  uint64_t output_bytes(int64_t num_tokens) const;
  // The outputs of the first num_tokens tokens as raw bytes, for comparing two runs.
  std::vector<uint8_t> output_snapshot(int64_t num_tokens) const;

 private:
  LaunchShape shape_;
  std::vector<int64_t> positions_;
  std::vector<float> mqa_cache_, indexer_cache_;
  std::vector<uint16_t> q_pe_wide_, ql_nope_, index_q_;
  std::vector<float> index_weights_wide_;
  std::vector<uint16_t> query_out_;
  std::vector<uint8_t> index_q_fp8_;
  std::vector<float> index_weights_out_;
  static constexpr int64_t kQPeRow = 192;  // q_pe is columns 128..191 of each row
};

}  // namespace qcheck::bench
