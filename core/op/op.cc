#include "core/op/op.h"

#include <nlohmann/json.hpp>

namespace qcheck {

void Op::complete_defaults(AnyCase&, const std::vector<bool>&) const {}

const char* name_of(FieldKind kind) {
  switch (kind) {
    case FieldKind::kInteger: return "integer";
    case FieldKind::kEnumeration: return "enumeration";
    case FieldKind::kBoolean: return "boolean";
    case FieldKind::kBits32: return "bits32";
    case FieldKind::kU64: return "u64";
    case FieldKind::kText: return "text";
    case FieldKind::kEdits: return "edits";
  }
  return "?";
}

std::string vocabulary_json(const Op& op) {
  const Vocabulary& v = op.vocabulary();
  nlohmann::ordered_json j;
  j["op"] = op.name();
  j["schema"] = op.schema_version();
  j["description"] = op.description();
  j["fields"] = nlohmann::ordered_json::array();
  for (const FieldMeta& f : v.fields) {
    nlohmann::ordered_json field;
    field["name"] = f.name;
    field["kind"] = name_of(f.kind);
    field["required"] = f.required;
    if (!f.choices.empty()) field["choices"] = f.choices;
    field["default"] = nlohmann::ordered_json::parse(f.default_json);
    j["fields"].push_back(std::move(field));
  }
  j["tensors"] = nlohmann::ordered_json::array();
  for (const TensorMeta& t : v.tensors) {
    nlohmann::ordered_json tensor;
    tensor["name"] = t.name;
    tensor["role"] = t.role;
    tensor["dtypes"] = t.dtypes;
    tensor["shape"] = t.shape;
    if (!t.when.empty()) tensor["when"] = t.when;
    j["tensors"].push_back(std::move(tensor));
  }
  j["parts"] = v.parts;
  j["profiles"] = v.profiles;
  return j.dump();
}

}  // namespace qcheck
