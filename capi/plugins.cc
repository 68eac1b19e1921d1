// The C API's plugins: the loader, domain and launch of fuzz/backends/plugin.h for a
// caller that holds the device memory itself (the Python door over torch).
#include <vector>

#include "capi/capi_edge.h"
#include "fuzz/backends/plugin.h"
#include "fuzz/buffers/guarded_buffer.h"
#include "fuzz/buffers/tensors.h"

using namespace qcheck::capi;

namespace {

const qcheck::LoadedPlugin& loaded(const qcheck_loaded_plugin* p) {
  // The handle is the loader's own object (fuzz/backends/plugin.h keeps it for the
  // process); qcheck_loaded_plugin stays an incomplete type that only names it.
  return *reinterpret_cast<const qcheck::LoadedPlugin*>(p);
}

qcheck_status null_plugin_or_case(const qcheck_loaded_plugin* p, const qcheck_case* c, std::string& why) {
  if (p == nullptr || c == nullptr) {
    why = p == nullptr ? "plugin is NULL" : "case is NULL";
    return QCHECK_INVALID_INPUT;
  }
  if (c->fused_k) {
    why = "the plugins are fused_q kernels: a fused_k case is not theirs";
    return QCHECK_INVALID_INPUT;
  }
  return QCHECK_OK;
}

}  // namespace

extern "C" {

qcheck_status qcheck_plugin_load(const char* path, const qcheck_loaded_plugin** out, char* message,
                                 size_t message_size) {
  return guarded(message, message_size, [&](std::string& why) {
    if (path == nullptr || out == nullptr) {
      why = "path or out is NULL";
      return QCHECK_INVALID_INPUT;
    }
    const qcheck::LoadedPlugin* plugin = nullptr;
    why = qcheck::load_plugin(path, &plugin);
    if (!why.empty()) return QCHECK_INVALID_INPUT;
    *out = reinterpret_cast<const qcheck_loaded_plugin*>(plugin);
    return QCHECK_OK;
  });
}

qcheck_status qcheck_plugin_info(const qcheck_loaded_plugin* p, char* out, size_t capacity, size_t* needed) {
  if (p == nullptr) return QCHECK_INVALID_INPUT;
  return copy_text(qcheck::plugin_info_json(loaded(p)), out, capacity, needed);
}

qcheck_status qcheck_plugin_check_case(const qcheck_loaded_plugin* p, const qcheck_case* c, char* message,
                                       size_t message_size) {
  return guarded(message, message_size, [&](std::string& why) {
    if (null_plugin_or_case(p, c, why) != QCHECK_OK) return QCHECK_INVALID_INPUT;
    why = qcheck::validate_case(c->c);
    if (why.empty()) why = qcheck::outside_plugin_domain(loaded(p), c->c);
    return why.empty() ? QCHECK_OK : QCHECK_INVALID_INPUT;
  });
}

qcheck_status qcheck_plugin_fit_case(const qcheck_loaded_plugin* p, const qcheck_case* c, qcheck_case** out,
                                     char* message, size_t message_size) {
  return guarded(message, message_size, [&](std::string& why) {
    if (null_plugin_or_case(p, c, why) != QCHECK_OK) return QCHECK_INVALID_INPUT;
    if (out == nullptr) {
      why = "out is NULL";
      return QCHECK_INVALID_INPUT;
    }
    qcheck::Case fitted = c->c;
    qcheck::fit_to_domain(loaded(p).domain, fitted);
    *out = new qcheck_case{fitted};
    return QCHECK_OK;
  });
}

qcheck_status qcheck_plugin_launch(const qcheck_loaded_plugin* p, const qcheck_case* c, uint8_t* const* allocations,
                                   size_t allocation_count, void* stream, char* message, size_t message_size) {
  return guarded(message, message_size, [&](std::string& why) {
    if (null_plugin_or_case(p, c, why) != QCHECK_OK) return QCHECK_INVALID_INPUT;
    if (valid_case_and_buffers(c, allocations, allocation_count, why) != QCHECK_OK) return QCHECK_INVALID_INPUT;
    const qcheck::TensorPlan plan = qcheck::plan_tensors(c->c);
    std::vector<uint8_t*> payloads;
    for (size_t i = 0; i < allocation_count; ++i) {
      if (allocations[i] == nullptr) {
        why = "allocations[" + std::to_string(i) + "] is NULL";
        return QCHECK_INVALID_INPUT;
      }
      payloads.push_back(allocations[i] + qcheck::GuardedBuffer::kSentinelBytes);
    }
    const qcheck::Outcome o = qcheck::run_plugin(loaded(p), c->c, qcheck::make_fused_q_args(c->c, plan, payloads), stream);
    why = o.reason;
    return o.is_ok() ? QCHECK_OK : o.kind == qcheck::OutcomeKind::kInvalidInput ? QCHECK_INVALID_INPUT : QCHECK_RUNTIME_ERROR;
  });
}

}  // extern "C"
