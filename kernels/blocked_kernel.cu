// The token-blocked fused_q kernel (the seed PR's design, SEMANTICS.md
// "Seed 000"): grid (cdiv(T, 16), tasks); one program (a CUDA block of 256
// or 64 threads: see the launcher) handles 16 tokens x one head of one task:
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
#include <cstdint>
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

// One program per block. A launch covers fewer than 2^32 programs (the host
// launches again from `first_token_block` for the rest; a loop inside the
// kernel would keep loop-invariant params in registers), so the block id is
// decoded with one 32-bit division: the 64-bit one cost about a hundred
// instructions per thread, a visible share of a program this small.
// The register cap is 64 (1024 threads per SM).
template <bool kGuardTail, int kThreads, bool kStaged>
__global__ void __launch_bounds__(kThreads, 1024 / kThreads)
    fused_q_blocked_kernel(const KernelParams p, int64_t first_token_block) {
  const uint32_t program = blockIdx.y * gridDim.x + blockIdx.x;
  const uint32_t tasks = static_cast<uint32_t>(p.task_count);
  const uint32_t token_block = program / tasks;
  const int64_t task = program - token_block * tasks;
  const int64_t first_token = (first_token_block + token_block) * kTokensPerBlock;
  if (task < p.indexer_task_begin) {
    if constexpr (kStaged) {
      if (p.mqa_staged) return mqa_task_staged<kGuardTail, kThreads>(p, first_token, task, *stage_memory<kStaged>());
    }
    mqa_task<kGuardTail, kThreads>(p, first_token, task);
  } else if (task < p.nope_task_begin) {
    const int64_t head = task - p.indexer_task_begin;
    if constexpr (kStaged) {
      if (p.indexer_staged) {
        return indexer_task_staged<kGuardTail, kThreads>(p, first_token, head, *stage_memory<kStaged>());
      }
    }
    indexer_task<kGuardTail, kThreads>(p, first_token, head);
  } else {
    nope_task<kGuardTail, kThreads>(p, first_token, task - p.nope_task_begin);
  }
}

template <int kThreads, bool kStaged>
std::string launch(const KernelParams& params, cudaStream_t stream, bool guard_tail) {
  const int64_t token_blocks = (params.args.num_tokens + kTokensPerBlock - 1) / kTokensPerBlock;
  // Token blocks per launch: grid x <= 2^31 - 1 and programs < 2^32.
  const int64_t per_launch = std::min<int64_t>(INT_MAX, UINT32_MAX / params.task_count);
  for (int64_t first = 0; first < token_blocks; first += per_launch) {
    const dim3 grid(static_cast<unsigned>(std::min<int64_t>(token_blocks - first, per_launch)),
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

std::string launch_blocked_kernel(const KernelParams& params, void* stream, bool guard_tail,
                                  BlockedConfig config) {
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  // Two configurations of the same programs, both bit-exact. kAuto (measured
  // on the H200 with `qcheck-bench --configs`, GLM-5 TP4): up to a few
  // hundred tokens the launch is latency-bound and 256-thread blocks give
  // each thread the fewest rows (graph replay, T = 16: 2.6 us against 3.4 us
  // with 128 or 64 threads); from 512 tokens on, 64-thread blocks with the
  // staged path keep more programs and bytes in flight per SM (T = 1024:
  // 8.1 us against 11.0 us; T = 16384: 99 us against 199 us).
  constexpr int64_t kStagedFromTokens = 512;
  if (config == BlockedConfig::kAuto) {
    config = params.args.num_tokens >= kStagedFromTokens ? BlockedConfig::kStaged64 : BlockedConfig::kThreads256;
  }
  if (config == BlockedConfig::kThreads256) return blocked::launch<256, false>(params, cuda_stream, guard_tail);
  return blocked::launch<64, true>(params, cuda_stream, guard_tail);
}

}  // namespace qcheck::cuda
