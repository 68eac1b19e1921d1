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
// grid as it comes, indexer rows first (see run_program_in_grid_order).
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

#include "ops/fused_q/kernels/blocked_indexer.cuh"
#include "ops/fused_q/kernels/blocked_staged.cuh"
#include "ops/fused_q/kernels/kernel_launchers.h"

namespace qcheck::cuda {
namespace blocked {
namespace {

// The staged configurations (T >= 512 under kAuto): one program per block,
// the block id decoded task-fastest (tasks in KernelParams' order), so the
// programs of one token block run side by side (see the top of the file).
// That matters only when the launch has more programs than fit on the GPU
// at once. A launch covers fewer than 2^32 programs (the host launches the
// rest as launches of their own, params_from_token; a loop inside the
// kernel would keep loop-invariant params in registers), so the block id is
// decoded with one 32-bit division: the 64-bit one cost about a hundred
// instructions per thread, a visible share of a program this small.
template <bool kGuardTail, int kThreads>
__device__ __forceinline__ void run_staged_program(const KernelParams& p, Stage& stage) {
  const uint32_t program = blockIdx.y * gridDim.x + blockIdx.x;
  const uint32_t tasks = static_cast<uint32_t>(p.task_count);
  const uint32_t token_block = program / tasks;
  const uint32_t task = program - token_block * tasks;
  const int64_t first_token = static_cast<int64_t>(token_block) * kTokensPerBlock;
  if (task < p.indexer_task_begin) {
    if (p.mqa_staged) return mqa_task_staged<kGuardTail, kThreads>(p, first_token, task, stage);
    mqa_task<kGuardTail, kThreads>(p, first_token, task);
  } else if (task < p.nope_task_begin) {
    const int64_t head = task - p.indexer_task_begin;
    if (p.indexer_staged) return indexer_task_staged<kGuardTail, kThreads>(p, first_token, head, stage);
    indexer_task<kGuardTail, kThreads, RuntimeIndexerLayout>(p, first_token, head);
  } else {
    nope_task<kGuardTail, kThreads>(p, first_token, task - p.nope_task_begin);
  }
}

// The 256-thread configuration (small launches, where every program is
// resident at once and the launch's latency is its longest chain of
// dependent steps) takes the grid as it comes, with no division: x the
// token block, y the program's row in the order the hardware dispatches
// rows: the indexer programs (the heaviest, every warp busy) first, then
// MQA, then ql_nope. With more programs than SMs the first wave then puts
// an indexer program on every SM and the light MQA programs join them,
// instead of two indexer programs sharing an SM. Measured on the H200
// (graphs, GLM-5 TP4, against MQA first): T = 1, 16, 64 faster by 0.03,
// 0.03, 0.08 us, T = 256 by 0.4 us, T = 128 slower by 0.02 us; DeepSeek
// (NI = 64) within 0.04 us either way.
//
// kNopeTask false leaves the ql_nope task out of the kernel (the host
// launches such a kernel only where the launch has no ql_nope programs):
// its code, even never run, made the small launches slower (0.03-0.04 us at
// T = 1 and 64).
template <bool kGuardTail, typename Layout, bool kNopeTask>
__device__ __forceinline__ void run_program_in_grid_order(const KernelParams& p) {
  constexpr int kThreads = 256;
  const int64_t first_token = static_cast<int64_t>(blockIdx.x) * kTokensPerBlock;
  const uint32_t row = blockIdx.y;
  const uint32_t indexer_programs = static_cast<uint32_t>(p.nope_task_begin - p.indexer_task_begin);
  if (row < indexer_programs) {
    indexer_task<kGuardTail, kThreads, Layout>(p, first_token, row);
  } else if (!kNopeTask || row < p.nope_task_begin) {
    mqa_task<kGuardTail, kThreads, Layout::kModelShape>(p, first_token, row - indexer_programs);
  } else if constexpr (kNopeTask) {
    nope_task<kGuardTail, kThreads>(p, first_token, row - p.nope_task_begin);
  }
}

// One program per block; the register cap is 64 (1024 threads per SM).
template <bool kGuardTail, int kThreads, bool kStaged, typename Layout, bool kNopeTask = true>
__global__ void __launch_bounds__(kThreads, 1024 / kThreads)
    fused_q_blocked_kernel(const KernelParams p) {
  if constexpr (kStaged) {
    static_assert(!Layout::kFixed, "the staged configurations read the layout at run time");
    __shared__ Stage stage;  // only the staged kernels allocate it
    run_staged_program<kGuardTail, kThreads>(p, stage);
  } else {
    static_assert(kThreads == 256, "the unstaged configuration has 256 threads");
    run_program_in_grid_order<kGuardTail, Layout, kNopeTask>(p);
  }
}

// Where the launch runs, and at most how many token blocks each kernel
// launch takes (LaunchOptions::token_blocks_per_launch; 0: as many as the
// grid allows).
struct Launch {
  cudaStream_t stream;
  bool guard_tail;
  int64_t token_blocks_per_launch;
};

template <int kThreads, bool kStaged, typename Layout, bool kNopeTask = true>
std::string launch(const KernelParams& params, const Launch& where) {
  const cudaStream_t stream = where.stream;
  const int64_t token_blocks = (params.args.num_tokens + kTokensPerBlock - 1) / kTokensPerBlock;
  // Token blocks per launch: grid x <= 2^31 - 1 and programs < 2^32.
  int64_t per_launch = std::min<int64_t>(INT_MAX, UINT32_MAX / params.task_count);
  if (where.token_blocks_per_launch > 0) per_launch = std::min(per_launch, where.token_blocks_per_launch);
  for (int64_t first = 0; first < token_blocks; first += per_launch) {
    const dim3 grid(static_cast<unsigned>(std::min<int64_t>(token_blocks - first, per_launch)),
                    static_cast<unsigned>(params.task_count));
    const KernelParams part = first == 0 ? params : params_from_token(params, first * kTokensPerBlock);
    if (where.guard_tail) {
      fused_q_blocked_kernel<true, kThreads, kStaged, Layout, kNopeTask><<<grid, kThreads, 0, stream>>>(part);
    } else if constexpr (!Layout::kFixed) {
      // The planted bug exists in the run-time layout only (fewer kernels to build and ship).
      fused_q_blocked_kernel<false, kThreads, kStaged, Layout><<<grid, kThreads, 0, stream>>>(part);
    } else {
      return "cuda-blocked: internal error: the planted tail bug has no kernel for a fixed indexer layout";
    }
    std::string error = launch_error("cuda-blocked");
    if (!error.empty()) return error;
  }
  return "";
}

// The 256-thread configuration: a kernel compiled for the model shape with
// the args' indexer layout, with or without the ql_nope task (8 kernels,
// see indexer_task and run_program_in_grid_order for why), or the run-time
// kernel for every other launch (other shapes or layouts, no indexer, or
// the planted tail bug).
std::string launch_threads256(const KernelParams& params, const Launch& where) {
  // A planted-bug build has the run-time kernels only (fewer to compile and
  // ship), except the bug that lives in the model-shape kernels.
  const bool runtime_only = planted::any() && !planted::is(planted::kModelShapeHalfAmax);
  if (runtime_only || !where.guard_tail || !params.model_shape_kernel) {
    return launch<256, false, RuntimeIndexerLayout>(params, where);
  }
  const bool nope = params.nope_task != KernelParams::NopeTask::kNone;
  return with_indexer_layout<true>(params.args, [&](auto layout) {
    using Layout = decltype(layout);
    return nope ? launch<256, false, Layout, true>(params, where) : launch<256, false, Layout, false>(params, where);
  });
}

}  // namespace
}  // namespace blocked

std::string launch_blocked_kernel(const KernelParams& params, void* stream, bool guard_tail,
                                  BlockedConfig config, int64_t token_blocks_per_launch) {
  const blocked::Launch where{static_cast<cudaStream_t>(stream), guard_tail, token_blocks_per_launch};
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
    case BlockedConfig::kThreads256: return blocked::launch_threads256(params, where);
    case BlockedConfig::kStaged32: return blocked::launch<32, true, blocked::RuntimeIndexerLayout>(params, where);
    default: return blocked::launch<64, true, blocked::RuntimeIndexerLayout>(params, where);
  }
}

}  // namespace qcheck::cuda
