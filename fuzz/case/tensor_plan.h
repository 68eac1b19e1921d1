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

// The element types of the family. fused_q's tensors use the first four; the
// rest are for the ops that write paged caches and narrow formats:
// kUe8m0 a power-of-two scale byte (2^(code - 127), 0xFF NaN), kE2m1x2 a
// byte holding two e2m1 codes (low nibble first, compared code by code),
// kE4m3fnuz the FNUZ encoding (bias 8, 0x80 the only NaN, no -0).
enum class ElementType : uint8_t { kInt64, kF32, kBf16, kE4m3, kInt32, kU8, kUe8m0, kE2m1x2, kE4m3fnuz };

// kUntouchedOutput: an output the launch must not write (the indexer outputs
// when has_indexer is false); it is allocated anyway so a stray write shows.
// kScatterOutput: an output whose rows are written only where the set's row
// mask says (a paged cache under a slot mapping, -1 meaning "write nothing");
// every other row must keep its poison, like an untouched output.
enum class TensorRole : uint8_t { kInput, kOutput, kUntouchedOutput, kScatterOutput };

// Elements in front of q_pe in a wide-row view: production's q is a
// [T, H, 128 + R] tensor and q_pe its last R columns (SEMANTICS.md).
constexpr int64_t kWideRowPrefix = 128;

struct TensorGeometry {
  TensorId id;  // its index in the op's tensor table (fused_q's TensorId names them)
  TensorRole role;
  ElementType type;
  int64_t rows;        // T (P for a cache)
  int64_t cols;        // heads (1 for positions and caches)
  int64_t width;       // elements per (row, col)
  int64_t row_stride;  // elements
  int64_t col_stride;  // elements
  int64_t offset;      // elements from the start of the buffer's payload
  int buffer;          // index into TensorPlan::buffers
  const char* name = "";  // the tensor's name in reports
  // Bytes per unit of offset, row_stride and col_stride; 0: the element's
  // own size (every fused_q tensor). A byte view into rows of mixed types
  // (a paged cache row: fp8 codes, then the scale's bytes, then padding)
  // takes 1, so its offset and strides count bytes.
  int64_t stride_unit = 0;

  int64_t element_count() const { return rows * cols * width; }
  // Element offset of [row, col, i] from the payload start (stride_unit 0).
  int64_t element_offset(int64_t row, int64_t col, int64_t i) const {
    return offset + row * row_stride + col * col_stride + i;
  }
  // Byte offset of [row, col, i] from the payload start, for any view.
  int64_t byte_offset(int64_t row, int64_t col, int64_t i) const;
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
const char* name_of(TensorRole role);

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
