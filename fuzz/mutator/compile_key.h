// What a JIT compiler sees of a case, and mutations that keep it.
//
// A Triton kernel compiles one variant per distinct specialization of its
// arguments: its tl.constexpr parameters (in production kernels of this
// family the head counts, the head dims, R/2 and the flags), each pointer's
// element type and 16-byte alignment, and, under Triton's default, each int
// argument's equality to 1, divisibility by 16 and width (32 or 64 bits).
// A case whose key a kernel has compiled before runs at launch speed; one
// with a new key pays a compile (tens of ms to seconds). The Python door's
// compile-aware fuzz loop (python/qcheck/fuzzing/loop.py) spends most executions on
// warm keys (mutate_case_warm) and a bounded share on new ones.
#pragma once

#include <string>

#include "core/random/prng.h"
#include "fuzz/case/case.h"
#include "fuzz/mutator/case_mutator.h"

namespace qcheck::fuzzing {

// The key of a valid case, one line: the paths and flags, then per tensor
// (as a kernel outside sees it: tensor_plan.h outside_shape) its dtype, its
// shape with the row count (T, or P for a cache) as its class and every
// other dim exact, each stride's class and the data pointer's alignment
// class. Classes: "1" (equal to 1), "16" (a multiple of 16), "L" (2^31 or
// more: a 64-bit int), "n" (any other). Scalars (q_scale and the weight
// scales) and values are not in it: Triton passes floats unspecialized.
std::string compile_key(const Case& c);

// Changes the fields a kernel sees as data (values, positions, the scales,
// the seed) or as a plain int within its class (T, P, padding, the weights'
// column stride), then repairs; keeps compile_key(c) unchanged (a candidate
// that changes it is dropped; after 16 such, only the seed changes). The
// case stays within the budget the mutator would give it.
void mutate_case_warm(Case& c, Xoshiro256& rng, const SizeBudget& budget = kDefaultBudget);

}  // namespace qcheck::fuzzing
