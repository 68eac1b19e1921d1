// Where every tensor of a case lives: which guarded buffer, at which element
// offset, with which strides. Pure geometry, computed from the Case alone, so
// validation can add up the memory before anything is allocated, and the
// verdict can walk every element and every padding byte of a buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/case/case.h"

namespace qcheck {

enum class ElementType : uint8_t { kInt64, kF32, kBf16, kE4m3 };

// kUntouchedOutput: an output the launch must not write (the indexer outputs
// when has_indexer is false); it is allocated anyway so a stray write shows.
enum class TensorRole : uint8_t { kInput, kOutput, kUntouchedOutput };

// Elements in front of q_pe in a wide-row view: production's q is a
// [T, H, 128 + R] tensor and q_pe its last R columns (SEMANTICS.md).
constexpr int64_t kWideRowPrefix = 128;

struct TensorGeometry {
  TensorId id;
  TensorRole role;
  ElementType type;
  int64_t rows;        // T (P for a cache)
  int64_t cols;        // heads (1 for positions and caches)
  int64_t width;       // elements per (row, col)
  int64_t row_stride;  // elements
  int64_t col_stride;  // elements
  int64_t offset;      // elements from the start of the buffer's payload
  int buffer;          // index into TensorPlan::buffers

  int64_t element_count() const { return rows * cols * width; }
  // Element offset of [row, col, i] from the payload start.
  int64_t element_offset(int64_t row, int64_t col, int64_t i) const {
    return offset + row * row_stride + col * col_stride + i;
  }
};

// Every buffer is laid out as [front sentinel | payload | back sentinel]
// (fuzz/buffers/guarded_buffer.h writes and checks the sentinels); the plan
// counts them so that validation can bound a case's memory.
constexpr size_t kSentinelBytes = 256;

struct BufferPlan {
  std::string name;       // the name of the tensor that owns it
  int64_t payload_bytes;  // without the sentinels
  bool is_output;         // holds an output (possibly with ql_nope aliased in)
};

struct TensorPlan {
  std::vector<TensorGeometry> tensors;  // only the tensors this case has
  std::vector<BufferPlan> buffers;

  const TensorGeometry* find(TensorId id) const;
  // All buffers together, sentinels included.
  uint64_t total_bytes() const;
};

// The plan of a case whose dims are within the limits validate_case checks
// (the arithmetic cannot overflow then). Absent tensors: ql_nope on the bf16
// separate path; the indexer inputs and caches when has_indexer is false.
// With the exact alias, ql_nope is a view into query_out's buffer.
TensorPlan plan_tensors(const Case& c);

const char* name_of(TensorId id);

// A tensor as a kernel outside this library sees it: positions [T], caches
// [P, R], every other tensor [T, heads, width]; strides in elements (the
// last one 1). The C API's plan and the .npy exchange both give this.
struct OutsideShape {
  int ndim = 0;
  int64_t shape[3] = {0, 0, 0};
  int64_t strides[3] = {0, 0, 0};
};
OutsideShape outside_shape(const TensorGeometry& g);
const char* name_of(ElementType type);
int element_bytes(ElementType type);

}  // namespace qcheck
