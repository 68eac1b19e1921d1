// Small fused_q launches built in the test from a few parameters: every
// tensor lives in its own byte buffer with padded strides (so the oracle must
// honour them), padding and outputs are pre-filled with a poison pattern, and
// inputs hold deterministic noise with specials mixed in. Used to compare the
// composed oracle under the scalar and the SIMD row tables.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "reference/fused_q_args.h"

namespace qcheck::test {

struct LaunchConfig {
  int64_t tokens = 5;         // T
  int64_t mqa_heads = 3;      // H
  int64_t indexer_heads = 2;  // NI
  int64_t index_dim = 32;     // D
  int64_t rope_dim = 16;      // R
  int64_t nope_dim = 24;      // L
  int64_t cache_rows = 7;     // P
  QueryPath path = QueryPath::kBf16Packed;
  bool alias = false;  // ql_nope is query_out[..., :L] (bf16 packed path only)
  bool has_indexer = true;
  RopeStyle indexer_rope = RopeStyle::kNeox;
  FloatType cache_dtype = FloatType::kF32;
  FloatType weights_dtype = FloatType::kF32;
  FloatType weights_out_dtype = FloatType::kF32;
  uint32_t q_scale_bits = 0x3F800000;
  uint64_t seed = 1;
  std::string describe() const;
};

// One tensor: its bytes and, per byte, whether it belongs to an element the
// launch reads or writes (the rest is padding that must never change).
struct TensorBytes {
  std::vector<uint8_t> bytes;
  std::vector<uint8_t> in_view;
  bool is_output = false;
};

class SmallLaunch {
 public:
  explicit SmallLaunch(const LaunchConfig& config);
  SmallLaunch(const SmallLaunch&) = delete;
  SmallLaunch& operator=(const SmallLaunch&) = delete;

  const FusedQArgs& args() const { return args_; }
  // Every tensor by name, as it is now.
  const std::map<std::string, TensorBytes>& tensors() const { return tensors_; }
  // Lines describing bytes that changed but must not have: any byte of an
  // input, any padding byte, every byte of an output the launch must not
  // write (the indexer outputs when has_indexer is off). Empty when clean.
  std::string unexpected_changes() const;

 private:
  TensorBytes& add(const std::string& name, int64_t rows, int64_t cols, int64_t width, int64_t row_stride,
                   int64_t col_stride, int element_bytes, bool is_output);
  LaunchConfig config_;
  FusedQArgs args_;
  std::map<std::string, TensorBytes> tensors_;
  std::map<std::string, std::vector<uint8_t>> initial_;
  std::vector<int64_t> positions_;
};

// Lines naming the first bytes where two launches' outputs differ; empty
// when every output byte (padding included) is identical.
std::string output_differences(const SmallLaunch& expected, const SmallLaunch& actual);

}  // namespace qcheck::test
