// fused_k's CUDA kernel under test, behind a plain C++ header: one launch
// doing every role the args turn on (ops/fused_k/args/fused_k_args.h), with
// device pointers. Its conventions are qcheck_fused_k_rules()
// (ops/fused_k/oracle/fused_k_oracle.h), which the GPU gate holds it to bit
// for bit. Like a production kernel it trusts its inputs: positions and
// slots are checked on the host (check_fused_k_inputs) before a launch.
#pragma once

#include <string>

#include "ops/fused_k/args/fused_k_args.h"
#include "ops/fused_k/planted/planted.h"

namespace qcheck::fused_k {

// Validates the args (validate_fused_k_args), then launches on `stream` (a
// cudaStream_t; nullptr: the default stream). "" on success, else the
// validation's line or the CUDA error's name and text. Asynchronous: the
// caller synchronizes.
std::string launch_fused_k(const FusedKArgs& device_args, void* stream);

// The same with the kernel of a planted bug (ops/fused_k/planted; kNone:
// the kernel under test).
std::string launch_fused_k_planted(const FusedKArgs& device_args, planted::Bug bug, void* stream);

}  // namespace qcheck::fused_k
