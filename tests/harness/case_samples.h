// Cases for the harness tests: small random valid cases over every enum (for
// the encoding round trips) and an explicit covering grid (for the backend
// runs). Deterministic: the same index gives the same case.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/case/case.h"

namespace qcheck::test {

// A small valid case; every field varies with `index`.
Case sample_case(uint64_t index);

// A small base case: T = 17 (one full block of 16 and a tail), H = 3,
// NI = 2, D = 32, R = 8, L = 16, P = 40.
Case small_case();

struct NamedCase {
  std::string name;
  Case c;
};

// One change at a time from small_case(): every path with and without the
// alias and the indexer, both indexer styles, every dtype, every layout,
// every value and positions recipe, T in {0, 1, 15, 16, 17, 33}, weights
// column stride 2, and the real dims (R 64, D 128, L 512) per path.
std::vector<NamedCase> covering_grid();

// For the round trips of every case form: the covering grid, 200 sample
// cases, and sample 7 with three edits (a weight column from row 1 on, a
// position set to -1 as int64, a default edit).
std::vector<Case> round_trip_cases();

}  // namespace qcheck::test
