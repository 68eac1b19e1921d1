// Deterministic input values of a case: positions, cos/sin caches and every
// bf16/f32 input, from the case's recipes and seed alone.
//
// Every row (token, head) of every tensor draws from its own stream, keyed by
// (seed, tensor, token, head): a row's values do not depend on T, on the
// layout or on other rows, so a shrunk case keeps the rows it still has.
//
// Cos/sin caches: rows that some position uses hold real rotary values
// (cos and sin of position * base^(-2i/R), computed in double and rounded to
// f32, then to bf16 for a bf16 cache), or crafted ones for the edge recipes
// (scale band: cos = 1 + m * 2^-23, sin = 0; large positions: the rotary
// values of a position near 2^20..2^24). Rows no position uses hold noise,
// so a kernel that reads the wrong row gets different numbers. The two
// caches use different bases (10000 and 50000) so that reading one for the
// other shows too.
#pragma once

#include <cstdint>

#include "fuzz/buffers/input_times.h"
#include "fuzz/buffers/tensors.h"
#include "fuzz/case/case.h"

namespace qcheck {

// Writes every input element of `set` (built from the same case); `times`,
// when not null, gets the time of each part.
void generate_inputs(const Case& c, TensorSet& set, InputTimes* times = nullptr);

// The m of a scale-band cache row of the indexer cache (cos = 1 + m * 2^-23,
// sin = 0), or 0 when row `position` is not a band row. Only referenced rows
// can be band rows; the caller says whether the row is referenced.
int indexer_band_m(const Case& c, int64_t position);

// Rotary bases of the two caches.
constexpr double kMqaRopeBase = 10000.0;
constexpr double kIndexerRopeBase = 50000.0;

}  // namespace qcheck
