// fused_k as an op of the family (core/op/op.h): its name and schema, what it
// computes, and its vocabulary, built from the case's one field list
// (case/fused_k_case.h) and the launch's tensors; its case and the generic
// form every op's case has (core/op/any_case.h), both ways, so the generic
// binary (version 3) and JSON forms carry it.
//
// In ops/registry: the C API takes its cases through ops/fused_k/door (the
// data path: cases, plan, fill, expected, judge); the fuzz loop's feedback,
// domains, the minimizer and the plugins still take fused_q's only, and
// refuse a fused_k case by name.
#pragma once

#include <string>

#include "core/op/any_case.h"
#include "core/op/op.h"
#include "ops/fused_k/case/fused_k_case.h"

namespace qcheck::fused_k {

const Op& fused_k_op();

AnyCase to_any_case(const FusedKCase& c);
// "" and *out set, or why `a` is not a fused_k case.
std::string from_any_case(const AnyCase& a, FusedKCase* out);

}  // namespace qcheck::fused_k
