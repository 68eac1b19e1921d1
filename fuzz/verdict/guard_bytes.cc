#include "fuzz/verdict/guard_bytes.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace qcheck {
std::vector<std::pair<int64_t, int64_t>> element_byte_ranges(const TensorGeometry& g) {
  std::vector<std::pair<int64_t, int64_t>> ranges;
  const int64_t bytes = g.width * element_bytes(g.type);
  for (int64_t row = 0; row < g.rows; ++row) {
    for (int64_t col = 0; col < g.cols; ++col) {
      const int64_t first = g.byte_offset(row, col, 0);
      ranges.push_back({first, first + bytes});
    }
  }
  return ranges;
}

std::vector<bool> covered_payload(const TensorPlan& plan, const GuardedBuffer& buffer, int index) {
  std::vector<bool> covered(buffer.payload_bytes(), false);
  for (const TensorGeometry& g : plan.tensors) {
    if (g.buffer != index) continue;
    for (const auto& [first, end] : element_byte_ranges(g)) {
      std::fill(covered.begin() + first, covered.begin() + end, true);
    }
  }
  return covered;
}

void add_guard_mismatches(const TensorSet& expected, const GuardedBuffer& got, int index,
                          const std::vector<bool>& covered, char run, const MismatchClass* as, Report* report) {
  const GuardedBuffer& e = expected.buffers[index];
  // Equal bytes are never a guard mismatch: blocks that match whole are
  // skipped with memcmp (a view of 2^32 elements has gigabytes of padding).
  constexpr size_t kBlock = 4096;
  for (size_t offset = 0; offset < e.size(); ++offset) {
    if (offset % kBlock == 0) {
      const size_t n = std::min(kBlock, e.size() - offset);
      if (std::memcmp(got.data() + offset, e.data() + offset, n) == 0) {
        offset += n - 1;
        continue;
      }
    }
    const bool sentinel = e.in_sentinel(offset);
    if (!sentinel && covered[offset - GuardedBuffer::kSentinelBytes]) continue;
    if (got.data()[offset] == e.data()[offset]) continue;
    Mismatch m;
    const char* part = !sentinel                                ? "padding"
                       : offset < GuardedBuffer::kSentinelBytes ? "sentinel before"
                                                                : "sentinel after";
    const MismatchClass kind = as != nullptr ? *as
                               : sentinel    ? MismatchClass::kSentinelOverwritten
                                             : MismatchClass::kPaddingOverwritten;
    m.signature = Signature{expected.plan.buffers[index].name, part, kind};
    m.run = run;
    m.byte_offset = static_cast<int64_t>(offset);
    m.expected_bits = e.data()[offset];
    m.got_bits = got.data()[offset];
    report->add(m);
  }
}

}  // namespace qcheck
