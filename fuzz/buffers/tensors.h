// A TensorSet: every tensor of one case, each inside a guarded buffer, laid
// out as the case's TensorPlan says. Inputs hold the generated values,
// outputs a poison fill. The same function builds the set the oracle fills
// (expected) and the sets a backend fills (got), so they differ only where
// the backend wrote something different.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "fuzz/buffers/guarded_buffer.h"
#include "fuzz/buffers/input_times.h"
#include "fuzz/case/case.h"
#include "fuzz/case/tensor_plan.h"
#include "ops/fused_q/args/fused_q_args.h"

namespace qcheck {

// Two poison fills for output elements. Each output is checked after one run
// with each: an element that keeps the poison of both runs was never written.
// kA (0xFF bytes) is a NaN in f32, bf16 and e4m3; kB (0x5B bytes) is an
// ordinary finite value in each, so neither is special to a kernel.
enum class Poison : uint8_t { kA = 0, kB = 1 };
uint8_t poison_byte(Poison poison);

struct TensorSet {
  TensorPlan plan;
  std::vector<GuardedBuffer> buffers;  // one per plan.buffers entry
  Poison poison = Poison::kA;
  // Per plan tensor (by its place in plan.tensors), a scatter output's rows
  // that the launch writes (1) and leaves alone (0); the op sets it from its
  // inputs (a slot mapping) when it generates them. Empty: every row.
  std::vector<std::vector<uint8_t>> row_masks;

  const TensorGeometry* find(TensorId id) const { return plan.find(id); }
  uint8_t* element(const TensorGeometry& g, int64_t row, int64_t col, int64_t i) {
    return buffers[g.buffer].payload() + g.byte_offset(row, col, i);
  }
  const uint8_t* element(const TensorGeometry& g, int64_t row, int64_t col, int64_t i) const {
    return buffers[g.buffer].payload() + g.byte_offset(row, col, i);
  }
  // Does the launch write row `row` of the plan's tensor `g`? (Scatter
  // outputs under their mask; every other output, every row.)
  bool row_written(const TensorGeometry& g, int64_t row) const;
};

// The elements [first, end) of each (row, col) of output `g` that an input
// view in its buffer holds (the exact alias: ql_nope is query_out[..., :L]),
// or {0, 0}. Such a view has the output's type, rows, columns and strides.
std::pair<int64_t, int64_t> aliased_elements(const TensorPlan& plan, const TensorGeometry& g);

// A set of `plan`'s buffers, outputs filled with `poison`, inputs holding the
// padding byte: an op fills its inputs (and a scatter output's row mask) next.
TensorSet allocate_tensor_set(TensorPlan plan, Poison poison);

// Builds every tensor of a valid case (validate_case returned ""): guarded
// buffers, outputs filled with `poison`, inputs generated from the case's
// recipes and seed (fuzz/buffers/values.h). With the exact alias, query_out's front
// holds ql_nope's values, not poison. `times`, when not null, gets the time
// of each part and of the whole build under the case's value recipe.
TensorSet build_tensor_set(const Case& c, Poison poison, InputTimes* times = nullptr);

// Fills every output element with `poison` again; an input view inside an
// output buffer (the exact alias: ql_nope is query_out's front) keeps its
// values. Sentinels, padding and inputs are left as they are.
void fill_poison(TensorSet& set, Poison poison);

// Launch arguments over payloads at `payload_bases` (one per buffer of the
// plan; host or device addresses: nothing is dereferenced). The indexer
// outputs are passed even when has_indexer is false, so that a kernel which
// writes them anyway is caught; the indexer inputs are null then.
FusedQArgs make_fused_q_args(const Case& c, const TensorPlan& plan,
                             const std::vector<uint8_t*>& payload_bases);
// The same over the set's own host buffers.
FusedQArgs make_fused_q_args(const Case& c, TensorSet& set);

}  // namespace qcheck
