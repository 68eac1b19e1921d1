// The launch of a case's arena on the GPU: the arena copied to the device,
// the kernel (of a planted bug, or kNone) launched with the args rebased onto
// it, the arena copied back. One device buffer per thread, grown as needed.
// Built from cuda_run.cc where nvcc was found, else cuda_run_none.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ops/fused_k/args/fused_k_args.h"
#include "ops/fused_k/planted/planted.h"

namespace qcheck::fused_k {

// "" when a CUDA device can be used, else why not.
std::string cuda_ready();

// `args` hold arena offsets + 1 (case_launch.h); `bytes` is the arena, in
// and out. "" or the error (the launch's refusal, a CUDA error's name).
std::string run_on_cuda(const FusedKArgs& args, planted::Bug bug, std::vector<uint8_t>& bytes);

}  // namespace qcheck::fused_k
