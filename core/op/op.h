// An operation of the family as the doors and tools see it: its name, the
// schema version of its case, a line on what it computes, and its
// vocabulary: the case's fields (kind, choices, default), the tensors of a
// launch, the parts the reports name and the profiles its oracle knows.
// ops/registry lists every op; each op's unit (ops/<op>/op.h) builds its own.
// The op-generic machinery takes more of its hooks from here as fused_q's
// pieces move behind them (issue 37, OPS-DESIGN.md 3.3); what is here now
// is what the doors list (qcheck_ops_json, qcheck.ops(), python -m qcheck ops).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace qcheck {

// How a field is written in a case's JSON form.
enum class FieldKind : uint8_t {
  kInteger,      // a JSON integer
  kEnumeration,  // one of `choices`, by name
  kBoolean,
  kBits32,       // a 32-bit pattern (an f32's bits), as a hex string
  kU64,          // an unsigned 64-bit integer
  kText,
  kEdits,        // a list of value edits
};
const char* name_of(FieldKind kind);

struct FieldMeta {
  std::string name;
  FieldKind kind = FieldKind::kInteger;
  bool required = false;              // the JSON form must name it
  std::vector<std::string> choices;   // an enumeration's names, in the order of its codes
  std::string default_json;           // its value in the op's default case, as JSON text
};

struct TensorMeta {
  std::string name;
  std::string role;                 // "input" or "output"
  std::vector<std::string> dtypes;  // the element types it can have (numerics' names)
  std::string shape;                // in the case's dimensions, e.g. "[T, H, R]"
  std::string when;                 // when a launch has it ("" : always)
};

struct Vocabulary {
  std::vector<FieldMeta> fields;     // in the case's canonical order
  std::vector<TensorMeta> tensors;   // in the plan's order
  std::vector<std::string> parts;    // the names a mismatch's part can have in reports
  std::vector<std::string> profiles; // the named profiles its oracle judges under
};

struct AnyCase;  // core/op/any_case.h

class Op {
 public:
  virtual ~Op() = default;
  virtual const char* name() const = 0;
  // The version of the op's case fields: a case file names it (the binary
  // form from v3 on; absent means 1).
  virtual uint16_t schema_version() const = 0;
  virtual const char* description() const = 0;
  virtual const Vocabulary& vocabulary() const = 0;
  // After a case is read from JSON (core/op/any_case_json.h): the fields the
  // file left out whose default follows other fields (fused_q's
  // softmax_scale follows index_dim). given[i]: field i was in the file.
  // The default does nothing.
  virtual void complete_defaults(AnyCase& c, const std::vector<bool>& given) const;
};

// {"op", "schema", "description", "fields": [{"name", "kind", "required",
// "choices"?, "default"}], "tensors": [{"name", "role", "dtypes", "shape",
// "when"?}], "parts": [...], "profiles": [...]}: one op, as the C API's
// qcheck_ops_json lists it.
std::string vocabulary_json(const Op& op);

}  // namespace qcheck
