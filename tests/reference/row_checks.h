// Helpers of the SIMD-vs-spec row tests: rows placed at an offset from an
// aligned base with guard elements around them, and a counter of bit
// differences that keeps the first few as readable lines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "hwy/aligned_allocator.h"
#include "numerics/float_bits.h"
#include "tests/reference/f32_sweep.h"

namespace qcheck::test {

constexpr size_t kMaxOffset = 3;
constexpr size_t kGuard = 16;  // elements after the row that must stay untouched

// A row at `offset` elements from an aligned base, with kMaxOffset + kGuard
// spare elements around it pre-filled with `fill`. (Rows at a stride are one
// OffsetRow of the whole span; changed() checks the gaps between them.)
template <typename T>
class OffsetRow {
 public:
  OffsetRow(size_t count, size_t offset, T fill)
      : storage_(hwy::AllocateAligned<T>(count + kMaxOffset + kGuard)), count_(count), offset_(offset), fill_(fill) {
    for (size_t i = 0; i < count + kMaxOffset + kGuard; ++i) storage_[i] = fill;
  }
  T* data() { return storage_.get() + offset_; }
  const T& operator[](size_t i) const { return storage_[offset_ + i]; }
  // Whether element i of the row no longer holds the fill.
  bool changed(size_t i) const { return std::memcmp(&storage_[offset_ + i], &fill_, sizeof(T)) != 0; }
  // Spare elements whose bytes changed.
  size_t written_outside() const {
    size_t changed = 0;
    for (size_t i = 0; i < count_ + kMaxOffset + kGuard; ++i) {
      const bool inside = i >= offset_ && i < offset_ + count_;
      if (!inside && std::memcmp(&storage_[i], &fill_, sizeof(T)) != 0) ++changed;
    }
    return changed;
  }

 private:
  hwy::AlignedFreeUniquePtr<T[]> storage_;
  size_t count_, offset_;
  T fill_;
};

template <typename T>
inline uint32_t bits_of_element(T value) {
  if constexpr (std::is_same_v<T, float>) {
    return bits_of(value);
  } else {
    return uint32_t(value);
  }
}

// Counts differences and keeps the first few as readable lines.
class Differences {
 public:
  template <typename T>
  void compare(const std::string& where, size_t index, uint32_t input, T expected, T actual) {
    if (bits_of_element(expected) == bits_of_element(actual)) return;
    if (count_++ < 10) {
      lines_ += where + " [" + std::to_string(index) + "] input " + hex(input, 8) + ": spec " +
                hex(bits_of_element(expected), 2 * sizeof(T)) + ", simd " + hex(bits_of_element(actual), 2 * sizeof(T)) + "\n";
    }
  }
  void outside(const std::string& where, size_t written) {
    if (written != 0 && count_++ < 10) lines_ += where + ": " + std::to_string(written) + " elements written outside the row\n";
  }
  size_t count() const { return count_; }
  const std::string& lines() const { return lines_; }

 private:
  size_t count_ = 0;
  std::string lines_;
};

}  // namespace qcheck::test
