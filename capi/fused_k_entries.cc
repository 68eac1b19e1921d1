#include "capi/fused_k_entries.h"

#include <memory>

using qcheck::fused_k::DoorTensor;
using qcheck::fused_k::FusedKCase;

namespace qcheck::capi {
namespace {

void copy_name(char (&to)[32], const std::string& name) {
  std::memset(to, 0, sizeof to);
  std::memcpy(to, name.data(), std::min(name.size(), sizeof to - 1));
}

int32_t dtype_code(const std::string& dtype) {
  if (dtype == "int64") return QCHECK_DTYPE_INT64;
  if (dtype == "f32") return QCHECK_DTYPE_F32;
  if (dtype == "bf16") return QCHECK_DTYPE_BF16;
  if (dtype == "uint8") return QCHECK_DTYPE_UINT8;
  return QCHECK_DTYPE_INT32;  // (the top-k buffer: door_tensors names no other type)
}

// A valid case, *count set to n, then out[capacity] checked for room and each entry's struct_size.
template <typename Info>
qcheck_status room_for(const FusedKCase& c, Info* out, size_t capacity, size_t* count, size_t n, std::string& why) {
  if (count == nullptr) {
    why = "count is NULL";
    return QCHECK_INVALID_INPUT;
  }
  why = qcheck::fused_k::validate_fused_k_case(c);
  if (!why.empty()) return QCHECK_INVALID_INPUT;
  *count = n;
  if (capacity == 0) return QCHECK_OK;
  if (out == nullptr || capacity < n) {
    why = "out holds " + std::to_string(capacity) + " entries, the plan has " + std::to_string(n);
    return QCHECK_INVALID_INPUT;
  }
  for (size_t i = 0; i < n; ++i) {
    if (out[i].struct_size < sizeof(Info)) {
      why = "out[" + std::to_string(i) + "].struct_size = " + std::to_string(out[i].struct_size) +
            ", this library needs " + std::to_string(sizeof(Info));
      return QCHECK_INVALID_INPUT;
    }
  }
  return QCHECK_OK;
}

}  // namespace

qcheck_status fused_k_plan_buffers(const FusedKCase& c, qcheck_buffer_info* out, size_t capacity, size_t* count,
                                   std::string& why) {
  const qcheck_status s = room_for(c, out, capacity, count, 1, why);
  if (s != QCHECK_OK || capacity == 0) return s;
  copy_name(out[0].name, "arena");
  out[0].bytes = static_cast<uint64_t>(qcheck::fused_k::door_arena_bytes(c));
  out[0].is_output = 1;
  return QCHECK_OK;
}

qcheck_status fused_k_plan_tensors(const FusedKCase& c, qcheck_tensor_info* out, size_t capacity, size_t* count,
                                   std::string& why) {
  if (!qcheck::fused_k::validate_fused_k_case(c).empty()) return room_for(c, out, capacity, count, 0, why);
  const std::vector<DoorTensor> tensors = qcheck::fused_k::door_tensors(c);
  const qcheck_status s = room_for(c, out, capacity, count, tensors.size(), why);
  if (s != QCHECK_OK || capacity == 0) return s;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const DoorTensor& d = tensors[i];
    qcheck_tensor_info& t = out[i];
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
  }
  return QCHECK_OK;
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
