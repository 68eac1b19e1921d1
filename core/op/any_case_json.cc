#include "core/op/any_case_json.h"

#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

namespace qcheck {
namespace {

using Json = nlohmann::ordered_json;

bool is_integer_type(const std::string& dtype) { return dtype == "int64" || dtype == "int32"; }

// An edit's bits as an integer: a tensor whose every element type is one.
bool integer_bits(const TensorMeta& t) {
  if (t.dtypes.empty()) return false;
  for (const std::string& d : t.dtypes) {
    if (!is_integer_type(d)) return false;
  }
  return true;
}

std::string hex(unsigned long long bits, bool eight_digits) {
  char text[19];
  std::snprintf(text, sizeof text, eight_digits ? "0x%08llX" : "0x%llX", bits);
  return text;
}

bool is_int64(const Json& j) {
  return j.is_number_integer() && !(j.is_number_unsigned() && j.get<uint64_t>() > uint64_t(INT64_MAX));
}

std::string joined(const std::vector<std::string>& names) {
  std::string all;
  for (size_t i = 0; i < names.size(); ++i) all += (i ? ", " : "") + names[i];
  return all;
}

Json edits_json(const Vocabulary& v, const std::vector<AnyEdit>& edits) {
  Json list = Json::array();
  for (const AnyEdit& e : edits) {
    const TensorMeta& t = v.tensors.at(e.tensor);
    list.push_back({{"tensor", t.name}, {"row", e.row}, {"rows", e.rows}, {"head", e.head},
                    {"element", e.element}, {"elements", e.elements},
                    {"bits", integer_bits(t) ? Json(e.bits) : Json(hex(e.bits, false))}});
  }
  return list;
}

// One field read from `j` into `value`; "" or why not.
std::string read_field(const Vocabulary& v, const FieldMeta& f, const Json& j, FieldValue* value) {
  const std::string field = "field " + f.name;
  switch (f.kind) {
    case FieldKind::kInteger:
      if (!is_int64(j)) return field + " must be an integer (got " + j.dump() + ")";
      value->number = static_cast<uint64_t>(j.get<int64_t>());
      return "";
    case FieldKind::kEnumeration:
      for (size_t i = 0; j.is_string() && i < f.choices.size(); ++i) {
        if (j.get<std::string>() == f.choices[i]) {
          value->number = i;
          return "";
        }
      }
      return field + " = " + j.dump() + " is not one of " + joined(f.choices);
    case FieldKind::kBoolean:
      if (!j.is_boolean()) return field + " must be true or false";
      value->number = j.get<bool>() ? 1 : 0;
      return "";
    case FieldKind::kBits32: {
      if (j.is_number()) {  // a value, rounded to the nearest fp32
        const float f32 = static_cast<float>(j.get<double>());
        uint32_t bits;
        std::memcpy(&bits, &f32, sizeof bits);
        value->number = bits;
        return "";
      }
      unsigned long long bits = 0;
      if (!j.is_string() || !parse_hex_bits(j.get<std::string>(), 8, &bits)) {
        return field + " = " + j.dump() + " must be fp32 bits as \"0x\" and 1-8 hex digits, or a number";
      }
      value->number = bits;
      return "";
    }
    case FieldKind::kU64:
      if (!j.is_number_unsigned()) return field + " must be an integer >= 0 (got " + j.dump() + ")";
      value->number = j.get<uint64_t>();
      return "";
    case FieldKind::kText:
      if (!j.is_string()) return field + " must be a string";
      value->text = j.get<std::string>();
      return "";
    case FieldKind::kEdits: break;
  }
  // A list of objects with an edit's keys (all but tensor and bits optional,
  // with AnyEdit's defaults); bits as "0x" hex or an integer.
  if (!j.is_array()) return field + " must be a list of edits";
  if (j.size() > kMaxAnyEdits) {
    return field + " holds " + std::to_string(j.size()) + " edits, over " + std::to_string(kMaxAnyEdits);
  }
  std::vector<std::string> inputs;
  for (const TensorMeta& t : v.tensors) {
    if (t.role == "input") inputs.push_back(t.name);
  }
  for (size_t i = 0; i < j.size(); ++i) {
    const Json& item = j[i];
    const std::string where = f.name + "[" + std::to_string(i) + "]";
    if (!item.is_object()) return where + " must be an object";
    AnyEdit e;
    const auto tensor = item.find("tensor");
    bool known_tensor = false;
    for (size_t t = 0; tensor != item.end() && tensor->is_string() && t < v.tensors.size(); ++t) {
      if (v.tensors[t].role == "input" && tensor->get<std::string>() == v.tensors[t].name) {
        e.tensor = static_cast<uint8_t>(t);
        known_tensor = true;
      }
    }
    if (!known_tensor) return where + ".tensor must be one of " + joined(inputs);
    for (auto it = item.begin(); it != item.end(); ++it) {
      const std::string& key = it.key();
      int64_t* slot = key == "row"        ? &e.row
                      : key == "rows"     ? &e.rows
                      : key == "head"     ? &e.head
                      : key == "element"  ? &e.element
                      : key == "elements" ? &e.elements
                                          : nullptr;
      if (slot != nullptr) {
        if (!is_int64(*it)) return where + "." + key + " must be an integer (got " + it->dump() + ")";
        *slot = it->get<int64_t>();
      } else if (key == "bits") {
        unsigned long long bits = 0;
        if (it->is_number_unsigned()) {
          e.bits = it->get<uint64_t>();
        } else if (it->is_string() && parse_hex_bits(it->get<std::string>(), 16, &bits)) {
          e.bits = bits;
        } else {
          return where + ".bits must be \"0x\" and 1-16 hex digits, or an integer >= 0 (got " + it->dump() + ")";
        }
      } else if (key != "tensor") {
        return where + ": unknown key " + Json(key).dump();
      }
    }
    if (item.find("bits") == item.end()) return where + ": missing key bits";
    value->edits.push_back(e);
  }
  return "";
}

std::string unknown_op(const std::string& shown, const std::vector<const Op*>& ops) {
  std::vector<std::string> names;
  for (const Op* op : ops) names.push_back(std::string("\"") + op->name() + "\"");
  return "field op = " + shown + " is not " + (ops.size() == 1 ? names[0] : "one of " + joined(names)) +
         (ops.size() == 1 ? ", the op this build's cases hold" : ", the ops this build's cases hold") +
         " (python -m qcheck ops lists the ops)";
}

}  // namespace

bool parse_hex_bits(const std::string& text, size_t max_digits, unsigned long long* out) {
  unsigned long long bits = 0;
  bool ok = text.size() >= 3 && text.size() <= 2 + max_digits && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  for (size_t i = 2; ok && i < text.size(); ++i) {
    const char ch = text[i];
    const int digit = (ch >= '0' && ch <= '9')   ? ch - '0'
                      : (ch >= 'a' && ch <= 'f') ? ch - 'a' + 10
                      : (ch >= 'A' && ch <= 'F') ? ch - 'A' + 10
                                                 : -1;
    ok = digit >= 0;
    bits = bits * 16 + static_cast<unsigned>(digit < 0 ? 0 : digit);
  }
  if (ok) *out = bits;
  return ok;
}

std::string any_case_to_json(const AnyCase& c, bool name_op) {
  const Vocabulary& v = c.op->vocabulary();
  Json json = Json::object();
  if (name_op) {
    json["op"] = c.op->name();
    json["schema"] = c.op->schema_version();
  }
  for (size_t i = 0; i < v.fields.size(); ++i) {
    const FieldMeta& f = v.fields[i];
    const FieldValue& value = c.fields.at(i);
    switch (f.kind) {
      case FieldKind::kInteger: json[f.name] = static_cast<int64_t>(value.number); break;
      case FieldKind::kEnumeration: json[f.name] = f.choices.at(value.number); break;
      case FieldKind::kBoolean: json[f.name] = value.number != 0; break;
      case FieldKind::kBits32: json[f.name] = hex(value.number, true); break;
      case FieldKind::kU64: json[f.name] = value.number; break;
      case FieldKind::kText: json[f.name] = value.text; break;
      case FieldKind::kEdits:
        if (!value.edits.empty()) json[f.name] = edits_json(v, value.edits);
        break;
    }
  }
  return json.dump(2) + "\n";
}

std::string any_case_from_json(const std::string& text, const std::vector<const Op*>& ops, const Op& default_op,
                               AnyCase* out) {
  Json json;
  try {
    json = Json::parse(text);
  } catch (const Json::exception& e) {
    return std::string("not valid JSON: ") + e.what();
  }
  if (!json.is_object()) return "a JSON case must be an object ({...})";
  const Op* op = &default_op;
  if (const auto named = json.find("op"); named != json.end()) {
    op = nullptr;
    for (const Op* o : ops) {
      if (named->is_string() && named->get<std::string>() == o->name()) op = o;
    }
    if (op == nullptr) return unknown_op(named->dump(), ops);
    json.erase("op");
  }
  if (const auto schema = json.find("schema"); schema != json.end()) {
    if (!schema->is_number_unsigned() || schema->get<uint64_t>() != op->schema_version()) {
      return "field schema = " + schema->dump() + " is not " + std::to_string(op->schema_version()) +
             ", the schema of " + op->name() + "'s fields this build reads";
    }
    json.erase("schema");
  }
  const Vocabulary& v = op->vocabulary();
  AnyCase c{op, {}};
  std::vector<bool> given(v.fields.size(), false);
  for (size_t i = 0; i < v.fields.size(); ++i) {
    const FieldMeta& f = v.fields[i];
    FieldValue value;
    const auto it = json.find(f.name);
    if (it == json.end()) {
      if (f.required) return "missing field " + f.name;
      // The default, as the op wrote it (edits: none).
      const std::string error = f.kind == FieldKind::kEdits ? "" : read_field(v, f, Json::parse(f.default_json), &value);
      if (!error.empty()) return "the default of " + f.name + " does not read: " + error;
    } else {
      const std::string error = read_field(v, f, *it, &value);
      if (!error.empty()) return error;
      given[i] = true;
    }
    c.fields.push_back(std::move(value));
  }
  for (auto it = json.begin(); it != json.end(); ++it) {
    bool known = false;
    for (const FieldMeta& f : v.fields) known = known || f.name == it.key();
    if (!known) return "unknown field " + Json(it.key()).dump();
  }
  op->complete_defaults(c, given);
  *out = std::move(c);
  return "";
}

}  // namespace qcheck
