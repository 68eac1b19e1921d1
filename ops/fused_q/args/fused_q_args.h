// The plain argument struct of one fused_q launch. The same struct describes
// a launch of a CUDA kernel (device pointers) and a run of the CPU oracle
// (host pointers), so the harness builds one description and hands it to
// either side. No CUDA, no I/O: ops/fused_q/kernels/ includes this header too.
//
// Shapes (SEMANTICS.md, "What fused_q does"); strides are in elements, the
// last dimension always has unit stride:
//   positions          [T]                int64
//   q_pe               [T, H, R]          bf16
//   ql_nope            [T, H, L]          bf16   (not read on the separate path)
//   index_q            [T, NI, D]         bf16
//   index_weights      [T, NI]            fp32 | bf16  (column stride any)
//   mqa / indexer cache[P, R]             fp32 | bf16  row = [cos(R/2), sin(R/2)]
//   query_out          fp8 packed:  [T, H, L+R] e4m3
//                      bf16 packed: [T, H, L+R] bf16 (front = ql_nope, may alias)
//                      bf16 separate: [T, H, R] bf16 (q_pe_out)
//   index_q_fp8        [T, NI, D]         e4m3
//   index_weights_out  [T, NI]            fp32 | bf16
#pragma once

#include <cstdint>
#include <string>

#include "numerics/types.h"

namespace qcheck {

enum class QueryPath : uint8_t { kFp8Packed = 0, kBf16Packed = 1, kBf16Separate = 2 };
// RopeStyle and FloatType, and their names, are the family's (numerics/types.h).

const char* name_of(QueryPath path);

// A [tokens, heads, width] input; width is implied by the field.
struct InputView {
  const void* data = nullptr;
  int64_t token_stride = 0;
  int64_t head_stride = 0;
};

struct OutputView {
  void* data = nullptr;
  int64_t token_stride = 0;
  int64_t head_stride = 0;
};

struct CacheView {
  const void* data = nullptr;
  FloatType dtype = FloatType::kF32;
  int64_t rows = 0;        // P: every position must be < rows
  int64_t row_stride = 0;  // elements between rows (>= R)
};

struct FusedQArgs {
  int64_t num_tokens = 0;     // T
  int64_t mqa_heads = 0;      // H
  int64_t indexer_heads = 0;  // NI
  int64_t index_dim = 0;      // D
  int64_t rope_dim = 0;       // R
  int64_t nope_dim = 0;       // L

  QueryPath query_path = QueryPath::kBf16Packed;
  bool has_indexer = true;
  RopeStyle indexer_rope = RopeStyle::kNeox;  // the MQA rope is always interleaved

  const int64_t* positions = nullptr;
  CacheView mqa_cache;
  CacheView indexer_cache;

  InputView q_pe;
  InputView ql_nope;
  InputView index_q;
  InputView index_weights;  // head_stride is the column stride
  FloatType index_weights_dtype = FloatType::kF32;

  OutputView query_out;
  OutputView index_q_fp8;
  OutputView index_weights_out;  // head_stride is the column stride
  FloatType index_weights_out_dtype = FloatType::kF32;

  // fp32 bit patterns. q_scale only matters on the fp8 path and must be
  // positive, finite and normal there.
  uint32_t q_scale_bits = 0x3F800000u;
  uint32_t softmax_scale_bits = 0;
  uint32_t head_scale_bits = 0;
};

// Limits on the dimensions (general, not only the real models' 64/512/128).
struct DimLimits {
  static constexpr int64_t kMaxHeads = 1024;
  static constexpr int64_t kMaxIndexerHeads = 1024;
  static constexpr int64_t kMaxIndexDim = 512;    // D, a multiple of 16
  static constexpr int64_t kMaxNopeDim = 1024;    // L, a multiple of 8
  static constexpr int64_t kMaxTokens = int64_t(1) << 40;
};

// Width of query_out's rows for the args' path: L+R packed, R separate.
int64_t query_out_width(const FusedQArgs& args);

// Bytes of one element of a tensor of `type`.
int element_bytes(FloatType type);

// Bytes of one query_out element: e4m3 on the fp8 path, bf16 otherwise.
int query_out_element_bytes(const FusedQArgs& args);

// Checks dims, pointers, strides and overlaps without reading any tensor
// (so it works on device pointers). Returns "" when the launch is valid,
// otherwise one line naming the field and the limit. The only permitted
// overlap between an input and an output is the exact ql_nope alias.
std::string validate_fused_q_args(const FusedQArgs& args);

// True when ql_nope is exactly query_out[..., :L] (same address and strides)
// on the bf16 packed path: the front copy is then an identity.
bool ql_nope_aliases_query_out(const FusedQArgs& args);

// Recomputes the three fp32 scales the way SEMANTICS.md pins them:
// RN_f32 of D^-0.5 and NI^-0.5 computed in double.
uint32_t default_softmax_scale_bits(int64_t index_dim);
uint32_t default_head_scale_bits(int64_t indexer_heads);

}  // namespace qcheck
