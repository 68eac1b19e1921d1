// The composed fused_q oracle: what every output element of a launch must be.
#pragma once

#include <string>

#include "numerics/profile.h"
#include "numerics/row_ops.h"
#include "ops/fused_q/args/fused_q_args.h"

namespace qcheck {

// The numerics' fused rows keep their scratch on the stack, sized for
// fused_q's widest row (numerics/row_ops.h).
static_assert(kMaxFusedRowLength == size_t(DimLimits::kMaxIndexDim),
              "numerics/row_ops.h: kMaxFusedRowLength must be fused_q's DimLimits::kMaxIndexDim");

// Runs fused_q on the CPU over host pointers: validates the args, reads the
// inputs and writes every output the args name (query_out; with the indexer,
// index_q_fp8 and index_weights_out), exactly as a correct kernel following
// `profile` must. Nothing outside the outputs' elements is written (view
// padding stays untouched). Returns "" on success, else one line that names
// the field and the limit (invalid args, a position outside its cache).
std::string run_fused_q_oracle(const FusedQArgs& args, const Profile& profile, const RowOps& ops);

// The same checks without running: "" when run_fused_q_oracle would accept.
// Reads positions (host memory).
std::string check_oracle_inputs(const FusedQArgs& args);

}  // namespace qcheck
