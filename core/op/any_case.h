// A case of any op as the op-generic machinery holds it: the op, and its
// fields' values in the op's canonical order (Vocabulary::fields), each as
// its FieldKind says. An op's own code reads it into its typed case (for
// fused_q, ops/fused_q/op.h); codecs, equality and (later) the mutator and
// the minimizer work on it field by field, through the metadata alone.
//
// Its binary form is version 3 of the case form (fuzz/case/case_binary.h
// keeps versions 1 and 2, fused_q's):
//   magic "QCKC" | version 3 (uint16) | op name: a length byte (1..32) and
//   that many bytes of [a-z0-9_] | the op's schema version (uint16) | each
//   field in order: integer int64, enumeration one byte (< its choices),
//   boolean one byte (0 or 1), bits32 uint32, u64 uint64, text a length
//   byte (<= 32) and that many bytes of [a-z0-9._-], edits a uint16 count
//   (0..4096) and per edit its tensor (one byte: an index into the op's
//   tensor table, Vocabulary::tensors), row, rows, head, element, elements
//   (int64) and bits (uint64)
// all little-endian. Decoding is strict, as for versions 1 and 2: what it
// accepts encodes to the same bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/op/op.h"

namespace qcheck {

constexpr uint16_t kCaseBinaryVersionAnyOp = 3;
constexpr size_t kMaxOpNameLength = 32;
constexpr size_t kMaxTextFieldLength = 32;
constexpr size_t kMaxAnyEdits = 4096;

// A value written over an input after generation (fuzz/case/case.h's
// ValueEdit, with the tensor as an index into the op's tensor table).
// A JSON edit's keys left out take these defaults: one row, every head,
// the whole row.
struct AnyEdit {
  uint8_t tensor = 0;
  int64_t row = 0;
  int64_t rows = 1;       // -1: to the last row
  int64_t head = -1;      // -1: every head
  int64_t element = 0;
  int64_t elements = -1;  // -1: to the end of the row
  uint64_t bits = 0;
  bool operator==(const AnyEdit& o) const {
    return tensor == o.tensor && row == o.row && rows == o.rows && head == o.head && element == o.element &&
           elements == o.elements && bits == o.bits;
  }
};

// One field's value: `number` holds an integer (as int64 bits), an
// enumeration's choice index, a boolean (0, 1), bits32 or u64; `text` and
// `edits` the other two kinds.
struct FieldValue {
  uint64_t number = 0;
  std::string text;
  std::vector<AnyEdit> edits;
  bool operator==(const FieldValue& o) const { return number == o.number && text == o.text && edits == o.edits; }
};

struct AnyCase {
  const Op* op = nullptr;
  std::vector<FieldValue> fields;  // one per op->vocabulary().fields, in order

  bool operator==(const AnyCase& o) const { return op == o.op && fields == o.fields; }
  bool operator!=(const AnyCase& o) const { return !(*this == o); }
};

std::vector<uint8_t> encode_any_case(const AnyCase& c);

// "" and *out set on success, else one line naming the field or header part
// (out untouched). `ops` are the ops a file may name (ops/registry's list).
std::string decode_any_case(const uint8_t* data, size_t size, const std::vector<const Op*>& ops, AnyCase* out);

// 16 hex digits of XXH64 over the binary form: names corpus files by
// content (fused_q's case_digest, for every op).
std::string any_case_digest(const AnyCase& c);

// The op a version-3 case names, without decoding its fields: "" and *name
// set, or why the header is not one.
std::string any_case_op_name(const uint8_t* data, size_t size, std::string* name);

}  // namespace qcheck
