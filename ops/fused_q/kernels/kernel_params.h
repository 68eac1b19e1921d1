// What both kernels receive by value: the launch args plus the facts derived
// from them once on the host (which task may use 16-byte vectors, whether the
// ql_nope front copy runs). Plain C++: built by the host launcher
// (ops/fused_q/kernels/kernel_params.cc) and read by the device code.
#pragma once

#include <cstdint>

#include "ops/fused_q/args/fused_q_args.h"

namespace qcheck::cuda {

// Elements per vector on the fast paths: 8 bf16 = 16 bytes in, 8 e4m3 =
// 8 bytes or 8 bf16 = 16 bytes out, and 4 cos + 4 sin values per load.
constexpr int kVectorElements = 8;
constexpr int kCacheVectorElements = 4;

// The shape of every real model of the family (SEMANTICS.md: DeepSeek-V3.2,
// GLM-5): R = 64 rope dims, D = 128 indexer dims. The 256-thread
// configuration has kernels compiled for it (see model_shape_kernel).
constexpr int kModelRopeDim = 64;
constexpr int kModelIndexDim = 128;

struct KernelParams {
  FusedQArgs args;

  // What the ql_nope task does: quantize it into the fp8 front, copy it into
  // the bf16 front, or nothing (separate path, or the exact alias where the
  // front already holds ql_nope and the copy would be an identity).
  enum class NopeTask : uint8_t { kNone = 0, kQuantizeFp8 = 1, kCopyBf16 = 2 };
  NopeTask nope_task = NopeTask::kNone;

  // Each task takes its 8-element vector path only when every pointer and
  // stride it touches is aligned for it (checked on the host, at run time);
  // otherwise it falls back to the element path. Both give the same bits.
  bool mqa_vectors = false;
  bool indexer_vectors = false;
  bool nope_vectors = false;
  // 4-element loads of a cos/sin row (16 bytes f32, 8 bytes bf16).
  bool mqa_cache_vectors = false;
  bool indexer_cache_vectors = false;
  // The blocked kernel's staged fast path (blocked_staged.cuh): the task's
  // rows and its cos/sin rows are copied to shared memory 16 bytes at a time.
  // Needs the vector path, R <= 64 (and D <= 128 for the indexer), rows of
  // a power-of-two number of 16-byte pieces and cache rows that start on 16
  // bytes.
  bool mqa_staged = false;
  bool indexer_staged = false;
  // The indexer's register path (blocked_indexer.cuh indexer_rows): index_q
  // and index_q_fp8 aligned for vectors, cos/sin rows for 4-value loads,
  // D <= 128. Otherwise the two-pass path.
  bool indexer_registers = false;
  // The 256-thread configuration runs a kernel compiled for the model shape
  // (R and D fixed, the indexer's layout fixed: blocked_kernel.cu) when the
  // indexer is on, takes the register path, and R, D are the model's.
  bool model_shape_kernel = false;

  // Rows past which positions are clamped (a position outside [0, P) is
  // invalid input that only the host can refuse; clamping keeps every read
  // inside the cache instead of faulting).
  int64_t mqa_cache_last_row = 0;
  int64_t indexer_cache_last_row = 0;

  // The scalars as floats.
  float q_scale = 1.0f;
  float softmax_scale = 0.0f;
  float head_scale = 0.0f;

  // Tasks of the blocked grid: [0, H) MQA heads, then NI indexer heads (when
  // has_indexer), then H ql_nope heads (when nope_task != kNone).
  int64_t indexer_task_begin = 0;
  int64_t nope_task_begin = 0;
  int64_t task_count = 0;
};

// Derives the params of a launch. The args must have passed
// validate_fused_q_args.
KernelParams make_kernel_params(const FusedQArgs& args);

// The params of tokens [first_token, T) of `params` as a launch of their
// own: every token-indexed pointer advanced to first_token, T reduced, the
// rest (caches, strides, the derived facts) unchanged. A launch that needs
// more programs than one grid holds runs in parts this way, so no kernel
// carries a first-token argument (one more value at the head of the
// dependent chain, 0.03-0.05 us per small launch on the H200).
// first_token must be a multiple of 16, so every vector-aligned row stays
// aligned.
KernelParams params_from_token(const KernelParams& params, int64_t first_token);

}  // namespace qcheck::cuda
