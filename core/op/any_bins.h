// The semantic bins of any op's case, from its field metadata alone
// (core/op/op.h): what a fuzz loop without coverage (a kernel called from
// Python) keeps a case for when it reaches one no earlier case reached.
// fused_q has richer bins of its own (fuzz/mutator/semantic_bins.h: value
// recipes, special values, UE8M0 buckets); an op without them gets these:
//   enumeration  "FIELD=CHOICE"
//   boolean      "FIELD=true" or "FIELD=false"
//   integer      "FIELD=0", "FIELD=1", then by powers of two "FIELD=2..3",
//                "FIELD=4..7", ...; "FIELD<0"
//   bits32       the f32 it holds: "FIELD:zero", ":subnormal", ":normal",
//                ":inf", ":nan"
// A seed (u64), texts and edits give none: they change values, not shapes.
#pragma once

#include <string>
#include <vector>

#include "core/op/any_case.h"

namespace qcheck {

std::vector<std::string> any_case_bins(const AnyCase& c);

}  // namespace qcheck
