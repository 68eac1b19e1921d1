// Copies rows out with non-temporal (streaming) stores, for the composed
// oracle (fused_q_oracle.cc): a plain store first reads the line it writes
// ("read for ownership"), a streaming store of a whole line does not. The
// oracle streams the ql_nope copy into the packed front and the indexer codes
// (staged per token). Measured on tools/bench_oracle's launch (T = 16384,
// H = 16, NI = 32, one core, 2026-11-29, medians of 6 alternating runs):
// with ql_nope copied, 6.29 us/token with memcpy vs 5.35 streamed; the
// codes streamed save another 0.2 us/token in both variants. Both row tables
// go through the same composition, so this moves the floor they share. Bytes
// are copied as they are: no arithmetic.

#include "numerics/hwy_targets.h"  // first: it picks the targets

#include <cstdint>
#include <cstring>

#include "numerics/simd_rows_stream.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "numerics/simd_rows_stream.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/cache_control.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace qcheck {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void StoreRowsStreaming(const uint8_t* from, size_t from_stride, uint8_t* to, size_t to_stride,
                        size_t row_bytes, size_t rows) {
  // Rows that lie back to back on both sides are one long row: only its two
  // ends can share a line with bytes that are not written here.
  if (rows > 1 && from_stride == row_bytes && to_stride == row_bytes) {
    row_bytes *= rows;
    rows = 1;
  }
  const hn::ScalableTag<uint8_t> d;
  const size_t lanes = hn::Lanes(d);
  for (size_t r = 0; r < rows; ++r) {
    const uint8_t* src = from + r * from_stride;
    uint8_t* dst = to + r * to_stride;
    // Plain stores up to the first vector-aligned destination byte (Stream
    // needs an aligned address) and after the last whole vector. The loop
    // in between keeps every address in registers, so the loads of many
    // vectors are in flight at once.
    const size_t misalignment = reinterpret_cast<uintptr_t>(dst) % lanes;
    const size_t head = HWY_MIN(row_bytes, misalignment == 0 ? 0 : lanes - misalignment);
    std::memcpy(dst, src, head);
    size_t i = head;
    for (; i + lanes <= row_bytes; i += lanes) hn::Stream(hn::LoadU(d, src + i), d, dst + i);
    std::memcpy(dst + i, src + i, row_bytes - i);
  }
}

// Streaming stores are weakly ordered: this makes them visible to other
// threads. (The writing thread itself always reads its own stores back.)
void FenceStreamingStores() { hwy::FlushStream(); }

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace qcheck
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace qcheck {

HWY_EXPORT(StoreRowsStreaming);
HWY_EXPORT(FenceStreamingStores);

void store_rows_streaming(const void* from, size_t from_stride, void* to, size_t to_stride,
                          size_t row_bytes, size_t rows) {
  HWY_DYNAMIC_DISPATCH(StoreRowsStreaming)(static_cast<const uint8_t*>(from), from_stride,
                                           static_cast<uint8_t*>(to), to_stride, row_bytes, rows);
}

void fence_streaming_stores() { HWY_DYNAMIC_DISPATCH(FenceStreamingStores)(); }

}  // namespace qcheck
#endif  // HWY_ONCE
