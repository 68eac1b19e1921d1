// The GPU gate's covering grid (issue: "both kernels against the oracle, bit
// for bit, over a covering grid"): every listed value appears at least once
// and every pair of the discrete choices appears together in some case, with
// far fewer cases than the full product.
#pragma once

#include <vector>

#include "fuzz/case/case.h"

namespace qcheck {

// The covering grid. `small` keeps every discrete choice but caps T, H and NI
// (for the compute-sanitizer passes, which run kernels 10-100x slower).
std::vector<Case> gpu_covering_grid(bool small);

// One case per code path of the kernels that the grid's real dims do not
// reach: element (unaligned, odd dims) paths, the two-pass indexer of
// D > 128, R = D, and the blocked kernel's staged configuration (T >= 2048).
std::vector<Case> gpu_kernel_path_cases(bool small);

// The token-limit cases: T = 65537 and T = 2^20 + 3 with small H and NI.
std::vector<Case> gpu_token_limit_cases();

}  // namespace qcheck
