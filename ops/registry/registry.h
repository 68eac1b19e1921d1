// Every op of the family, in one place: the doors and tools find an op here
// by name. An explicit list, one line per op (no self-registration: a static
// library drops registrars nothing references, and their order is not
// defined).
#pragma once

#include <string>
#include <vector>

#include "core/op/op.h"

namespace qcheck {

const std::vector<const Op*>& all_ops();

// The op of that name, or null.
const Op* find_op(const std::string& name);

// "a, b": the ops' names, for error messages.
std::string op_names();

}  // namespace qcheck
