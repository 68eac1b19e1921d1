// One planted bug of the CUDA kernels' catalogue (kernels/planted.cuh) as a
// plugin: this file and the kernels compiled with -DQCHECK_PLANTED_BUG=N
// (capi/plugins/CMakeLists.txt, QCHECK_MUTANT_KERNELS=ON). Loaded as
// `cuda-blocked+bug=NAME` or `cuda-legacy+bug=NAME` (fuzz/backends.cc), it
// gives the catalogue compile-time variants of the real kernels without
// shipping 27 more copies of them in every binary.
//
// The blocked kernel runs in several configurations (fuzz/backends.cc's
// cuda-blocked-*), and a bug may live in one of them only: the configuration
// of a launch is chosen from its shape, so the cases a fuzzer makes reach
// each of them, and both runs of one case take the same.
#include <string>

#include "capi/plugins/plugin_args.h"
#include "kernels/fused_q_launch.h"

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
  qcheck::cuda::LaunchOptions o;
  const uint64_t h = static_cast<uint64_t>(a.num_tokens) * 0x9E3779B97F4A7C15ull ^
                     static_cast<uint64_t>(a.mqa_heads * 31 + a.indexer_heads * 7 + a.index_dim + a.rope_dim +
                                           a.nope_dim + static_cast<int>(a.query_path));
  switch ((h >> 32) % 5) {
    case 0: break;  // auto: by T
    case 1: o.blocked_config = BlockedConfig::kThreads256; break;
    case 2: o.blocked_config = BlockedConfig::kStaged64; break;
    case 3: o.blocked_config = BlockedConfig::kStaged32; break;
    default: o.token_blocks_per_launch = 2; break;  // in parts
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
