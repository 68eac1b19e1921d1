// The JSON text form of a Case: what a person reads and edits. Keys are the
// field names of fuzz/case/case_fields.h, enums are written by name, fp32 scales as
// hex bit strings ("0x3F800000"; a plain number is accepted too and rounded to
// fp32). Missing required fields and unknown fields are refused with a message
// naming them; missing optional fields take the Case defaults, and missing
// softmax_scale / head_scale take the defaults for the case's D and NI.
#pragma once

#include <string>

#include "fuzz/case/case.h"

namespace qcheck {

// Pretty-printed JSON, keys in canonical order.
std::string case_to_json(const Case& c);

// "" and *out set on success, else one line naming the field (out untouched).
std::string case_from_json(const std::string& text, Case* out);

}  // namespace qcheck
