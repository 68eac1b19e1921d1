// A fuzz target's progress for the campaign. With QCHECK_STATUS_FILE set, the
// number of inputs this process ran is written to that file about once a
// second ("executions N" and "seconds S" lines, a temporary file renamed over
// it, so a reader never sees half a file). The campaign runs one persistent
// libFuzzer process per core (no -fork), whose own status lines come only on
// new coverage; these files give its progress line and exec/s. Also
// "memory_retried N" (runs that ran out of device memory and passed alone,
// fuzz/buffers/device_mirror.h), "memory_notes N" (cases that need more memory
// than the device has: noted, not findings) and, while a run waits in the GPU
// ledger, "waiting TEXT" (what it waits for).
#pragma once

#include <string>

namespace qcheck::fuzzing {

// Call once per input, first thing in LLVMFuzzerTestOneInput.
void count_execution();
// Writes the file now: before an abort() that reports a finding (the
// destructor that writes it at a normal exit does not run then).
void write_status_now();
// A case that needs more memory than the device has (counted in the file).
void count_memory_note();
// What a run waits for in the GPU ledger ("" once it runs): written at once,
// and said on stderr when a wait begins.
void set_waiting(const std::string& what);

}  // namespace qcheck::fuzzing
