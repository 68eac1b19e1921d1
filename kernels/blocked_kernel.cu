// The token-blocked fused_q kernel (the seed PR's design, SEMANTICS.md
// "Seed 000"): grid (cdiv(T, 16), tasks); one program (a CUDA block of 256,
// 64 or 32 threads: see the launcher) handles 16 tokens x one head of one
// task:
//   tasks [0, H)              MQA q_pe RoPE of head h       (blocked_tasks.cuh)
//   tasks [H, H + NI)         indexer head (has_indexer)    (blocked_indexer.cuh)
//   tasks [H + NI, + H)       ql_nope front of head h: fp8 quantize or bf16
//                             copy (absent on the separate path and for the
//                             exact alias, where the copy is an identity)
// Tokens live on grid x, so T has no 65535 limit; every offset is 64-bit.
//
// Block order: the hardware dispatches blocks x-fastest. The staged
// configurations (large T) read their block id in that order and decode it
// task-fastest, so the H + NI (+ H) programs of one token block run side by
// side and share that block's cos/sin rows in L2 instead of streaming them
// from DRAM once per task. The 256-thread configuration (small T) takes the
// grid as it comes (see fused_q_blocked_kernel).
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
//
// The task-fastest decode matters only when the launch has more programs
// than fit on the GPU at once, so the staged configurations (T >= 512 under
// kAuto) use it; the 256-thread configuration runs small launches, where
// every program is resident anyway and the division (and the load of
// task_count it waits for) would sit on the dependent chain that sets the
// launch's latency, so it takes the grid as it comes: x the token block,
// y the task.
template <bool kGuardTail, int kThreads, bool kStaged, typename Layout>
__global__ void __launch_bounds__(kThreads, 1024 / kThreads)
    fused_q_blocked_kernel(const KernelParams p, int64_t first_token_block) {
  uint32_t token_block, task;
  if constexpr (kStaged) {
    const uint32_t program = blockIdx.y * gridDim.x + blockIdx.x;
    const uint32_t tasks = static_cast<uint32_t>(p.task_count);
    token_block = program / tasks;
    task = program - token_block * tasks;
  } else {
    token_block = blockIdx.x;
    task = blockIdx.y;
  }
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
    indexer_task<kGuardTail, kThreads, Layout>(p, first_token, head);
  } else {
    nope_task<kGuardTail, kThreads>(p, first_token, task - p.nope_task_begin);
  }
}

template <int kThreads, bool kStaged, typename Layout>
std::string launch(const KernelParams& params, cudaStream_t stream, bool guard_tail) {
  const int64_t token_blocks = (params.args.num_tokens + kTokensPerBlock - 1) / kTokensPerBlock;
  // Token blocks per launch: grid x <= 2^31 - 1 and programs < 2^32.
  const int64_t per_launch = std::min<int64_t>(INT_MAX, UINT32_MAX / params.task_count);
  for (int64_t first = 0; first < token_blocks; first += per_launch) {
    const dim3 grid(static_cast<unsigned>(std::min<int64_t>(token_blocks - first, per_launch)),
                    static_cast<unsigned>(params.task_count));
    if (guard_tail) {
      fused_q_blocked_kernel<true, kThreads, kStaged, Layout><<<grid, kThreads, 0, stream>>>(params, first);
    } else if constexpr (!Layout::kFixed) {
      // The planted bug exists in the run-time layout only (fewer kernels to build and ship).
      fused_q_blocked_kernel<false, kThreads, kStaged, Layout><<<grid, kThreads, 0, stream>>>(params, first);
    } else {
      return "cuda-blocked: internal error: the planted tail bug has no kernel for a fixed indexer layout";
    }
    std::string error = launch_error("cuda-blocked");
    if (!error.empty()) return error;
  }
  return "";
}

// The 256-thread configuration with the indexer's layout fixed here
// (indexer_task says why): the register path of the args' layout, or the
// run-time choice when the register path does not apply, there is no
// indexer, or the planted tail bug is asked for.
std::string launch_threads256(const KernelParams& params, cudaStream_t stream, bool guard_tail) {
  if (!guard_tail || !params.args.has_indexer || !params.indexer_registers) {
    return launch<256, false, RuntimeIndexerLayout>(params, stream, guard_tail);
  }
  return with_indexer_layout(params.args, [&](auto layout) {
    return launch<256, false, decltype(layout)>(params, stream, guard_tail);
  });
}

}  // namespace
}  // namespace blocked

std::string launch_blocked_kernel(const KernelParams& params, void* stream, bool guard_tail,
                                  BlockedConfig config) {
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  // Configurations of the same programs, all bit-exact. kAuto (measured on
  // the H200 with `qcheck-bench --configs`, GLM-5 TP4): up to a few hundred
  // tokens the launch is latency-bound and 256-thread blocks give each
  // thread the fewest rows (graph replay, T = 16: 2.0 us against 3.2 us with
  // 64 threads). From 512 tokens on, small blocks on the staged path keep
  // more programs, and so more bytes, in flight per SM: 32 threads when every
  // program is a small MQA or indexer one (2-6 KB; T = 16384 separate path:
  // 94 us against 101 us with 64 threads and 200 us with 256), 64 threads
  // when ql_nope programs (16 KB each) are in the launch (packed copy: 213 us
  // against 222 us with 32 threads).
  constexpr int64_t kStagedFromTokens = 512;
  if (config == BlockedConfig::kAuto) {
    const bool small_programs_only = params.nope_task == KernelParams::NopeTask::kNone;
    config = params.args.num_tokens < kStagedFromTokens ? BlockedConfig::kThreads256
             : small_programs_only                      ? BlockedConfig::kStaged32
                                                        : BlockedConfig::kStaged64;
  }
  switch (config) {
    case BlockedConfig::kThreads256: return blocked::launch_threads256(params, cuda_stream, guard_tail);
    case BlockedConfig::kStaged32:
      return blocked::launch<32, true, blocked::RuntimeIndexerLayout>(params, cuda_stream, guard_tail);
    default: return blocked::launch<64, true, blocked::RuntimeIndexerLayout>(params, cuda_stream, guard_tail);
  }
}

}  // namespace qcheck::cuda
