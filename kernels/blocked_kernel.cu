// The token-blocked fused_q kernel (the seed PR's design, SEMANTICS.md
// "Seed 000"): grid (cdiv(T, 16), tasks); one program (a CUDA block of 128
// threads, or 64 on the staged path for T >= 2048: see the launcher) handles
// 16 tokens x one head of one task:
//   tasks [0, H)              MQA q_pe RoPE of head h       (blocked_tasks.cuh)
//   tasks [H, H + NI)         indexer head (has_indexer)    (blocked_indexer.cuh)
//   tasks [H + NI, + H)       ql_nope front of head h: fp8 quantize or bf16
//                             copy (absent on the separate path and for the
//                             exact alias, where the copy is an identity)
// Tokens live on grid x, so T has no 65535 limit; every offset is 64-bit.
//
// Block order: the hardware dispatches blocks x-fastest. The kernel reads its
// block id in that order and decodes it task-fastest, so the H + NI (+ H)
// programs of one token block run side by side and share that block's
// cos/sin rows in L2 instead of streaming them from DRAM once per task.
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <string>

#include "kernels/blocked_indexer.cuh"
#include "kernels/blocked_staged.cuh"
#include "kernels/kernel_launchers.h"

namespace qcheck::cuda {
namespace blocked {
namespace {

// The staged path's shared memory: one allocation per kernel that uses it.
template <bool kStaged>
__device__ __forceinline__ Stage* stage_memory() {
  if constexpr (kStaged) {
    __shared__ Stage stage;
    return &stage;
  } else {
    return nullptr;
  }
}

// One program per block. A launch covers at most 2^31 - 1 token blocks on
// grid x; the host launches again from `first_token_block` for the rest (a
// loop inside the kernel would keep loop-invariant params in registers).
// The register cap is 64 (1024 threads per SM).
template <bool kGuardTail, int kThreads, bool kStaged>
__global__ void __launch_bounds__(kThreads, 1024 / kThreads)
    fused_q_blocked_kernel(const KernelParams p, int64_t first_token_block) {
  const int64_t program = static_cast<int64_t>(blockIdx.y) * gridDim.x + blockIdx.x;
  const int64_t token_block = program / p.task_count;
  const int64_t task = program - token_block * p.task_count;
  const int64_t first_token = (first_token_block + token_block) * kTokensPerBlock;
  if (task < p.indexer_task_begin) {
    if (kStaged && p.mqa_staged) {
      return mqa_task_staged<kGuardTail, kThreads>(p, first_token, task, *stage_memory<kStaged>());
    }
    mqa_task<kGuardTail, kThreads>(p, first_token, task);
  } else if (task < p.nope_task_begin) {
    const int64_t head = task - p.indexer_task_begin;
    if (kStaged && p.indexer_staged) {
      return indexer_task_staged<kGuardTail, kThreads>(p, first_token, head, *stage_memory<kStaged>());
    }
    indexer_task<kGuardTail, kThreads>(p, first_token, head);
  } else {
    nope_task<kGuardTail, kThreads>(p, first_token, task - p.nope_task_begin);
  }
}

template <int kThreads, bool kStaged>
std::string launch(const KernelParams& params, cudaStream_t stream, bool guard_tail) {
  const int64_t token_blocks = (params.args.num_tokens + kTokensPerBlock - 1) / kTokensPerBlock;
  for (int64_t first = 0; first < token_blocks; first += INT_MAX) {
    const dim3 grid(static_cast<unsigned>(std::min<int64_t>(token_blocks - first, INT_MAX)),
                    static_cast<unsigned>(params.task_count));
    if (guard_tail) {
      fused_q_blocked_kernel<true, kThreads, kStaged><<<grid, kThreads, 0, stream>>>(params, first);
    } else {
      fused_q_blocked_kernel<false, kThreads, kStaged><<<grid, kThreads, 0, stream>>>(params, first);
    }
    std::string error = launch_error("cuda-blocked");
    if (!error.empty()) return error;
  }
  return "";
}

}  // namespace
}  // namespace blocked

std::string launch_blocked_kernel(const KernelParams& params, void* stream, bool guard_tail) {
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  // Two configurations of the same programs, both bit-exact (measured on the
  // H200, GLM-5 TP4, see tools/bench): below 2048 tokens the 128-thread
  // register path has the shorter latency (graph replay, T = 1..1024); from
  // 2048 tokens on, 64-thread blocks with the staged path keep more bytes in
  // flight per SM (T = 16384: 143 us instead of 171 us on the separate path,
  // 221 instead of 263 us with the ql_nope copy).
  constexpr int64_t kStagedFromTokens = 2048;
  if (params.args.num_tokens >= kStagedFromTokens) {
    return blocked::launch<64, true>(params, cuda_stream, guard_tail);
  }
  return blocked::launch<128, false>(params, cuda_stream, guard_tail);
}

}  // namespace qcheck::cuda
