// The verdict of one backend on one case: the whole data path of DESIGN.md in
// one call. The case is validated, its tensors built; the oracle (the case's
// profile unless overridden, SIMD rows unless scalar is chosen) fills the
// expected set; the backend runs twice, on sets poisoned with kA and kB; then
// every byte is compared (fuzz/verdict/compare.h).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "fuzz/backends/backend.h"
#include "fuzz/buffers/shared_scrub.h"
#include "fuzz/buffers/tensors.h"
#include "fuzz/case/case.h"
#include "fuzz/case/outcome.h"
#include "fuzz/verdict/phase_times.h"
#include "fuzz/verdict/report.h"
#include "numerics/profile.h"
#include "numerics/row_ops.h"

namespace qcheck {

enum class OracleRows { kSimd, kScalar };

struct VerdictOptions {
  std::string profile;  // empty: the case's profile; "auto": every named profile (fuzz/verdict/judge.h)
  OracleRows oracle_rows = OracleRows::kSimd;
  size_t max_listed = 20;  // mismatches listed in the report
  PhaseTimes* times = nullptr;  // when set, each phase's time is added to it
  // Also run the launch captured in a CUDA graph and replayed (on poison A)
  // and compare every byte with the eager run A: each difference is a
  // mismatch of class graph-replay-differs. Backends without a graph launch
  // (Backend::run_in_graph) refuse it as invalid input.
  bool graph = false;
  // Runs that differ: on a backend that can race (Backend::can_race), a case
  // of kRaceRunsFromTokens tokens or more runs this many times more on
  // poison A, each run on shared memory filled anew
  // (fuzz/buffers/shared_scrub.h), and every byte that differs from run A is a
  // nondeterministic mismatch of run 'R'. A race that shows in one run of
  // a few then counts in every execution, not only when A and B happen to
  // differ. 0: only runs A and B.
  int race_runs = 0;
};

// Smaller cases have too few blocks to race, and are most of a fuzz run:
// repeating them would cost exec/s for nothing (the size from which the
// device mirror scrubs shared memory too, shared_scrub.h).
constexpr int64_t kRaceRunsFromTokens = kRaceSizedTokens;
// The race runs the fuzz loops ask for on a backend that can race.
constexpr int kDefaultRaceRuns = 3;

struct Verdict {
  Outcome outcome;  // not ok: the case never got compared
  Report report;
  std::string backend;
  std::string profile;       // as asked: a profile name, NAME+any-fma, or auto
  std::string judged_under;  // the profile the report is under (auto: the one chosen)
  std::vector<std::string> explaining;   // auto: every profile that explains the outputs
  std::vector<std::string> explanation;  // fuzz/verdict/judge.h: acceptance choices, auto's findings
  bool planted_bug = false;  // the backend is expected to fail
  bool graph = false;        // a graph replay was compared with the eager run
  // A failing verdict's finding group and the known bug that covers it
  // (fuzz/verdict/known.h classify_verdict): where the outputs differ, and
  // the entry's index and note (-1: a new finding, or no list was given).
  std::string group;
  int known = -1;
  std::string known_signature, known_note;

  bool passed() const { return outcome.is_ok() && report.passed(); }
  // 0 pass, 1 mismatch, 2 invalid input, 3 runtime error.
  int exit_code() const;
};

// With `run_a`, the backend's outputs of its first run (on poison A) are
// copied there (kernel against kernel compares two such runs).
Verdict run_verdict(const Case& c, const Backend& backend, const VerdictOptions& options = {},
                    TensorSet* run_a = nullptr);

// Moves a judgement (fuzz/verdict/judge.h) into the verdict.
struct Judgement;
void take_judgement(Judgement&& judgement, Verdict* verdict);

// Adds the graph check to a judged verdict: every byte where `replayed`
// (the launch replayed from a CUDA graph, on poison A) differs from run A is
// a graph-replay-differs mismatch of run 'G'.
void add_graph_replay(const Case& c, const TensorSet& run_a, const TensorSet& replayed, Verdict* verdict);

// The profile a verdict judges under: the options' when given, else the
// backend's fixed profile, else the case's.
std::string verdict_profile(const Case& c, const Backend& backend, const VerdictOptions& options);

// The expected tensors: a set built from the case with `poison`, filled by
// the oracle. "" in *error on success, else the oracle's refusal.
TensorSet expected_tensors(const Case& c, const Profile& profile, const RowOps& rows, Poison poison,
                           std::string* error);
// The same from `blank`, build_tensor_set(c, poison) made before (the C API
// keeps the last case's).
TensorSet expected_tensors(const Case& c, const Profile& profile, const RowOps& rows, TensorSet blank,
                           std::string* error);

// One header line ("PASS ...", "FAIL ...", "INVALID INPUT: ...",
// "RUNTIME ERROR: ...") and, on a mismatch, the report.
std::string verdict_text(const Verdict& verdict, const Case& c);
// The same as one JSON object.
std::string verdict_json(const Verdict& verdict, const Case& c);

}  // namespace qcheck
