// store_rows_streaming (numerics/simd_rows_stream.h) per Highway target: the
// bytes it writes are those of a memcpy per row, and nothing else changes,
// for row lengths around whole vectors, one row and several, rows back to
// back (merged into one run) or with gaps, and every destination
// misalignment within a vector.
#include <cstdint>
#include <string>
#include <vector>

#include "numerics/simd_rows_stream.h"
#include "tests/reference/row_values.h"
#include "tests/reference/target_fixture.h"

namespace qcheck::test {
namespace {

class SimdRowsStream : public SimdTargetTest {};
QCHECK_INSTANTIATE_PER_TARGET(SimdRowsStream);

TEST_P(SimdRowsStream, WritesExactlyTheRowsBytes) {
  const size_t vector_bytes = simd_row_dispatched_lanes() * sizeof(float);
  std::vector<size_t> lengths;
  for (size_t n = 0; n <= 3 * vector_bytes + 5; ++n) lengths.push_back(n);
  lengths.push_back(1024);  // a production ql_nope row (L = 512 bf16)
  SplitMix64 rng(0x57AEA3u);
  constexpr uint8_t kFill = 0xC3;
  size_t rows_checked = 0, wrong_bytes = 0, stray_bytes = 0;
  std::string first;
  for (size_t length : lengths) {
    for (size_t rows : {size_t(1), size_t(3)}) {
      for (size_t gap : {size_t(0), size_t(7)}) {
        for (size_t misalignment = 0; misalignment < vector_bytes; misalignment += 3) {
          const size_t from_stride = length + (gap == 0 ? 0 : gap + 2), to_stride = length + gap;
          std::vector<uint8_t> from(rows * from_stride + 1);
          for (uint8_t& byte : from) byte = uint8_t(rng.next());
          // Destination: a guard vector, the misalignment, the rows, a guard vector.
          std::vector<uint8_t> storage(rows * to_stride + 3 * vector_bytes, kFill);
          const size_t base = (vector_bytes - reinterpret_cast<uintptr_t>(storage.data()) % vector_bytes) % vector_bytes;
          uint8_t* to = storage.data() + base + vector_bytes + misalignment;
          store_rows_streaming(from.data(), from_stride, to, to_stride, length, rows);
          fence_streaming_stores();
          for (size_t i = 0; i < storage.size(); ++i) {
            const size_t at = i - size_t(to - storage.data());
            const bool inside = &storage[i] >= to && at < rows * to_stride && at % to_stride < length;
            if (inside && storage[i] != from[at / to_stride * from_stride + at % to_stride]) {
              if (wrong_bytes++ == 0) first = "length " + std::to_string(length) + " rows " + std::to_string(rows);
            }
            if (!inside && storage[i] != kFill) {
              if (stray_bytes++ == 0) first = "stray write, length " + std::to_string(length);
            }
          }
          rows_checked += rows;
        }
      }
    }
  }
  EXPECT_EQ(wrong_bytes, 0u) << target_name() << ": first at " << first;
  EXPECT_EQ(stray_bytes, 0u) << target_name() << ": first at " << first;
  EXPECT_GT(rows_checked, 0u);
}

}  // namespace
}  // namespace qcheck::test
