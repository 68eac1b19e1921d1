// Shared memory filled with a new pattern before every CUDA run of the
// device mirror (device_mirror_cuda.cc). Shared memory keeps its bytes from
// one block to the next and from one launch to the next, so a kernel that
// reads shared memory before it is written (a copy read before the barrier
// after it, a row never staged) reads what an earlier block left there:
// often the very values it should have read, in two runs of one case alike,
// and the race hides. With another pattern before each run, such a read
// gives other bits in each run: the verdict sees a mismatch, or runs that
// differ (VerdictOptions::race_runs). A correct kernel never reads those
// bytes; its outputs do not change.
//
// Only cases of kRaceSizedTokens tokens or more get it: the race cases and
// the verdict's race runs are of that size, and under MPS the scrub (every
// SM's whole shared memory, so no other client's block can sit beside it)
// stalls every worker's kernels for each run of the thousands of small cases
// a second. QCHECK_SHARED_SCRUB=0 leaves shared memory as it is (to measure
// what the scrub adds), =all scrubs before the run of every case.
#pragma once

#include <cstdint>
#include <string>

namespace qcheck {

// Cases with fewer tokens have too few blocks to race; from this size on the
// device mirror scrubs shared memory before each run and the verdict runs a
// case more than twice (VerdictOptions::race_runs).
constexpr int64_t kRaceSizedTokens = 256;

// Whether the run of a case of `tokens` tokens gets a scrub first
// (QCHECK_SHARED_SCRUB: unset, 0 or all).
bool scrub_before_run(int64_t tokens);

// Fills the shared memory of every SM of the current device with words
// derived from `pattern` on the default stream (no synchronization): "" or
// the failing CUDA call.
std::string scrub_shared_memory(uint32_t pattern);

}  // namespace qcheck
