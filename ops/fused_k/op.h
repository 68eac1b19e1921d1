// fused_k as an op of the family (core/op/op.h): its name and schema, what it
// computes, and its vocabulary, built from the case's one field list
// (case/fused_k_case.h) and the launch's tensors; its case and the generic
// form every op's case has (core/op/any_case.h), both ways, so the generic
// binary (version 3) and JSON forms carry it.
//
// Not yet in ops/registry: the doors (C API, Python) and the harness's rooms
// still make only fused_q's cases, plans and verdicts, and an op they list
// must work through them. Its tools and tests use it directly.
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
