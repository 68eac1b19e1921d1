#include "capi/fused_k_entries.h"

#include <memory>

using qcheck::fused_k::DoorTensor;
using qcheck::fused_k::FusedKCase;

namespace qcheck::capi {
namespace {

int32_t dtype_code(const std::string& dtype) {
  if (dtype == "int64") return QCHECK_DTYPE_INT64;
  if (dtype == "f32") return QCHECK_DTYPE_F32;
  if (dtype == "bf16") return QCHECK_DTYPE_BF16;
  if (dtype == "uint8") return QCHECK_DTYPE_UINT8;
  return QCHECK_DTYPE_INT32;  // (the top-k buffer: door_tensors names no other type)
}

// What both plan calls need before fill_entries: count given, the case valid.
qcheck_status valid_plan_request(const FusedKCase& c, const size_t* count, std::string& why) {
  if (count == nullptr) {
    why = "count is NULL";
    return QCHECK_INVALID_INPUT;
  }
  why = qcheck::fused_k::validate_fused_k_case(c);
  return why.empty() ? QCHECK_OK : QCHECK_INVALID_INPUT;
}

}  // namespace

qcheck_status fused_k_plan_buffers(const FusedKCase& c, qcheck_buffer_info* out, size_t capacity, size_t* count,
                                   std::string& why) {
  if (valid_plan_request(c, count, why) != QCHECK_OK) return QCHECK_INVALID_INPUT;
  return fill_entries(out, capacity, count, 1, why, [&](size_t, qcheck_buffer_info& b) {
    copy_name(b.name, "arena");
    b.bytes = static_cast<uint64_t>(qcheck::fused_k::door_arena_bytes(c));
    b.is_output = 1;
  });
}

qcheck_status fused_k_plan_tensors(const FusedKCase& c, qcheck_tensor_info* out, size_t capacity, size_t* count,
                                   std::string& why) {
  if (valid_plan_request(c, count, why) != QCHECK_OK) return QCHECK_INVALID_INPUT;
  const std::vector<DoorTensor> tensors = qcheck::fused_k::door_tensors(c);
  return fill_entries(out, capacity, count, tensors.size(), why, [&](size_t i, qcheck_tensor_info& t) {
    const DoorTensor& d = tensors[i];
    copy_name(t.name, d.name);
    t.role = d.output ? QCHECK_ROLE_OUTPUT : QCHECK_ROLE_INPUT;
    t.dtype = dtype_code(d.dtype);
    t.ndim = static_cast<int32_t>(d.shape.size());
    for (int k = 0; k < 3; ++k) {
      t.shape[k] = k < t.ndim ? d.shape[static_cast<size_t>(k)] : 1;
      t.strides[k] = k < t.ndim ? d.strides[static_cast<size_t>(k)] : 0;
    }
    t.buffer = 0;
    t.offset_bytes = static_cast<uint64_t>(d.offset_bytes);
  });
}

void fused_k_fill(const FusedKCase& c, int poison, uint8_t* const* buffers) {
  const std::vector<uint8_t> arena = qcheck::fused_k::door_arena(c, poison);
  std::memcpy(buffers[0], arena.data(), arena.size());
}

qcheck_status fused_k_expected(const FusedKCase& c, const char* profile, uint8_t* const* buffers, std::string& why) {
  std::vector<uint8_t> arena;
  why = qcheck::fused_k::door_expected(c, profile != nullptr ? profile : "", 0, &arena);
  if (!why.empty()) return QCHECK_INVALID_INPUT;
  std::memcpy(buffers[0], arena.data(), arena.size());
  return QCHECK_OK;
}

qcheck_status fused_k_judge(const FusedKCase& c, const qcheck_verdict_options* options, const uint8_t* const* run_a,
                            const uint8_t* const* run_b, qcheck_verdict** out, std::string& why) {
  why = qcheck::fused_k::door_profile_error(options != nullptr && options->profile != nullptr ? options->profile : "");
  if (!why.empty()) return QCHECK_INVALID_INPUT;
  if (options != nullptr && options->struct_size >= sizeof(qcheck_verdict_options) && options->run_graph != nullptr) {
    why = "run_graph: the graph-replay run is not judged for fused_k cases yet";
    return QCHECK_INVALID_INPUT;
  }
  const std::string kernel = options != nullptr && options->kernel != nullptr ? options->kernel : "outside kernel";
  auto v = std::make_unique<qcheck_verdict>();
  v->fused_k = qcheck::fused_k::door_judge(c, kernel, run_a[0], run_b != nullptr ? run_b[0] : nullptr,
                                            options != nullptr ? options->max_listed : 0);
  *out = v.release();
  return QCHECK_OK;
}

}  // namespace qcheck::capi
