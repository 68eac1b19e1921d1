// Semantic feedback for libFuzzer: one byte per bin in the section
// "__libfuzzer_extra_counters", which libFuzzer clears before each input and
// reads after it as extra coverage features. An input that reaches a bin no
// earlier input reached (a new shape class, T % 16, alias mode, special value,
// UE8M0 exponent bucket, ...) is kept in the corpus even when it runs no new
// code, so the corpus spreads over the numeric situations, not only over
// branches.
//
// Every bin reached in this process is also remembered; bins_report() lists
// them by group (reached and missing), and with QCHECK_PRINT_BINS=1 the list
// is printed to stderr at exit (run the fuzzer with -runs=0 over a corpus to
// see which bins that corpus reaches).
#pragma once

#include <cstdint>
#include <string>

#include "fuzz/buffers/tensors.h"
#include "fuzz/case/case.h"
#include "fuzz/verdict/phase_times.h"
#include "fuzz/verdict/verdict.h"
#include "numerics/profile.h"

namespace qcheck::fuzzing {

// Bins from the case alone: shape classes, T % 16, heads, paths, indexer and
// style, dtypes, layouts, alias, recipes, profile, q_scale class.
void mark_case_bins(const Case& c);

// Bins from the generated inputs (a set built from the same case): special
// value classes per kind of input, and the UE8M0 scale exponent bucket of
// every indexer row (RoPE'd with the profile's contraction), including rows
// inside the log2f band of SEMANTICS.md (A).
void mark_input_bins(const Case& c, const TensorSet& inputs, const Profile& profile);

// `inner` wrapped so that, on the verdict's first run (poison A), the input
// bins are marked from the very tensors the backend gets: the inputs are
// generated once per case, not once more for the bins. With `times`, that
// work is timed as bins, not as the backend run it happens in.
Backend observing_input_bins(const Backend& inner, PhaseTimes* times = nullptr);

// The verdict class: pass, invalid input, runtime error, or the mismatch
// classes present in the report.
void mark_verdict_bins(const Verdict& verdict);

// "group: reached ... | missing ..." lines, and a total line.
std::string bins_report();

// Number of bins, and how many were reached so far.
int bin_count();
int bins_reached();

// The bins the last marks set since clear_last_bins() (libFuzzer clears them
// before each input itself), one byte per bin, and a bin's name
// ("tokens/T=17..31"). The C API's way to the same feedback; not thread-safe.
void clear_last_bins();
const uint8_t* last_bins();
std::string bin_name(int index);

// Registers the exit-time print when the environment has QCHECK_PRINT_BINS=1.
void print_bins_at_exit_if_asked();

}  // namespace qcheck::fuzzing
