// fused_q as an op of the family (core/op/op.h): its name and schema, what
// it computes, and its vocabulary, built from the case's own field list
// (fuzz/case/case_fields.h), the plan's tensors, the reports' parts and the
// profiles. ops/registry lists it.
#pragma once

#include "core/op/op.h"

namespace qcheck {

const Op& fused_q_op();

}  // namespace qcheck
