// Host launch API of the CUDA fused_q kernels under test. Plain C++: no CUDA
// header is needed to call it (the stream travels as a void*), so the harness
// compiles with any host compiler.
#pragma once

#include <string>

#include "ops/fused_q/args/fused_q_args.h"

namespace qcheck::cuda {

enum class KernelDesign {
  kLegacy,   // vLLM's design before the seed PR: grid (T, 3, max(ceil(H/2), NI)), one warp
  kBlocked,  // the seed PR's design: grid (cdiv(T, 16), tasks), 16 tokens x one head
};

// Bugs planted on purpose, so tests can prove the gate and the fuzzers fire.
enum class PlantedBug {
  kNone,
  kMissingTailGuard,  // blocked kernel: the last block's tokens past T are not masked
  kWildWrite,         // blocked kernel: when T % 16 == 7, query_out is passed 2^44 bytes off
                      // (an illegal address: the launch faults and the CUDA context dies),
                      // the fault a campaign must survive and attribute to its input
};

// How the blocked kernel runs its programs: the same programs and bits in
// every configuration, only the threads per CUDA block and the load path
// differ. kAuto picks by T (blocked_kernel.cu says why); tests and the bench
// force each configuration at any T so every one is checked on every shape.
enum class BlockedConfig {
  kAuto,
  kThreads256,  // 256 threads, register path (auto below 512 tokens: shortest latency)
  kStaged64,    // 64 threads, cp.async staged path where the shape allows, else the
                // register path (auto from 512 tokens when ql_nope is copied or quantized)
  kStaged32,    // 32 threads, the same paths (auto from 512 tokens otherwise)
};

struct LaunchOptions {
  PlantedBug planted_bug = PlantedBug::kNone;
  BlockedConfig blocked_config = BlockedConfig::kAuto;  // ignored by the legacy design
  // Blocked design: at most this many 16-token blocks per kernel launch
  // (0: as many as one grid holds, about 2^32 programs). A launch beyond
  // that runs in parts, each a launch of its own from its first token; tests
  // set a small number so that path runs on shapes a GPU can hold.
  int64_t token_blocks_per_launch = 0;
};

// Validates the args (validate_fused_q_args; pointers are device pointers and
// are not dereferenced on the host) and launches on `stream` (a cudaStream_t;
// nullptr is the default stream). Returns "" when launched (T = 0 launches
// nothing), else one line: an invalid argument (naming the field and the
// limit) or the CUDA error of the launch. Does not synchronize.
std::string launch_fused_q(KernelDesign design, const FusedQArgs& args, void* stream,
                           const LaunchOptions& options = {});

const char* name_of(KernelDesign design);
const char* name_of(PlantedBug bug);
const char* name_of(BlockedConfig config);

}  // namespace qcheck::cuda
