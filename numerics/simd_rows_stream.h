// Copying output rows out with streaming stores (numerics/simd_rows_stream.cc).
#pragma once

#include <cstddef>

namespace qcheck {

// For each row r < rows: copies row_bytes bytes from from + r * from_stride
// to to + r * to_stride (strides in bytes), with non-temporal stores for
// every whole vector-aligned piece of the destination and plain stores for
// the ends. The bytes written are exactly those of a memcpy per row; only
// the cache traffic differs (the destination lines are not read first).
// Source and destination must not overlap. Dispatched to the best Highway
// target. The calling thread reads the bytes back at once; other threads
// only after fence_streaming_stores().
void store_rows_streaming(const void* from, size_t from_stride, void* to, size_t to_stride,
                          size_t row_bytes, size_t rows);

// Orders every streaming store made so far before any later store (sfence):
// once per launch, not per call, since it waits for the stores to drain.
void fence_streaming_stores();

}  // namespace qcheck
