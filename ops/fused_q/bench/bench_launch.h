// One benchmark configuration of fused_q on the device: the buffers of a
// production-shaped launch (its own allocations; timing only) and the bytes
// the launch must move. Plain C++ (CUDA runtime API only).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ops/fused_q/args/fused_q_args.h"

namespace qcheck::bench {

// The production paths the bench times.
enum class BenchPath {
  kBf16Separate,     // q_pe_out [T, H, R] bf16 (vLLM before the seed PR)
  kBf16PackedAlias,  // q_out [T, H, L+R] bf16, ql_nope already in its front
  kBf16PackedCopy,   // q_out [T, H, L+R] bf16, ql_nope copied in
  kFp8Packed,        // [T, H, L+R] e4m3, q_scale 1.0
};
const char* name_of(BenchPath path);

struct BenchShape {
  const char* model;  // "GLM-5 TP4" ...
  int64_t heads;      // H
  int64_t indexer_heads;  // NI
  int64_t index_dim = 128, rope_dim = 64, nope_dim = 512;
};

// Device buffers of one launch with production strides:
//   q_pe     a view of [T, H, 128 + R] rows (row 192 for R = 64)
//   ql_nope  head-major [H, T, L] (strides (L, T*L)), or the front of q_out
//   index_q  [T, NI, D]; weights f32 [T, NI] inside [T, D + NI] rows
//   caches   f32 [P, R] with P = max(T, 4096), positions t % P
// Inputs hold deterministic non-zero values. `sets` copies of every input
// and output are made so consecutive launches can rotate through them when
// one set fits in L2.
class BenchLaunch {
 public:
  BenchLaunch() = default;
  BenchLaunch(const BenchLaunch&) = delete;
  BenchLaunch& operator=(const BenchLaunch&) = delete;
  ~BenchLaunch();

  // Allocates and fills; returns "" or the failed CUDA call.
  std::string create(const BenchShape& shape, BenchPath path, int64_t tokens, int sets);

  const FusedQArgs& args(int set) const { return args_[set]; }
  int sets() const { return static_cast<int>(args_.size()); }
  // Bytes the launch must move: every input element read once (ql_nope not
  // at all when it aliases), cos/sin rows once per token, every output
  // element written once.
  double bytes_moved() const { return bytes_moved_; }

 private:
  void* allocate(size_t bytes);
  std::vector<void*> allocations_;
  std::vector<FusedQArgs> args_;
  double bytes_moved_ = 0;
  std::string error_;
};

// Fills device memory with deterministic non-zero values (bench_fill.cu).
std::string fill_bf16(void* data, size_t count, uint32_t seed);
std::string fill_f32(void* data, size_t count, uint32_t seed, bool rotary_like);
std::string fill_positions(int64_t* data, size_t count, int64_t rows);

// Launches a kernel that does nothing but takes the kernels' parameter block
// (the floor of a launch inside a CUDA graph).
std::string launch_empty_kernel(unsigned grid_x, unsigned grid_y, unsigned threads, void* stream);

}  // namespace qcheck::bench
