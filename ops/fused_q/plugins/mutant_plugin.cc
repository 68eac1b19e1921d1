// One planted bug of the CUDA kernels' catalogue (ops/fused_q/kernels/planted.cuh) as a
// plugin: this file and the kernels compiled with -DQCHECK_PLANTED_BUG=N
// (ops/fused_q/plugins/CMakeLists.txt, QCHECK_MUTANT_KERNELS=ON). Loaded as
// `cuda-blocked+bug=NAME` or `cuda-legacy+bug=NAME` (fuzz/backends/backends.cc), it
// gives the catalogue compile-time variants of the real kernels without
// shipping 33 more copies of them in every binary.
//
// The blocked kernel runs in several configurations (fuzz/backends/backends.cc's
// cuda-blocked-*), and a bug may live in one of them only: the configuration
// of a launch is chosen from its shape (mutant_config.h).
#include <string>

#include "ops/fused_q/kernels/fused_q_launch.h"
#include "ops/fused_q/plugins/mutant_config.h"
#include "ops/fused_q/plugins/plugin_args.h"

#ifndef QCHECK_PLANTED_BUG_NAME
#error "QCHECK_PLANTED_BUG_NAME must name the planted bug"
#endif

namespace {

#ifdef QCHECK_PLANTED_LEGACY
constexpr qcheck::cuda::KernelDesign kDesign = qcheck::cuda::KernelDesign::kLegacy;
#else
constexpr qcheck::cuda::KernelDesign kDesign = qcheck::cuda::KernelDesign::kBlocked;
#endif

qcheck::cuda::LaunchOptions options_for(const qcheck::FusedQArgs& a) {
  using qcheck::cuda::BlockedConfig;
  using qcheck::plugin::MutantConfig;
  qcheck::cuda::LaunchOptions o;
  switch (qcheck::plugin::mutant_config(a.num_tokens, a.mqa_heads, a.indexer_heads, a.index_dim, a.rope_dim,
                                        a.nope_dim, static_cast<int>(a.query_path))) {
    case MutantConfig::kAuto: break;  // by T
    case MutantConfig::kThreads256: o.blocked_config = BlockedConfig::kThreads256; break;
    case MutantConfig::kStaged64: o.blocked_config = BlockedConfig::kStaged64; break;
    case MutantConfig::kStaged32: o.blocked_config = BlockedConfig::kStaged32; break;
    case MutantConfig::kInParts: o.token_blocks_per_launch = 2; break;
  }
  return o;
}

int launch(const qcheck_plugin_args* args, void* stream, char* message, size_t message_size) {
  const qcheck::FusedQArgs a = qcheck::plugin::fused_q_args_of(*args);
  const std::string error = qcheck::cuda::launch_fused_q(kDesign, a, stream, options_for(a));
  return error.empty() ? 0 : qcheck::plugin::launch_failed(error, message, message_size);
}

const qcheck_plugin kPlugin = {
    sizeof(qcheck_plugin), QCHECK_PLUGIN_ABI_VERSION, "planted bug " QCHECK_PLANTED_BUG_NAME, "qcheck",
    QCHECK_PLUGIN_MEMORY_CUDA, launch, nullptr, nullptr,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const qcheck_plugin* qcheck_plugin_v1(void) { return &kPlugin; }
