#include "fuzz/exchange/exchange.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fuzz/case/case_file.h"
#include "fuzz/case/case_json.h"
#include "fuzz/exchange/npy.h"
#include "fuzz/verdict/verdict.h"
#include "numerics/float_bits.h"
#include "numerics/row_ops.h"

namespace qcheck {
namespace {

// The folder and any missing parents (as mkdir -p).
std::string make_dir(const std::string& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) return dir + ": cannot create (" + error.message() + ")";
  return "";
}

std::string write_npy(const std::string& path, const NpyArray& a) {
  const std::vector<uint8_t> bytes = encode_npy(a);
  return write_file_whole(path, std::string(bytes.begin(), bytes.end()));
}

std::string read_bytes(const std::string& path, std::vector<uint8_t>* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return path + ": cannot open";
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return "";
}

const char* role_name(TensorRole role) {
  return role == TensorRole::kInput ? "input" : role == TensorRole::kOutput ? "output" : "untouched-output";
}

// The element type of each buffer: that of the first tensor in it.
// The element type of a buffer's file: its tensors' type, or bytes (u8) for
// a buffer of several types (a cache row of codes and scales).
ElementType buffer_type(const TensorPlan& plan, size_t buffer) {
  const TensorGeometry* first = nullptr;
  for (const TensorGeometry& g : plan.tensors) {
    if (size_t(g.buffer) != buffer) continue;
    if (first != nullptr && g.type != first->type) return ElementType::kU8;
    if (first == nullptr) first = &g;
  }
  return first != nullptr ? first->type : ElementType::kE4m3;
}

void scalar_entry(nlohmann::ordered_json& j, const char* name, uint32_t bits) {
  char hex[16];
  std::snprintf(hex, sizeof(hex), "0x%08X", bits);
  j[name] = {{"value", double(float_from_bits(bits))}, {"bits", hex}};
}

}  // namespace

const char* npy_descr(ElementType type) {
  switch (type) {
    case ElementType::kInt64: return "<i8";
    case ElementType::kF32: return "<f4";
    case ElementType::kBf16: return "<u2";
    case ElementType::kInt32: return "<i4";
    case ElementType::kE4m3:
    case ElementType::kU8:
    case ElementType::kUe8m0:
    case ElementType::kE2m1x2:
    case ElementType::kE4m3fnuz: return "|u1";
  }
  return "|u1";
}

const char* real_dtype_name(ElementType type) {
  switch (type) {
    case ElementType::kInt64: return "int64";
    case ElementType::kF32: return "float32";
    case ElementType::kBf16: return "bfloat16";
    case ElementType::kE4m3: return "float8_e4m3fn";
    case ElementType::kInt32: return "int32";
    case ElementType::kU8: return "uint8";
    case ElementType::kUe8m0: return "float8_e8m0fnu";
    case ElementType::kE2m1x2: return "float4_e2m1fn_x2";
    case ElementType::kE4m3fnuz: return "float8_e4m3fnuz";
  }
  return "?";
}

std::string write_buffers(const TensorSet& set, const std::string& dir) {
  for (size_t b = 0; b < set.buffers.size(); ++b) {
    const ElementType type = buffer_type(set.plan, b);
    const GuardedBuffer& buffer = set.buffers[b];
    NpyArray a;
    a.descr = npy_descr(type);
    a.shape = {int64_t(buffer.size()) / element_bytes(type)};
    a.data.assign(buffer.data(), buffer.data() + buffer.size());
    const std::string error = write_npy(dir + "/" + set.plan.buffers[b].name + ".npy", a);
    if (!error.empty()) return error;
  }
  return "";
}

std::string export_case(const Case& c, const std::string& dir) {
  std::string error = validate_case(c);
  if (!error.empty()) return "invalid case: " + error;
  if (!(error = make_dir(dir)).empty()) return error;
  const TensorSet set = build_tensor_set(c, Poison::kA);
  nlohmann::ordered_json m;
  m["format"] = "qcheck-exchange 1";
  m["case"] = "case.json";
  m["poison"] = "A (0xFF bytes)";
  m["sentinel_bytes"] = GuardedBuffer::kSentinelBytes;
  m["aliased"] = c.alias == AliasMode::kExactFront;
  nlohmann::ordered_json scalars;
  scalar_entry(scalars, "q_scale", c.q_scale_bits);
  scalar_entry(scalars, "softmax_scale", c.softmax_scale_bits);
  scalar_entry(scalars, "head_scale", c.head_scale_bits);
  m["scalars"] = scalars;
  if (!(error = write_buffers(set, dir)).empty()) return error;
  m["buffers"] = nlohmann::ordered_json::array();
  for (size_t b = 0; b < set.buffers.size(); ++b) {
    const ElementType type = buffer_type(set.plan, b);
    m["buffers"].push_back({{"file", set.plan.buffers[b].name + ".npy"},
                            {"dtype", npy_descr(type)},
                            {"real_dtype", real_dtype_name(type)},
                            {"elements", int64_t(set.buffers[b].size()) / element_bytes(type)},
                            {"is_output", set.plan.buffers[b].is_output}});
  }
  m["tensors"] = nlohmann::ordered_json::array();
  for (const TensorGeometry& g : set.plan.tensors) {
    const OutsideShape o = outside_shape(g);
    m["tensors"].push_back(
        {{"name", name_of(g.id)},
         {"role", role_name(g.role)},
         {"file", set.plan.buffers[size_t(g.buffer)].name + ".npy"},
         {"offset", int64_t(GuardedBuffer::kSentinelBytes) / element_bytes(g.type) + g.offset},
         {"shape", std::vector<int64_t>(o.shape, o.shape + o.ndim)},
         {"strides", std::vector<int64_t>(o.strides, o.strides + o.ndim)},
         {"dtype", npy_descr(g.type)},
         {"real_dtype", real_dtype_name(g.type)}});
  }
  if (!(error = write_file_whole(dir + "/manifest.json", m.dump(2) + "\n")).empty()) return error;
  return write_file_whole(dir + "/case.json", case_to_json(c) + "\n");
}

std::string write_expected(const Case& c, const Profile& profile, const std::string& dir) {
  std::string error = validate_case(c);
  if (!error.empty()) return "invalid case: " + error;
  if (!(error = make_dir(dir)).empty()) return error;
  const TensorSet set = expected_tensors(c, profile, simd_row_ops(), Poison::kA, &error);
  if (!error.empty()) return error;
  for (const TensorGeometry& g : set.plan.tensors) {
    if (g.role == TensorRole::kInput) continue;
    const OutsideShape o = outside_shape(g);
    NpyArray a;
    a.descr = npy_descr(g.type);
    a.shape.assign(o.shape, o.shape + o.ndim);
    const int bytes = element_bytes(g.type);
    for (int64_t t = 0; t < g.rows; ++t) {
      for (int64_t h = 0; h < g.cols; ++h) {
        const uint8_t* row = set.element(g, t, h, 0);
        a.data.insert(a.data.end(), row, row + g.width * bytes);
      }
    }
    if (!(error = write_npy(dir + "/expected_" + name_of(g.id) + ".npy", a)).empty()) return error;
  }
  return "";
}

std::string import_run(const std::string& dir, Case* c, TensorSet* got) {
  std::string error = load_case_file(dir + "/case.json", c);
  if (!error.empty()) return dir + "/case.json: " + error;
  if (!(error = validate_case(*c)).empty()) return dir + "/case.json: invalid case: " + error;
  *got = build_tensor_set(*c, Poison::kA);
  for (size_t b = 0; b < got->buffers.size(); ++b) {
    const std::string path = dir + "/" + got->plan.buffers[b].name + ".npy";
    std::vector<uint8_t> bytes;
    if (!(error = read_bytes(path, &bytes)).empty()) return error;
    NpyArray a;
    if (!(error = decode_npy(bytes.data(), bytes.size(), &a)).empty()) return path + ": " + error;
    const ElementType type = buffer_type(got->plan, b);
    GuardedBuffer& buffer = got->buffers[b];
    const int64_t elements = int64_t(buffer.size()) / element_bytes(type);
    if (a.descr != npy_descr(type) && !(type == ElementType::kE4m3 && a.descr == "<u1")) {
      return path + ": descr '" + a.descr + "', the case's " + real_dtype_name(type) + " buffer needs '" +
             npy_descr(type) + "'";
    }
    if (a.shape.size() != 1 || a.shape[0] != elements) {
      std::string shown;
      for (int64_t d : a.shape) shown += (shown.empty() ? "" : ", ") + std::to_string(d);
      return path + ": shape (" + shown + "), the case's buffer needs (" + std::to_string(elements) + ",)";
    }
    std::memcpy(buffer.data(), a.data.data(), buffer.size());
  }
  return "";
}

}  // namespace qcheck
