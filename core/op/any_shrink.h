// A failing case of any op made smaller field by field, through the op's
// field metadata alone (core/op/op.h): each candidate changes one field of
// the best case so far toward its smallest value: an integer toward 0 (0
// itself, then half the distance, a quarter, ..., one step), a boolean to
// false, an enumeration to each earlier choice. Bits, seeds and texts stay:
// a value or a seed is what a failure is made of. A candidate is kept when
// `same` says it still fails the same way (an invalid candidate is `same`'s
// to refuse), so the result cannot slip to another failure. Passes repeat
// until none changes the case or `max_tries` candidates were tried.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/op/any_case.h"

namespace qcheck {

struct AnyShrinkResult {
  AnyCase best;
  int64_t tries = 0;     // candidates evaluated
  int64_t accepted = 0;  // of which kept
};

// `log`, when set, gets one line per kept candidate ("index_dim 128 -> 16").
AnyShrinkResult shrink_any_case(const AnyCase& failing, const std::function<bool(const AnyCase&)>& same,
                                int64_t max_tries = 20000,
                                const std::function<void(const std::string&)>& log = nullptr);

}  // namespace qcheck
