// Options of the fused_q fuzz target. libFuzzer ignores flags that start
// with two dashes, so the target reads them from argv in
// LLVMFuzzerInitialize; each has an environment twin for runners that cannot
// pass flags (ClusterFuzz, -fork workers inherit both). A flag wins over the
// environment.
//
//   --backend=NAME        QCHECK_BACKEND     default: cuda-blocked when its domain
//                                            says a GPU is here, else cpu-simd
//   --profile=NAME        QCHECK_PROFILE     default: the case's profile for the
//                                            oracle backends (cpu-scalar, cpu-simd);
//                                            qcheck for the others, which implement
//                                            that profile only
//   --oracle=scalar|simd  QCHECK_ORACLE      default: scalar for cpu-simd (the SIMD
//                                            rows are what it checks), simd otherwise
//   --max-case-bytes=N    QCHECK_MAX_CASE_BYTES  refuse larger cases (default 16 MiB;
//                                            8 GiB with --case-size=limit)
//   --case-size=default|usual|tiny|limit  QCHECK_CASE_SIZE  the mutator's size budget
//                                            (case_mutator.h kDefaultBudget,
//                                            kUsualBudget, kTinyBudget, kLimitBudget:
//                                            the default's and the limit cases)
//   --keep-going          QCHECK_KEEP_GOING=1    record a mismatch in the bins and go
//                                            on instead of aborting
//   --no-input-bins       QCHECK_INPUT_BINS=0    skip the bins computed from the inputs
//   --phase-times         QCHECK_PHASE_TIMES=1   print at exit where an execution's time
//                                            went (fuzz/verdict/phase_times.h)
//   --graph               QCHECK_GRAPH=1     also replay each launch from a CUDA graph
//                                            and compare it with the eager one
//   --race-runs=N         QCHECK_RACE_RUNS   runs after A and B of a case of 256 tokens or
//                                            more, compared bit for bit with run A (runs
//                                            that differ: a race); default 3 on a backend
//                                            that can race (a GPU's), else 0; 0 to 16
//   --known=FILE          QCHECK_KNOWN       known bugs (fuzz/verdict/known.h): a failure
//                                            they cover is printed once per entry and
//                                            is not a finding
// --backend=plugin:PATH fuzzes a plugin (include/qcheck/qcheck_plugin.h): the mutator
// keeps every case inside the plugin's declared domain.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/backends/backend.h"
#include "fuzz/case/case.h"
#include "fuzz/mutator/case_mutator.h"
#include "fuzz/verdict/known.h"
#include "fuzz/verdict/verdict.h"

namespace qcheck::fuzzing {

struct FusedQOptions {
  const Backend* backend = nullptr;
  VerdictOptions verdict;
  bool profile_given = false;  // --profile or QCHECK_PROFILE
  bool keep_going = false;
  bool input_bins = true;
  bool phase_times = false;
  const char* case_size = "default";  // a name of case_size_budget()
  uint64_t max_case_bytes = uint64_t(1) << 24;
  // --known=FILE (QCHECK_KNOWN): a failure these known bugs cover is not a
  // finding (fuzz/verdict/known.h); the first of each entry is printed.
  std::string known_file;
  std::vector<KnownBug> known;
};

// "" and *out filled, else one line naming the flag (or variable) and what
// it accepts.
std::string parse_fused_q_options(int argc, char** argv, FusedQOptions* out);

// True for the backends that follow the case's profile (the oracle
// itself); the others implement their Backend::fixed_profile only.
bool backend_follows_profile(const Backend& backend);

// One line: backend, oracle rows, profile rule, budget.
std::string describe(const FusedQOptions& options);

}  // namespace qcheck::fuzzing
