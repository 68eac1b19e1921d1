// The Highway SIMD row functions (numerics/simd_rows.cc), target by target.
// simd_row_ops() (row_ops.h) dispatches to the best target on every call,
// and its resolve() names that target's direct table (the composed oracle
// asks once per launch); the functions here let tests, tools and benchmarks
// name the targets that were compiled in and run one of them explicitly.
//
// simd_rows.cc is built for every target Highway 1.0.3 can attain on the
// machine's architecture (HWY_COMPILE_ALL_ATTAINABLE plus AVX3_DL), so the
// fallback target (EMU128, or SCALAR where Highway marks EMU128 broken for
// the compiler, e.g. g++ < 12.3) is checked too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "numerics/row_ops.h"

namespace qcheck {

// Highway targets (HWY_* bits) compiled into simd_rows.cc that this CPU
// supports, best first. Follows hwy::SetSupportedTargetsForTest while a test
// mocks the supported set.
std::vector<int64_t> simd_row_targets();

// Their names (hwy::TargetName) separated by spaces, e.g. "AVX3_DL AVX3 AVX2 SSE4 SSSE3 SCALAR".
std::string simd_row_target_names();

// The target simd_row_ops() dispatches to right now, and the f32 lanes of
// one of its vectors (row tails shorter than this take the padded path).
int64_t simd_row_dispatched_target();
size_t simd_row_dispatched_lanes();

// Whether the dispatched target computes a RoPE row (of an even count) in
// vectors under an unfused (fused = false) or a fused contraction pattern.
// Where it does not, the row takes the scalar spec (std::fma): a fused
// pattern needs a hardware FMA (HWY_NATIVE_FMA; SSSE3, SSE4 and EMU128 have
// none), and the SCALAR target has no vectors at all. Tests that compare the
// SIMD rows with the spec count such rows apart: there the spec meets itself.
bool simd_row_dispatched_rope_in_vectors(bool fused);

// A table whose entries call one target's code directly (no dispatch); its
// name is the target's name. nullptr when that target is not compiled in or
// not supported by this CPU. Safe to call from any thread.
const RowOps* simd_row_ops_for_target(int64_t target);

}  // namespace qcheck
