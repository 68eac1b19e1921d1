// The simplifications the minimizer tries (fuzz/minimize/minimize.h), grouped in
// passes and ordered inside each pass from the simplest result to the
// smallest change. A simplification is a function over the current best
// case: it changes the case and returns true, or returns false where it
// does not apply (the value is already that small, the field is absent), so
// one list made for a case still applies after earlier steps changed it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "fuzz/case/case.h"

namespace qcheck {

struct Simplification {
  std::string step;                    // "T 41 -> 17", "zero q_pe rows 0..7"
  std::function<bool(Case&)> apply;    // false: changes nothing here
};

enum class ShrinkPass {
  kTokens,        // T down (the tail class is kept by the acceptance test, not here)
  kHeads,         // H and NI down
  kOneToken,      // T = 1 holding the values of one later token (as edits)
  kOneHead,       // H = 1 or NI = 1 holding the values of one later head (as edits)
  kFeatures,      // indexer off, alias off, contiguous layouts, f32 dtypes, the simplest path,
                  // normal values and arange positions, q_scale 1, default scales, seed 0
  kDims,          // L, D, R and P down to the smallest valid
  kZeroTensors,   // a whole input zeroed (caches: cos 1, sin 0); positions 0
  kZeroRows,      // halves, quarters, ... of an input's rows zeroed, then single (row, head)s
  kZeroElements,  // single elements zeroed
  kSimpleValues,  // each nonzero element toward 1, -1, a power of two, a short dyadic fraction
};
constexpr ShrinkPass kShrinkPasses[] = {
    ShrinkPass::kTokens,      ShrinkPass::kHeads,    ShrinkPass::kOneToken,     ShrinkPass::kOneHead,
    ShrinkPass::kFeatures,    ShrinkPass::kDims,     ShrinkPass::kZeroTensors,  ShrinkPass::kZeroRows,
    ShrinkPass::kZeroElements, ShrinkPass::kSimpleValues};

const char* name_of(ShrinkPass pass);

// The simplifications of one pass for a valid case `c`.
std::vector<Simplification> simplifications(const Case& c, ShrinkPass pass);

// The value passes alone (kZeroTensors .. kSimpleValues; fuzz/minimize/shrink_values.cc).
std::vector<Simplification> value_simplifications(const Case& c, ShrinkPass pass);

// One alternative value per field of `c`, for the explain phase: (field,
// change) pairs that leave a valid case where they apply.
std::vector<Simplification> field_alternatives(const Case& c);

// How simple an fp32 value is, as the value passes rank it: 0 for +-0, 1
// for 1.0, 2 for -1.0, 3 for other powers of two, 4 for two significant
// bits, 5 for anything else (NaN, Inf and subnormals included).
int simplicity(uint32_t f32_bits);

// Removes the edits that no longer fit the case (after T, heads or dims
// shrank, or an input went away).
void drop_unfit_edits(Case& c);

// The same inputs with the fewest edits: per input, the zeroing edit (when
// most of its elements are 0) and one edit per other element whose value it
// changes. Returns false (and leaves c alone) when that would not be shorter.
bool canonical_edits(Case& c);

}  // namespace qcheck
