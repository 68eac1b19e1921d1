// The composed oracle run on a Case through the harness's one data path
// (fuzz/): the case's TensorSet is built (guarded buffers, poisoned outputs,
// inputs from the case's recipes), optionally given hand-written input
// elements, filled by run_fused_q_oracle under one row table, and checked
// byte for byte by fuzz/verdict/compare.h. The oracle tests here use it to hold the
// SIMD tables against the scalar spec table and to run hand-computed launches.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fuzz/buffers/tensors.h"
#include "fuzz/case/case.h"
#include "numerics/profile.h"
#include "numerics/row_ops.h"

namespace qcheck::test {

// Overwrites input elements of a freshly built set (hand-computed known
// answers need exact inputs that no value recipe gives). Empty: keep the
// recipe's values.
using InputWriter = std::function<void(TensorSet&)>;

// The set of `c` as built with `poison`, after `write_inputs`.
TensorSet build_inputs(const Case& c, Poison poison, const InputWriter& write_inputs);

// The oracle run twice under one row table: on the set built with Poison::kA
// and on the set built with Poison::kB (same inputs), so that an output
// element the oracle never writes keeps two different poisons and shows.
struct OracleRun {
  std::string refusal;  // the oracle's error on either run; "" when it ran
  TensorSet a, b;
};
OracleRun run_oracle_twice(const Case& c, const Profile& profile, const RowOps& rows,
                           const InputWriter& write_inputs = {});

// Lines naming what the runs changed but must not have, measured against the
// set as built: a sentinel or padding byte, an input element, an output the
// launch must leave alone (the indexer outputs without the indexer), an
// output element left unwritten, or one that differs between the two runs.
// Output elements the oracle wrote are its result, not a side effect. "" when
// clean.
std::string side_effects(const Case& c, const OracleRun& run, const InputWriter& write_inputs = {});

// The report (fuzz/verdict/report.h) of every byte where `actual` differs from
// `expected.a`: output elements, padding, sentinels, inputs. "" when every
// byte of every buffer is identical.
std::string differences(const Case& c, const OracleRun& expected, const OracleRun& actual);

// Writes `values` into every element of tensor `id`, in [row][col][i] order.
// A count or element size that does not fit the tensor is a test failure.
template <typename Element>
void write_tensor(TensorSet& set, TensorId id, const std::vector<Element>& values);

// The bits of every element of tensor `id`, in [row][col][i] order, as hex
// ("0x3E80 0xBF00 ..."), for comparing with hand-written expected bits.
std::string tensor_hex(const TensorSet& set, TensorId id);
// The same for a hand-written list of `digits`-hex-digit bit patterns.
std::string hex_list(const std::vector<uint32_t>& bits, int digits);

// ---- template definition ----

void write_tensor_bytes(TensorSet& set, TensorId id, const uint8_t* bytes, size_t count,
                        size_t element_size);

template <typename Element>
void write_tensor(TensorSet& set, TensorId id, const std::vector<Element>& values) {
  write_tensor_bytes(set, id, reinterpret_cast<const uint8_t*>(values.data()), values.size(),
                     sizeof(Element));
}

}  // namespace qcheck::test
