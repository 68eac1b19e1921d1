// A host-memory plugin around the CPU model of the blocked kernel
// (ops/fused_q/cpu_model/cpu_model.h): the plugin door exercised on a machine without a GPU
// (CI). One source, four libraries, chosen by QCHECK_HOST_PLUGIN_VARIANT:
//   correct   the model as it is, every case
//   bug       the model with NeoX and interleaved swapped in the indexer
//             (a planted bug the fuzzer must find through the plugin door)
//   narrow    the model, declaring a narrow domain (R = 64 and L = 512 only,
//             bf16 packed only, contiguous tensors, at most 64 tokens) and a
//             supports callback that refuses odd H: the mutator must keep
//             inside it, and a case outside it is refused, not a finding
//   failing   returns an error status on cases with T % 16 == 7 (the
//             plugin's message must reach the report as a runtime error)
//   newer-abi declares an ABI version this qcheck does not have (refused
//             when loaded, naming both versions)
#include <string>

#include "ops/fused_q/cpu_model/cpu_model.h"
#include "ops/fused_q/plugins/plugin_args.h"

#ifndef QCHECK_HOST_PLUGIN_VARIANT
#error "QCHECK_HOST_PLUGIN_VARIANT must be 0 (correct), 1 (bug), 2 (narrow), 3 (failing) or 4 (newer-abi)"
#endif

namespace {

constexpr int kVariant = QCHECK_HOST_PLUGIN_VARIANT;
constexpr const char* kNames[] = {"host model", "host model, indexer rope swapped", "host model, narrow domain",
                                  "host model, failing on T % 16 == 7", "host model, newer ABI"};

int launch(const qcheck_plugin_args* args, void* /*stream*/, char* message, size_t message_size) {
  const qcheck::FusedQArgs f = qcheck::plugin::fused_q_args_of(*args);
  if (kVariant == 3 && f.num_tokens % 16 == 7) {
    return qcheck::plugin::launch_failed("planted error status: T % 16 == 7 (T = " + std::to_string(f.num_tokens) +
                                             ")",
                                         message, message_size);
  }
  const qcheck::PlantedCpuBug bug = kVariant == 1 ? qcheck::PlantedCpuBug::kSwappedIndexerRope
                                                  : qcheck::PlantedCpuBug::kNone;
  const std::string error = qcheck::run_blocked_model(f, bug);
  return error.empty() ? 0 : qcheck::plugin::launch_failed(error, message, message_size);
}

void narrow_domain(qcheck_plugin_domain* d) {
  d->query_paths = 1u << QCHECK_PLUGIN_BF16_PACKED;
  d->contiguous_only = 1;
  d->rope_dims[0] = 64;
  d->nope_dims[0] = 512;
  d->max_tokens = 64;
}

int odd_heads_refused(const qcheck_plugin_args* args, char* message, size_t message_size) {
  if (args->mqa_heads % 2 == 0) return 1;
  qcheck::plugin::launch_failed("mqa_heads " + std::to_string(args->mqa_heads) + " is odd (it wants even H)",
                                message, message_size);
  return 0;
}

const qcheck_plugin kPlugin = {
    sizeof(qcheck_plugin),
    kVariant == 4 ? QCHECK_PLUGIN_ABI_VERSION + 1 : QCHECK_PLUGIN_ABI_VERSION,
    kNames[kVariant],
    "qcheck",
    QCHECK_PLUGIN_MEMORY_HOST,
    launch,
    kVariant == 2 ? narrow_domain : nullptr,
    kVariant == 2 ? odd_heads_refused : nullptr,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const qcheck_plugin* qcheck_plugin_v1(void) { return &kPlugin; }
