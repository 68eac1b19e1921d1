#include "fuzz/case/case_json.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "core/op/any_case_json.h"
#include "fuzz/case/case_fields.h"
#include "fuzz/case/case_names.h"
#include "fuzz/case/tensor_plan.h"
#include "numerics/float_bits.h"

namespace qcheck {
namespace {

using Json = nlohmann::ordered_json;

std::string hex_bits(uint32_t bits) {
  char text[11];
  std::snprintf(text, sizeof text, "0x%08X", static_cast<unsigned>(bits));
  return text;
}

class Writer {
 public:
  Json json = Json::object();
  void integer(const char* name, int64_t& v, bool) { json[name] = v; }
  template <typename Enum>
  void enumeration(const char* name, Enum& v, bool) {
    json[name] = name_of(v);
  }
  void boolean(const char* name, bool& v) { json[name] = v; }
  void bits32(const char* name, uint32_t& v) { json[name] = hex_bits(v); }
  void u64(const char* name, uint64_t& v) { json[name] = v; }
  void text(const char* name, std::string& v) { json[name] = v; }
  // Left out when there are none, so cases without edits read as before.
  void edits(const char* name, std::vector<ValueEdit>& edits) {
    if (edits.empty()) return;
    Json list = Json::array();
    for (const ValueEdit& e : edits) {
      char bits[19];
      std::snprintf(bits, sizeof bits, "0x%llX", static_cast<unsigned long long>(e.bits));
      list.push_back({{"tensor", name_of(e.tensor)}, {"row", e.row}, {"rows", e.rows}, {"head", e.head},
                      {"element", e.element}, {"elements", e.elements},
                      {"bits", e.tensor == TensorId::kPositions ? Json(e.bits) : Json(bits)}});
    }
    json[name] = list;
  }
};

class Reader {
 public:
  explicit Reader(const Json& json) : json_(json) {}

  void integer(const char* name, int64_t& v, bool required) {
    const Json* j = find(name, required);
    if (j == nullptr) return;
    if (!j->is_number_integer() || (j->is_number_unsigned() && j->get<uint64_t>() > INT64_MAX)) {
      return fail(std::string("field ") + name + " must be an integer (got " + j->dump() + ")");
    }
    v = j->get<int64_t>();
  }
  template <typename Enum>
  void enumeration(const char* name, Enum& v, bool required) {
    const Json* j = find(name, required);
    if (j == nullptr) return;
    if (!j->is_string() || !parse_name(j->get<std::string>(), &v)) {
      return fail(std::string("field ") + name + " = " + j->dump() + " is not one of " +
                  names_of_all<Enum>());
    }
  }
  void boolean(const char* name, bool& v) {
    const Json* j = find(name, false);
    if (j == nullptr) return;
    if (!j->is_boolean()) return fail(std::string("field ") + name + " must be true or false");
    v = j->get<bool>();
  }
  void bits32(const char* name, uint32_t& v) {
    const Json* j = find(name, false);
    if (j == nullptr) return;
    if (j->is_number()) {  // a value, rounded to the nearest fp32
      v = bits_of(static_cast<float>(j->get<double>()));
      return;
    }
    unsigned long long bits = 0;
    if (!j->is_string() || !parse_hex_bits(j->get<std::string>(), 8, &bits)) {
      return fail(std::string("field ") + name + " = " + j->dump() +
                  " must be fp32 bits as \"0x\" and 1-8 hex digits, or a number");
    }
    v = static_cast<uint32_t>(bits);
  }
  void u64(const char* name, uint64_t& v) {
    const Json* j = find(name, false);
    if (j == nullptr) return;
    if (!j->is_number_unsigned()) {
      return fail(std::string("field ") + name + " must be an integer >= 0 (got " + j->dump() +
                  ")");
    }
    v = j->get<uint64_t>();
  }
  void text(const char* name, std::string& v) {
    const Json* j = find(name, false);
    if (j == nullptr) return;
    if (!j->is_string()) return fail(std::string("field ") + name + " must be a string");
    v = j->get<std::string>();
  }

  // A list of objects with the keys ValueEdit has (all but tensor and bits
  // optional, with ValueEdit's defaults); bits as "0x" hex or an integer.
  void edits(const char* name, std::vector<ValueEdit>& edits) {
    const Json* j = find(name, false);
    if (j == nullptr) return;
    if (!j->is_array()) return fail(std::string("field ") + name + " must be a list of edits");
    if (j->size() > CaseLimits::kMaxEdits) {
      return fail(std::string("field ") + name + " holds " + std::to_string(j->size()) + " edits, over " +
                  std::to_string(CaseLimits::kMaxEdits));
    }
    for (size_t i = 0; i < j->size(); ++i) {
      const Json& item = (*j)[i];
      const std::string where = std::string(name) + "[" + std::to_string(i) + "]";
      if (!item.is_object()) return fail(where + " must be an object");
      ValueEdit e;
      const auto tensor = item.find("tensor");
      bool known_tensor = false;
      for (int id = 0; tensor != item.end() && tensor->is_string() && id <= int(TensorId::kIndexerCache); ++id) {
        if (tensor->get<std::string>() == name_of(static_cast<TensorId>(id))) {
          e.tensor = static_cast<TensorId>(id);
          known_tensor = true;
        }
      }
      if (!known_tensor) {
        return fail(where + ".tensor must be one of positions, q_pe, ql_nope, index_q, index_weights, "
                            "mqa_cache, indexer_cache");
      }
      for (auto it = item.begin(); it != item.end(); ++it) {
        const std::string& key = it.key();
        int64_t* field = key == "row"        ? &e.row
                         : key == "rows"     ? &e.rows
                         : key == "head"     ? &e.head
                         : key == "element"  ? &e.element
                         : key == "elements" ? &e.elements
                                             : nullptr;
        if (field != nullptr) {
          if (!it->is_number_integer() || (it->is_number_unsigned() && it->get<uint64_t>() > INT64_MAX)) {
            return fail(where + "." + key + " must be an integer (got " + it->dump() + ")");
          }
          *field = it->get<int64_t>();
        } else if (key == "bits") {
          unsigned long long bits = 0;
          if (it->is_number_unsigned()) {
            e.bits = it->get<uint64_t>();
          } else if (it->is_string() && parse_hex_bits(it->get<std::string>(), 16, &bits)) {
            e.bits = bits;
          } else {
            return fail(where + ".bits must be \"0x\" and 1-16 hex digits, or an integer >= 0 (got " +
                        it->dump() + ")");
          }
        } else if (key != "tensor") {
          return fail(where + ": unknown key " + Json(key).dump());
        }
      }
      if (item.find("bits") == item.end()) return fail(where + ": missing key bits");
      edits.push_back(e);
    }
  }

  bool was_given(const char* name) const { return json_.contains(name); }
  const std::string& error() const { return error_; }
  // The first key that no field claimed, if any. (Optional, not "": the
  // empty string is a key JSON allows, and it names no field.)
  std::optional<std::string> unknown_key() const {
    for (auto it = json_.begin(); it != json_.end(); ++it) {
      if (known_.count(it.key()) == 0) return it.key();
    }
    return std::nullopt;
  }

 private:
  const Json* find(const char* name, bool required) {
    known_.insert(name);
    if (!error_.empty()) return nullptr;
    auto it = json_.find(name);
    if (it == json_.end()) {
      if (required) fail(std::string("missing field ") + name);
      return nullptr;
    }
    return &*it;
  }
  void fail(const std::string& message) {
    if (error_.empty()) error_ = message;
  }

  const Json& json_;
  std::set<std::string> known_;
  std::string error_;
};

}  // namespace

std::string case_to_json(const Case& c) {
  Case copy = c;
  Writer writer;
  visit_case_fields(copy, writer);
  return writer.json.dump(2) + "\n";
}

std::string case_from_json(const std::string& text, Case* out) {
  Json json;
  try {
    json = Json::parse(text);
  } catch (const Json::exception& e) {
    return std::string("not valid JSON: ") + e.what();
  }
  if (!json.is_object()) return "a JSON case must be an object ({...})";
  // "op" and "schema" say which op's case this is; this form holds one
  // (kCaseOp, schema kCaseSchema), so they are checked and set aside.
  if (const auto op = json.find("op"); op != json.end()) {
    if (!op->is_string() || op->get<std::string>() != kCaseOp) {
      return not_this_op("field op", op->dump());
    }
    json.erase("op");
  }
  if (const auto schema = json.find("schema"); schema != json.end()) {
    if (!schema->is_number_unsigned() || schema->get<uint64_t>() != kCaseSchema) {
      return "field schema = " + schema->dump() + " is not " + std::to_string(kCaseSchema) + ", the schema of " +
             kCaseOp + "'s fields this build reads";
    }
    json.erase("schema");
  }
  Case c;
  Reader reader(json);
  visit_case_fields(c, reader);
  if (!reader.error().empty()) return reader.error();
  if (const auto unknown = reader.unknown_key()) return "unknown field " + Json(*unknown).dump();
  if (!reader.was_given("softmax_scale") && c.index_dim > 0) {
    c.softmax_scale_bits = default_softmax_scale_bits(c.index_dim);
  }
  if (!reader.was_given("head_scale") && c.indexer_heads > 0) {
    c.head_scale_bits = default_head_scale_bits(c.indexer_heads);
  }
  *out = c;
  return "";
}

}  // namespace qcheck
