// Sums of f32 rows in a named order (ReductionOrder, numerics/types.h): the
// exact bits a kernel gets from its additions, each an IEEE f32 addition
// rounded to nearest even. Every order gives the same real sum; their
// roundings differ, and a norm's output bits with them.
#pragma once

#include <cstdint>

#include "numerics/types.h"

namespace qcheck::spec {

struct Reduction {
  ReductionOrder order = ReductionOrder::kSequential;
  int lanes = 32;  // the partial sums of kStridedLanes and kBlockedLanes: a power of two, 1 to 1024
  // kTritonBlock's layout (the compiler's blocked layout of the block, read
  // from its TTGIR): powers of two, size_per_thread 1 to 16, warps 1 to 32.
  int size_per_thread = 4;
  int warps = 4;
  SquareStep squares = SquareStep::kRounded;  // reduce_sum_of_squares only
};

// Why `r` cannot be computed ("" when it can): a lane count, layout or
// order out of range, named with its limit.
const char* reduction_error(const Reduction& r);

// kTritonBlock with the layout Triton 3.6 gives a 1-D block of `block`
// lanes (a power of two) over `warps` warps on sm_90, as its TTGIR showed
// for every shape measured (blocks 128, 512, 1024, 2048 over 1, 4 and 8
// warps; tests/reference/data): size_per_thread = block / (32 * warps),
// clamped to [1, 4] (a thread's 16-byte vector of f32). Outside the shapes
// measured this is the rule they follow, not a measurement.
Reduction triton_block_reduction(int64_t block, int warps);

// The sum of x[0 .. n) in `r`'s order. n may be 0 (the sum is +0). A NaN in
// the row gives a NaN; its payload is not specified (kernels differ).
float reduce_sum(const float* x, int64_t n, Reduction r);

// The same over the squares x[i] * x[i], each rounded to f32 first or
// contracted into the additions as r.squares says: RMSNorm's sum of squares
// and LayerNorm's of the centred row.
float reduce_sum_of_squares(const float* x, int64_t n, Reduction r);

}  // namespace qcheck::spec
