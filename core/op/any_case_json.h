// The JSON form of any op's case, from the op's field metadata alone
// (core/op/op.h): an object with each field under its name, in canonical
// order:
//   integer      a JSON integer
//   enumeration  its choice's name
//   boolean      true or false
//   bits32       "0x" and 8 hex digits (read: 1-8 digits, or a number,
//                rounded to the nearest f32)
//   u64          an integer >= 0
//   text         a string
//   edits        a list of {"tensor": an input's name, "row", "rows",
//                "head", "element", "elements", "bits"}, left out when
//                empty; bits as "0x" hex, or an integer for a tensor of
//                integer elements (positions)
// "op" and "schema" come first where the writer is asked to name the op
// (every op but fused_q, whose files stay as they are); a reader takes a
// file without "op" as the default op's. A field the file leaves out takes
// the op's default (FieldMeta::default_json), then Op::complete_defaults.
// fused_q's own form (fuzz/case/case_json.h) writes and reads the same text;
// tests/harness/any_case_json_test.cc holds the two to it.
#pragma once

#include <string>
#include <vector>

#include "core/op/any_case.h"

namespace qcheck {

std::string any_case_to_json(const AnyCase& c, bool name_op);

// "" and *out set, or one line naming the field and what it must be (out
// untouched). `ops` are the ops a file may name; `default_op` is the one a
// file without "op" holds.
std::string any_case_from_json(const std::string& text, const std::vector<const Op*>& ops, const Op& default_op,
                               AnyCase* out);

// True and *out set when `text` is "0x" and 1..max_digits hex digits (the
// bits of a bits32 field or an edit; fused_q's reader shares it).
bool parse_hex_bits(const std::string& text, size_t max_digits, unsigned long long* out);

}  // namespace qcheck
