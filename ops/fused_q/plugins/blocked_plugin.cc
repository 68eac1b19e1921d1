// A CUDA plugin around this project's token-blocked kernel
// (ops/fused_q/kernels/fused_q_launch.h), built by CMake with the kernels: the plugin
// door on the GPU with a kernel whose bits are known, so that the gate can
// tell a fault of the door from one of a kernel. The same launch as the
// cuda-blocked backend, reached through dlopen and the C ABI instead.
#include <string>

#include "ops/fused_q/kernels/fused_q_launch.h"
#include "ops/fused_q/plugins/plugin_args.h"

namespace {

int launch(const qcheck_plugin_args* args, void* stream, char* message, size_t message_size) {
  const std::string error =
      qcheck::cuda::launch_fused_q(qcheck::cuda::KernelDesign::kBlocked, qcheck::plugin::fused_q_args_of(*args), stream);
  return error.empty() ? 0 : qcheck::plugin::launch_failed(error, message, message_size);
}

const qcheck_plugin kPlugin = {
    sizeof(qcheck_plugin), QCHECK_PLUGIN_ABI_VERSION, "cuda blocked kernel (plugin)", "qcheck",
    QCHECK_PLUGIN_MEMORY_CUDA, launch, nullptr, nullptr,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const qcheck_plugin* qcheck_plugin_v1(void) { return &kPlugin; }
