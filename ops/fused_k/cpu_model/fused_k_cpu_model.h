// fused_k's CUDA kernel (ops/fused_k/kernels) modelled on the CPU lane by
// lane: the same (token, role) tasks, each lane's chunk of a row, the same
// butterfly over 32 lanes, the same conversions, and the same planted bugs
// (ops/fused_k/planted), in plain C++ (-ffp-contract=off, every fused step
// an explicit fma). With kNone it is a second computation of the oracle's
// qcheck_fused_k_rules() shaped like the kernel, not like the oracle's rows;
// with a bug it shows on any machine what the kernel's bug does on the GPU
// (the catalogue's CPU half). Host pointers.
#pragma once

#include <string>

#include "ops/fused_k/args/fused_k_args.h"
#include "ops/fused_k/planted/planted.h"

namespace qcheck::fused_k {

// Validates the args (validate_fused_k_args) and runs the model's launch;
// "" or the refusal. Like the kernel it trusts positions and slots.
std::string run_fused_k_cpu_model(const FusedKArgs& args, planted::Bug bug = planted::kNone);

}  // namespace qcheck::fused_k
