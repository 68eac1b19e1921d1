// Known bugs and finding groups. A kernel with a latent bug that shows in
// most cases buries every other finding under it; a known-bugs list sets
// such a bug aside (counted under its entry, saved once, never stopping a
// run or filling a findings cap) so the next bug becomes visible. A finding
// is grouped by where the outputs differ (the set of tensor/part pairs that
// mismatch), not by the value class of its first element: one bug that
// zeroes a weight is one group whatever the first wrong element should have
// been, and two bugs in different outputs of one case are not one group.
#pragma once

#include <string>
#include <vector>

#include "fuzz/case/case.h"
#include "fuzz/domain/domain.h"
#include "fuzz/verdict/verdict.h"

namespace qcheck {

// One known bug: a signature pattern ("tensor/part/class", '*' matching
// any run of characters: "index_weights_out/*", "*/unwritten",
// "kernel raised ZeroDivisionError"), optionally only on the cases of a
// domain, and a note for the reports.
struct KnownBug {
  std::string signature;
  bool has_domain = false;
  Domain domain;
  std::string note;
};

// The JSON form, a file's whole text: {"known": [{"signature": "...",
// "domain": {... domain_json.h ...}, "note": "..."}, ...]}. "" and *out set,
// or one line naming the entry and the key.
std::string known_bugs_from_json(const std::string& text, std::vector<KnownBug>* out);
std::string load_known_file(const std::string& path, std::vector<KnownBug>* out);

// True when `text` matches `pattern` ('*' any run of characters, the rest literal).
bool matches_pattern(const std::string& pattern, const std::string& text);

// How one finding is counted.
struct FindingClass {
  int known = -1;     // the entry that covers every signature of the finding, else -1 (a new finding)
  std::string group;  // where it differs: the sorted tensor/part pairs of its signatures that no
                      // entry covers (of all of them when known), joined by " + "; a signature that
                      // is not tensor/part/class (a runtime error, a raised exception) stands as it is
};

// `signatures`: every signature of the finding's verdict ("tensor/part/class",
// or the one line of a runtime error).
FindingClass classify_finding(const std::vector<KnownBug>& known, const Case& c,
                              const std::vector<std::string>& signatures);

// Every signature of a failing verdict: each tensor/part/class its report
// counts, or the one line of an outcome that never got compared
// ("runtime error: ...", "invalid input: ..."); none on a pass.
std::vector<std::string> verdict_signatures(const Verdict& v);

// Sets the verdict's group and known bug (nothing on a pass).
void classify_verdict(const std::vector<KnownBug>& known, const Case& c, Verdict* v);

}  // namespace qcheck
