// What the minimizer writes for a person: the report (what differs, where,
// in bits and values, the worst ULP distance, the profile rule involved,
// which fields matter) and a GoogleTest regression test ready to paste.
#pragma once

#include <string>

#include "fuzz/minimize/minimize.h"
#include "fuzz/verdict/verdict.h"

namespace qcheck {

// The edits in words, one per line: "q_pe: every element 0 (0x0000)",
// "q_pe[16, 2, 3] = 1 (0x3F80)". Empty without edits.
std::string describe_edits(const Case& c);

// The profile rule (or the structural mistake) a failure class points to,
// in one line: "UE8M0 scale ceiling (Profile::scale_ceiling: exact bits or
// log2f)", "a write outside the tensor (no profile rule: a missing guard or
// a wrong index)", ...
std::string rule_involved(const Signature& signature, ElementType type);

// The "what differs" part of a report: the verdict's mismatches with
// coordinates, expected and got in bits and values, the worst ULP distance
// among them and the rule involved; or the runtime error.
std::string what_differs(const Verdict& verdict);

// report.txt, around `differs` (what_differs of the minimized case's verdict).
std::string minimize_report(const MinimizeResult& r, const std::string& backend, const std::string& differs,
                            const std::string& replay_command);

// regression_test.cc: one TEST that decodes the minimized case (embedded as
// JSON) and expects `backend` to pass it under `profile` ("" for the
// backend's own): it fails until the bug is fixed, then guards the fix.
std::string regression_test_source(const MinimizeResult& r, const std::string& backend, const std::string& profile);

// test_regression.py: the same for pytest users: one test that runs the
// adapter `adapter` ("MODULE:FUNCTION", python/README.md) on the minimized
// case twice (on torch `device`, or numpy when empty) and expects it to pass.
std::string regression_pytest_source(const MinimizeResult& r, const std::string& adapter, const std::string& profile,
                                     const std::string& device);

}  // namespace qcheck
