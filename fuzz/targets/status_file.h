// A fuzz target's progress for the campaign. With QCHECK_STATUS_FILE set, the
// number of inputs this process ran is written to that file about once a
// second ("executions N" and "seconds S" lines, a temporary file renamed over
// it, so a reader never sees half a file). The campaign runs one persistent
// libFuzzer process per core (no -fork), whose own status lines come only on
// new coverage; these files give its progress line and exec/s.
#pragma once

namespace qcheck::fuzzing {

// Call once per input, first thing in LLVMFuzzerTestOneInput.
void count_execution();
// Writes the file now: before an abort() that reports a finding (the
// destructor that writes it at a normal exit does not run then).
void write_status_now();

}  // namespace qcheck::fuzzing
