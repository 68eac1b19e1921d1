// One host allocation with guard bytes: a fixed sentinel pattern before and
// after the payload, and a fixed padding byte in every payload byte that no
// element covers (view padding). Writing outside a tensor's elements, by a
// stray index or a missing tail guard, therefore changes a byte whose value
// is known, and the verdict reports it.
//
//   [ front sentinel | payload (elements + padding) | back sentinel ]
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "fuzz/case/tensor_plan.h"

namespace qcheck {

class GuardedBuffer {
 public:
  static constexpr size_t kSentinelBytes = qcheck::kSentinelBytes;
  // Padding byte: 0xFD reads as a large negative number in f32 and bf16
  // (about -4.2e37) and as -416 in e4m3, so a kernel that reads padding
  // instead of an element changes its row's results visibly.
  static constexpr uint8_t kPaddingByte = 0xFD;

  GuardedBuffer() : GuardedBuffer(0) {}
  // Sentinels written, payload filled with kPaddingByte.
  explicit GuardedBuffer(size_t payload_bytes);

  uint8_t* payload() { return bytes_.data() + kSentinelBytes; }
  const uint8_t* payload() const { return bytes_.data() + kSentinelBytes; }
  size_t payload_bytes() const { return bytes_.size() - 2 * kSentinelBytes; }

  // The whole allocation, sentinels included.
  uint8_t* data() { return bytes_.data(); }
  const uint8_t* data() const { return bytes_.data(); }
  size_t size() const { return bytes_.size(); }

  // The byte a sentinel holds at `offset` from the start of the allocation
  // (front sentinel) or from the end of the payload (back sentinel): the
  // little-endian bytes of 0xDEADBEEF, repeated.
  static uint8_t sentinel_byte(size_t offset);
  // True when `offset` (from the start of the allocation) lies in a sentinel.
  bool in_sentinel(size_t offset) const {
    return offset < kSentinelBytes || offset >= kSentinelBytes + payload_bytes();
  }
  // The byte a sentinel must hold at `offset` from the start of the allocation.
  uint8_t expected_sentinel_byte(size_t offset) const {
    return sentinel_byte(offset < kSentinelBytes ? offset
                                                 : offset - kSentinelBytes - payload_bytes());
  }

 private:
  std::vector<uint8_t> bytes_;
};

}  // namespace qcheck
