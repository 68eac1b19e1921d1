// fused_q as an op of the family (core/op/op.h): its name and schema, what
// it computes, and its vocabulary, built from the case's own field list
// (fuzz/case/case_fields.h), the plan's tensors, the reports' parts and the
// profiles. ops/registry lists it.
#pragma once

#include <string>

#include "core/op/any_case.h"
#include "core/op/op.h"
#include "fuzz/case/case.h"

namespace qcheck {

const Op& fused_q_op();

// fused_q's typed case and the generic form every op's case has (its fields
// in canonical order, an edit's tensor as TensorId's byte), both ways.
AnyCase to_any_case(const Case& c);
// "" and *out set, or why `a` is not a fused_q case.
std::string from_any_case(const AnyCase& a, Case* out);

}  // namespace qcheck
