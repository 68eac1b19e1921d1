// The tensor sets of the last case this thread built, kept for the door's
// next calls on the same case. An execution of the door asks for the case's
// semantic bins (its inputs scanned), run A's buffers, run B's, and the
// judge's expected set: the inputs are generated once, for the first of
// these, and the others start from that set. Internal to capi/.
#pragma once

#include <cstdint>
#include <memory>

#include "capi/capi_edge.h"
#include "fuzz/buffers/tensors.h"

namespace qcheck::capi {

// The case's set as qcheck_fill_buffers fills run A's buffers (outputs
// under poison A): this thread's kept one, built and kept first when it
// holds another case. A set over the keep limit (64 MiB) is built into
// `scratch` and not kept.
const TensorSet& poison_a_set(const Case& c, TensorSet& scratch);

// A copy of the case's poison-A set when this thread keeps it, else null.
std::unique_ptr<TensorSet> kept_poison_a(const Case& c);

// Copies a set's buffers (guards and all) into the caller's, in the plan's order.
void write_set(const TensorSet& set, uint8_t* const* buffers);

// Writes run `poison`'s buffers (0: A, 1: B; B is A's set with its outputs
// poisoned again, made once per case) into the caller's buffers, in the
// plan's order.
void write_run_buffers(const Case& c, int poison, uint8_t* const* buffers);

}  // namespace qcheck::capi
