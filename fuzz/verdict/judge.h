// Judging a kernel's outputs (two runs) under a profile name: the step
// between the oracle and the report that run_verdict (in-repo backends) and
// the C API (outside kernels) share. Three kinds of names:
//  - a profile with one contraction pattern and an exact division: the
//    oracle's expected set, compared byte for byte (fuzz/verdict/compare.h);
//  - a profile with an acceptance set ("NAME+any-fma"; div.full with a
//    q_scale that is not a power of two): per output row, the row of any
//    contraction pattern (one (minus, plus) pattern for the whole row, the
//    indexer's weight with its row) and, for div.full, every e4m3 code of a
//    quotient within 2 ulp of the IEEE one, whichever explains the row the
//    kernel wrote; what no choice explains is compared against the
//    profile's own pattern. Never a numeric tolerance: each accepted value
//    is one a legal choice gives;
//  - "auto": every named profile (numerics/profile.h); the verdict lists
//    those that explain the outputs bit for bit. When none does, the same
//    profiles with "+any-fma" are tried (a kernel whose source compiled to
//    other contraction patterns), and when none of those does either, the
//    verdict gives the first element no named profile explains (with each
//    profile's value there) and per output tensor the closest profile.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "fuzz/buffers/tensors.h"
#include "fuzz/case/case.h"
#include "fuzz/verdict/phase_times.h"
#include "fuzz/verdict/report.h"
#include "numerics/row_ops.h"

namespace qcheck {

constexpr char kAutoProfile[] = "auto";

struct Judgement {
  Report report;                         // under `profile`
  std::string profile;                   // auto: the first that explains, else the closest overall
  std::vector<std::string> explaining;   // auto: every profile that explains the outputs
  std::vector<std::string> explanation;  // lines: acceptance choices, auto's findings
};

// "qcheck, vllm-triton, ..., any of them +any-fma, or auto": for messages.
std::string known_profiles();

// Fills *out (report.max_listed = max_listed). Returns "" when the outputs
// were judged, else why they could not be: an unknown profile name, the
// oracle's refusal (invalid input). got_b may be got_a (one run).
// `prepared`, when not null, is build_tensor_set(c, Poison::kA), untouched:
// the judge fills it instead of building another set (it is consumed).
// `times`, when not null, gets the oracle and compare phases.
std::string judge_runs(const Case& c, const std::string& profile, const RowOps& rows, const TensorSet& got_a,
                       const TensorSet& got_b, size_t max_listed, TensorSet* prepared, PhaseTimes* times,
                       Judgement* out);

// The expected set under `profile` with its acceptance set applied to the
// outputs in `got`: every output row that a legal choice explains holds
// got's bits. Without an acceptance set: the oracle's expected set. `blank`
// is build_tensor_set(c, Poison::kA). One line per output tensor in
// *choices (how many rows each choice explained) when there is a set.
TensorSet accepted_expected(const Case& c, const Profile& profile, const RowOps& rows, const TensorSet& got,
                            TensorSet blank, std::vector<std::string>* choices, std::string* error);

}  // namespace qcheck
