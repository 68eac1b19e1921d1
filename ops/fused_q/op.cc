#include "ops/fused_q/op.h"

#include <nlohmann/json.hpp>

#include "fuzz/case/case_fields.h"
#include "fuzz/case/case_json.h"
#include "fuzz/case/case_names.h"
#include "numerics/profile.h"
#include "ops/fused_q/args/fused_q_args.h"

namespace qcheck {
namespace {

// The fields in canonical order, their kinds and an enumeration's names;
// defaults are filled in from the default case's JSON form.
class FieldLister {
 public:
  std::vector<FieldMeta> fields;
  void integer(const char* name, int64_t&, bool required) { add(name, FieldKind::kInteger, required); }
  template <typename Enum>
  void enumeration(const char* name, Enum&, bool required) {
    FieldMeta& f = add(name, FieldKind::kEnumeration, required);
    for (unsigned i = 0; i < enum_count<Enum>(); ++i) f.choices.push_back(name_of(static_cast<Enum>(i)));
  }
  void boolean(const char* name, bool&) { add(name, FieldKind::kBoolean, false); }
  void bits32(const char* name, uint32_t&) { add(name, FieldKind::kBits32, false); }
  void u64(const char* name, uint64_t&) { add(name, FieldKind::kU64, false); }
  void text(const char* name, std::string&) { add(name, FieldKind::kText, false); }
  void edits(const char* name, std::vector<ValueEdit>&) { add(name, FieldKind::kEdits, false); }

 private:
  FieldMeta& add(const char* name, FieldKind kind, bool required) {
    FieldMeta f;
    f.name = name;
    f.kind = kind;
    f.required = required;
    fields.push_back(std::move(f));
    return fields.back();
  }
};

Vocabulary fused_q_vocabulary() {
  Vocabulary v;
  Case defaults;
  FieldLister lister;
  visit_case_fields(defaults, lister);
  v.fields = std::move(lister.fields);
  const nlohmann::json written = nlohmann::json::parse(case_to_json(defaults));
  for (FieldMeta& f : v.fields) {
    // (the JSON form leaves out an empty edit list)
    f.default_json = written.contains(f.name) ? written[f.name].dump() : "[]";
  }
  // In TensorId's order (fuzz/case/case.h): an edit's tensor in the binary
  // form of version 3 is an index into this table (core/op/any_case.h), the
  // same byte as TensorId in versions 1 and 2. The tests check each against
  // the plans of generated cases and the order against TensorId's names.
  const std::string indexer = "has_indexer (its outputs exist either way and must stay untouched without it)";
  v.tensors = {
      {"positions", "input", {"int64"}, "[T]", ""},
      {"q_pe", "input", {"bf16"}, "[T, H, R]", ""},
      {"ql_nope", "input", {"bf16"}, "[T, H, L]",
       "the packed paths (with alias exact-front: query_out[..., :L] itself)"},
      {"index_q", "input", {"bf16"}, "[T, NI, D]", "has_indexer"},
      {"index_weights", "input", {"f32", "bf16"}, "[T, NI, 1]", "has_indexer"},
      {"mqa_cache", "input", {"f32", "bf16"}, "[P, R]", ""},
      {"indexer_cache", "input", {"f32", "bf16"}, "[P, R]", "has_indexer"},
      {"query_out", "output", {"bf16", "e4m3"}, "[T, H, L + R] ([T, H, R] on bf16-separate)", ""},
      {"index_q_fp8", "output", {"e4m3"}, "[T, NI, D]", indexer},
      {"index_weights_out", "output", {"f32", "bf16"}, "[T, NI, 1]", indexer},
  };
  // What fuzz/verdict/compare.cc's part_of names (the tests check it).
  v.parts = {"nope front", "rope tail", "rope", "rope part", "pass-through part", "weights", "elements"};
  v.profiles = profile_names();
  return v;
}

class FusedQOp final : public Op {
 public:
  const char* name() const override { return kCaseOp; }
  uint16_t schema_version() const override { return kCaseSchema; }
  const char* description() const override {
    return "one launch RoPEs the MLA query's rope part, RoPEs and UE8M0-quantizes the indexer query to FP8, "
           "scales the indexer weights, and packs the absorbed query into one buffer whose front may already "
           "hold ql_nope (DeepSeek-V3.2, GLM-5.x)";
  }
  const Vocabulary& vocabulary() const override {
    static const Vocabulary v = fused_q_vocabulary();
    return v;
  }
  // As case_from_json: the scales a file leaves out follow D and NI.
  void complete_defaults(AnyCase& a, const std::vector<bool>& given) const override;
};

// Appends each field's value, in canonical order.
class ToAny {
 public:
  std::vector<FieldValue> fields;
  void integer(const char*, int64_t& v, bool) { number(static_cast<uint64_t>(v)); }
  template <typename Enum>
  void enumeration(const char*, Enum& v, bool) {
    number(static_cast<uint8_t>(v));
  }
  void boolean(const char*, bool& v) { number(v ? 1 : 0); }
  void bits32(const char*, uint32_t& v) { number(v); }
  void u64(const char*, uint64_t& v) { number(v); }
  void text(const char*, std::string& v) { fields.emplace_back().text = v; }
  void edits(const char*, std::vector<ValueEdit>& edits) {
    FieldValue& f = fields.emplace_back();
    for (const ValueEdit& e : edits) {
      f.edits.push_back(AnyEdit{static_cast<uint8_t>(e.tensor), e.row, e.rows, e.head, e.element, e.elements, e.bits});
    }
  }

 private:
  void number(uint64_t v) { fields.emplace_back().number = v; }
};

// Reads them back in the same order (the values were checked by the
// generic decoder or come from a fused_q case).
class FromAny {
 public:
  explicit FromAny(const std::vector<FieldValue>& fields) : fields_(fields) {}
  void integer(const char*, int64_t& v, bool) { v = static_cast<int64_t>(next().number); }
  template <typename Enum>
  void enumeration(const char*, Enum& v, bool) {
    v = static_cast<Enum>(next().number);
  }
  void boolean(const char*, bool& v) { v = next().number != 0; }
  void bits32(const char*, uint32_t& v) { v = static_cast<uint32_t>(next().number); }
  void u64(const char*, uint64_t& v) { v = next().number; }
  void text(const char*, std::string& v) { v = next().text; }
  void edits(const char*, std::vector<ValueEdit>& edits) {
    edits.clear();
    for (const AnyEdit& e : next().edits) {
      ValueEdit v;
      v.tensor = static_cast<TensorId>(e.tensor);
      v.row = e.row, v.rows = e.rows, v.head = e.head, v.element = e.element, v.elements = e.elements;
      v.bits = e.bits;
      edits.push_back(v);
    }
  }

 private:
  const FieldValue& next() { return fields_[at_++]; }
  const std::vector<FieldValue>& fields_;
  size_t at_ = 0;
};

}  // namespace

void FusedQOp::complete_defaults(AnyCase& a, const std::vector<bool>& given) const {
  const std::vector<FieldMeta>& fields = vocabulary().fields;
  auto was_given = [&](const char* name) {
    for (size_t i = 0; i < fields.size(); ++i) {
      if (fields[i].name == name) return bool(given[i]);
    }
    return false;
  };
  Case c;
  if (!from_any_case(a, &c).empty()) return;
  if (!was_given("softmax_scale") && c.index_dim > 0) c.softmax_scale_bits = default_softmax_scale_bits(c.index_dim);
  if (!was_given("head_scale") && c.indexer_heads > 0) c.head_scale_bits = default_head_scale_bits(c.indexer_heads);
  a = to_any_case(c);
}

const Op& fused_q_op() {
  static const FusedQOp op;
  return op;
}

AnyCase to_any_case(const Case& c) {
  Case copy = c;  // the visitor takes a mutable Case; reading does not change it
  ToAny to;
  visit_case_fields(copy, to);
  return AnyCase{&fused_q_op(), std::move(to.fields)};
}

std::string from_any_case(const AnyCase& a, Case* out) {
  if (a.op != &fused_q_op()) {
    return std::string("op = \"") + (a.op != nullptr ? a.op->name() : "") + "\" is not " + kCaseOp;
  }
  if (a.fields.size() != fused_q_op().vocabulary().fields.size()) return "the case has the wrong number of fields";
  Case c;
  FromAny from(a.fields);
  visit_case_fields(c, from);
  *out = std::move(c);
  return "";
}

}  // namespace qcheck
