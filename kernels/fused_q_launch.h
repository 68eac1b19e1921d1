// Host launch API of the CUDA fused_q kernels under test. Plain C++: no CUDA
// header is needed to call it (the stream travels as a void*), so the harness
// compiles with any host compiler.
#pragma once

#include <string>

#include "reference/fused_q_args.h"

namespace qcheck::cuda {

enum class KernelDesign {
  kLegacy,   // vLLM's design before the seed PR: grid (T, 3, max(ceil(H/2), NI)), one warp
  kBlocked,  // the seed PR's design: grid (cdiv(T, 16), tasks), 16 tokens x one head
};

// Bugs planted on purpose, so tests can prove the gate and the fuzzers fire.
enum class PlantedBug {
  kNone,
  kMissingTailGuard,  // blocked kernel: the last block's tokens past T are not masked
};

struct LaunchOptions {
  PlantedBug planted_bug = PlantedBug::kNone;
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

}  // namespace qcheck::cuda
