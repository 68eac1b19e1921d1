// The guard bytes of a guarded buffer: its sentinels and every payload byte
// that no element of a tensor in it covers (view padding). A kernel must leave
// each as the plan wrote it; the comparer and the graph replay check walk
// them here.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "fuzz/buffers/tensors.h"
#include "fuzz/verdict/report.h"

namespace qcheck {

// The payload bytes [first, end) of each (row, col) of `g`'s elements.
std::vector<std::pair<int64_t, int64_t>> element_byte_ranges(const TensorGeometry& g);

// For each payload byte of buffer `index`: does some element of a tensor in
// it cover the byte? The rest (with the sentinels) are guard bytes.
std::vector<bool> covered_payload(const TensorPlan& plan, const GuardedBuffer& buffer, int index);

// Every guard byte (sentinel, or payload no element covers) of buffer
// `index` where `got` differs from `expected`, as a mismatch of run `run`:
// of class `as`, or by default sentinel- or padding-overwritten.
void add_guard_mismatches(const TensorSet& expected, const GuardedBuffer& got, int index,
                          const std::vector<bool>& covered, char run, const MismatchClass* as, Report* report);

}  // namespace qcheck
