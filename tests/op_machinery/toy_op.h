// toy_scatter_quant: a small op kept for the machinery's own tests. It is not
// a user op: ops/registry does not list it and nothing ships it. It has what
// the key side and DeepSeek-V4's query need from the machinery and fused_q
// does not (issue 37): an output written only where a slot mapping says (-1:
// nothing), several typed views into one buffer at byte offsets and strides
// (each cache row holds the codes, then the scale, then padding), the element
// types int32, ue8m0, e2m1 pairs and e4m3fnuz, and a sum in a named order.
//
// Per token t:
//   rms[t] = sqrtf(sum of x[t, i]^2 in the case's reduction order / D)
// and where s = slot_mapping[t] >= 0, cache row s gets x[t] quantized:
//   e4m3, e4m3fnuz: one power-of-two scale for the row, the ceiling of
//     max(amax, 1e-4) / max (448 OCP, 224 FNUZ as vLLM's ROCm path clamps),
//     the codes of x / scale (saturating); the scale stored as an f32 or as
//     its ue8m0 code in the low byte of an int32 (the other bytes 0).
//   mxfp4: a ue8m0 scale per 32 values (ceiling of max(amax, 2^-126) / 6),
//     e2m1 codes of x / scale rounded to nearest even, two per byte, low
//     nibble first.
// A cache row: [codes | scales | row_padding bytes]; rows no token maps, the
// padding and the bytes around the cache keep what the plan put there.
#pragma once

#include <cstdint>
#include <string>

#include "core/op/op.h"
#include "fuzz/buffers/tensors.h"
#include "fuzz/verdict/compare.h"
#include "numerics/reduction.h"

namespace qcheck::toy {

enum class ToyFormat : uint8_t { kE4m3, kE4m3fnuz, kMxfp4 };
enum class ToyScaleStore : uint8_t { kF32, kInt32Code };  // of the e4m3 formats; mxfp4 stores ue8m0 bytes

struct ToyCase {
  int64_t tokens = 6;
  int64_t dim = 64;  // a multiple of 32
  int64_t slots = 9;  // cache rows; at least `tokens`
  int64_t row_padding = 4;  // bytes after each cache row
  ToyFormat format = ToyFormat::kE4m3;
  ToyScaleStore scale_store = ToyScaleStore::kF32;
  spec::Reduction reduction{ReductionOrder::kStridedLanes, 32};
  uint64_t seed = 1;
};

// The op's tensors, in its table's order (TensorGeometry::id holds these).
enum ToyTensor : uint8_t { kX, kSlotMapping, kCacheCodes, kCacheScales, kRms };

// Bytes of one cache row's codes and scales, and the row stride (with padding).
int64_t code_bytes(const ToyCase& c);
int64_t scale_bytes(const ToyCase& c);
int64_t cache_row_bytes(const ToyCase& c);

TensorPlan plan(const ToyCase& c);

// A set with the case's inputs (x from the seed, every token's slot distinct
// or -1; token 1 always -1) and the cache views' row masks; outputs poisoned.
TensorSet build(const ToyCase& c, Poison poison);

// Fills the outputs as the rule above says (the oracle).
void run_oracle(const ToyCase& c, TensorSet& set);

// The kernel under test: writes through raw pointers and byte strides, as a
// device kernel would, with one bug planted or none.
enum class ToyBug : uint8_t {
  kNone,
  kWritesUnmappedRow,     // a token with slot -1 is written to the last cache row
  kNegativeSlotWrites,    // slot -1 is used as a row index: bytes before the cache
  kSwapsNibbles,          // e2m1 pairs high nibble first
  kScaleInPadding,        // the scale written one row-padding later: into the padding
  kOcpCodesOnFnuz,        // e4m3fnuz rows get OCP e4m3 bytes
  kSequentialSum,         // rms summed in order whatever the case's reduction says
  kSkipsLastToken,        // the last token is neither quantized nor its rms written
};
void run_kernel(const ToyCase& c, ToyBug bug, TensorSet& set);

PartNamer parts(const ToyCase& c);  // cache codes: "codes" or "block k"; scales "scales"; rms "rms"

// The op's identity and vocabulary (core/op/op.h), as a user op would list it.
const Op& toy_op();

}  // namespace qcheck::toy
