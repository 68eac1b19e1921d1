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
// QCHECK_SHARED_SCRUB=0 leaves shared memory as it is (to measure what the
// scrub adds).
#pragma once

#include <cstdint>
#include <string>

namespace qcheck {

// Fills the shared memory of every SM of the current device with words
// derived from `pattern` on the default stream (no synchronization): "" or
// the failing CUDA call. Does nothing under QCHECK_SHARED_SCRUB=0.
std::string scrub_shared_memory(uint32_t pattern);

}  // namespace qcheck
