#include "fuzz/buffers/guarded_buffer.h"

namespace qcheck {

uint8_t GuardedBuffer::sentinel_byte(size_t offset) {
  static constexpr uint8_t kPattern[4] = {0xEF, 0xBE, 0xAD, 0xDE};
  return kPattern[offset % 4];
}

GuardedBuffer::GuardedBuffer(size_t payload_bytes)
    : bytes_(payload_bytes + 2 * kSentinelBytes, kPaddingByte) {
  for (size_t i = 0; i < kSentinelBytes; ++i) {
    bytes_[i] = sentinel_byte(i);
    bytes_[kSentinelBytes + payload_bytes + i] = sentinel_byte(i);
  }
}

}  // namespace qcheck
