#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tools/mutants/mutants.h"

namespace qcheck::mutants {

int MutantResult::found() const {
  int n = 0;
  for (const SeedRun& r : runs) n += r.fuzz.found;
  return n;
}

bool MutantResult::proven_equivalent() const {
  return equivalence_run && equivalence.cases > 0 && equivalence.differ == 0 && witness.differ > 0;
}

bool MutantResult::as_expected() const {
  return kind == Kind::kBug ? found() == static_cast<int>(runs.size()) || proven_equivalent() : found() == 0;
}

double MutantResult::median_seconds() const {
  std::vector<double> t;
  for (const SeedRun& r : runs) {
    if (r.fuzz.found) t.push_back(r.fuzz.seconds);
  }
  if (t.empty()) return -1;
  std::sort(t.begin(), t.end());
  return t.size() % 2 == 1 ? t[t.size() / 2] : (t[t.size() / 2 - 1] + t[t.size() / 2]) / 2;
}

FindTimes find_times(const std::vector<MutantResult>& results) {
  FindTimes t;
  std::vector<double> medians;
  for (const MutantResult& m : results) {
    if (m.kind != Kind::kBug || m.found() == 0) continue;
    medians.push_back(m.median_seconds());
    for (const SeedRun& r : m.runs) {
      if (r.fuzz.found) t.slowest = std::max(t.slowest, r.fuzz.seconds);
    }
  }
  if (medians.empty()) return t;
  std::sort(medians.begin(), medians.end());
  const size_t n = medians.size();
  t.median = n % 2 == 1 ? medians[n / 2] : (medians[n / 2 - 1] + medians[n / 2]) / 2;
  return t;
}

namespace {

const char* kind_name(Kind k) { return k == Kind::kBug ? "bug" : k == Kind::kTwin ? "harmless twin" : "correct"; }

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string dims(const Case& c) {
  return "T=" + std::to_string(c.num_tokens) + " H=" + std::to_string(c.mqa_heads) + " NI=" +
         std::to_string(c.indexer_heads) + " D=" + std::to_string(c.index_dim) + " R=" + std::to_string(c.rope_dim) +
         " L=" + std::to_string(c.nope_dim);
}

// The first seed's finding, else the first one that found it.
const SeedRun* first_found(const MutantResult& m) {
  for (const SeedRun& r : m.runs) {
    if (r.fuzz.found) return &r;
  }
  return nullptr;
}

std::string executions_list(const MutantResult& m) {
  std::string s;
  for (const SeedRun& r : m.runs) {
    s += (s.empty() ? "" : "/") + (r.fuzz.found ? std::to_string(r.fuzz.executions) : "-");
  }
  return s;
}

std::string equivalence_text(const MutantResult& m) {
  const std::string witness = "; witness " + m.witness_name + " caught in " + std::to_string(m.witness.differ) +
                              " of " + std::to_string(m.witness.cases);
  if (m.proven_equivalent()) {
    return "equivalent: " + std::to_string(m.equivalence.cases) + " covering cases agree with the oracle" + witness;
  }
  return "NOT equivalent: " + std::to_string(m.equivalence.differ) + " of " + std::to_string(m.equivalence.cases) +
         " covering cases differ (" + m.equivalence.first + ")" + witness;
}

std::string baseline_text(const MutantResult& m) {
  if (!m.baseline_run) return "not run";
  return m.baseline.caught ? "caught (" + std::to_string(m.baseline.cases_failed) + "/" +
                                 std::to_string(m.baseline.cases_run) + " cases)"
                           : "missed";
}

}  // namespace

std::string markdown(const std::vector<MutantResult>& results) {
  std::ostringstream s;
  s << "| backend | kind | found (seeds) | median s to find | executions to find (per seed) | first signature | "
       "minimized | fixed-grid baseline |\n|---|---|---|---|---|---|---|---|\n";
  int bugs = 0, killed = 0, equivalent = 0, baseline_run = 0, baseline_caught = 0;
  for (const MutantResult& m : results) {
    const SeedRun* r = first_found(m);
    const double median = m.median_seconds();
    s << "| " << m.backend << " | " << kind_name(m.kind) << " | " << m.found() << "/" << m.runs.size() << " | "
      << (median < 0 ? "-" : fixed(median, 3)) << " | " << executions_list(m) << " | "
      << (r != nullptr ? r->fuzz.failure : m.equivalence_run ? equivalence_text(m) : "-") << " | "
      << (r != nullptr && r->minimized ? dims(r->smallest) + ", " + std::to_string(r->smallest_bytes) + " B" : "-")
      << " | " << baseline_text(m) << " |\n";
    if (m.kind == Kind::kBug) {
      ++bugs;
      killed += m.found() == static_cast<int>(m.runs.size());
      equivalent += m.found() < static_cast<int>(m.runs.size()) && m.proven_equivalent();
      if (m.baseline_run) {
        ++baseline_run;
        baseline_caught += m.baseline.caught;
      }
    }
  }
  s << "\nfuzzer: " << killed << " of " << bugs << " planted bugs found in every seed";
  if (equivalent > 0) s << ", " << equivalent << " more proven equivalent";
  if (baseline_run > 0) s << "; fixed-grid baseline: " << baseline_caught << " of " << baseline_run << " caught";
  s << "\n";
  return s.str();
}

std::string csv(const std::vector<MutantResult>& results) {
  std::ostringstream s;
  s << "backend,kind,seed,found,executions,seconds,signature,minimized_dims,minimized_bytes,baseline,equivalent\n";
  for (const MutantResult& m : results) {
    for (const SeedRun& r : m.runs) {
      std::string signature = r.fuzz.failure;
      std::replace(signature.begin(), signature.end(), ',', ';');
      s << m.backend << "," << kind_name(m.kind) << "," << r.seed << "," << (r.fuzz.found ? 1 : 0) << ","
        << r.fuzz.executions << "," << fixed(r.fuzz.seconds, 4) << "," << signature << ","
        << (r.minimized ? dims(r.smallest) : "") << "," << (r.minimized ? std::to_string(r.smallest_bytes) : "")
        << "," << (m.baseline_run ? (m.baseline.caught ? "caught" : "missed") : "") << ","
        << (m.equivalence_run ? (m.proven_equivalent() ? "proven" : "refuted") : "") << "\n";
    }
  }
  return s.str();
}

namespace {

// Text XML 1.0 holds, with the five special characters escaped (control
// characters other than tab and newline dropped).
std::string xml_text(const std::string& text) {
  std::string out;
  for (const char ch : text) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(ch) >= 0x20 || ch == '\t' || ch == '\n') out += ch;
    }
  }
  return out;
}

}  // namespace

std::string junit_xml(const std::vector<MutantResult>& results) {
  std::ostringstream cases;
  int failures = 0, skipped = 0;
  double total = 0;
  for (const MutantResult& m : results) {
    const int found = m.found(), seeds = static_cast<int>(m.runs.size());
    double seconds = 0;
    std::string seeds_text;
    for (const SeedRun& r : m.runs) {
      seconds += r.fuzz.seconds;
      seeds_text += "seed " + std::to_string(r.seed) + ": " +
                    (r.fuzz.found ? "found after " + std::to_string(r.fuzz.executions) + " executions, " +
                                        r.fuzz.failure
                                  : "no finding in " + std::to_string(r.fuzz.executions) + " executions") +
                    "\n";
    }
    total += seconds;
    cases << "    <testcase classname=\"qcheck-mutants." << kind_name(m.kind) << "\" name=\"" << xml_text(m.backend)
          << "\" time=\"" << fixed(seconds, 3) << "\">\n";
    const std::string what = xml_text(m.description) + "\n" + xml_text(seeds_text) + "fixed-grid baseline: " +
                             xml_text(baseline_text(m));
    if (m.kind == Kind::kBug && found < seeds && m.proven_equivalent()) {
      ++skipped;
      cases << "      <skipped message=\"proven equivalent: " << xml_text(equivalence_text(m)) << "\"/>\n";
    } else if (m.kind == Kind::kBug && found < seeds) {
      ++failures;
      cases << "      <failure message=\"survived: found in " << found << " of " << seeds
            << " seeds\" type=\"survived\">" << what << "</failure>\n";
    } else if (m.kind != Kind::kBug && found > 0) {
      ++failures;
      cases << "      <failure message=\"false alarm in " << found << " of " << seeds << " seeds\" type=\"false-alarm\">"
            << what << "</failure>\n";
    } else {
      cases << "      <system-out>" << what << "</system-out>\n";
    }
    cases << "    </testcase>\n";
  }
  const std::string counts = "tests=\"" + std::to_string(results.size()) + "\" failures=\"" +
                             std::to_string(failures) + "\" errors=\"0\" skipped=\"" + std::to_string(skipped) +
                             "\" time=\"" + fixed(total, 3) + "\"";
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"qcheck-mutants\" " + counts +
         ">\n  <testsuite name=\"qcheck-mutants\" " + counts + ">\n" + cases.str() + "  </testsuite>\n</testsuites>\n";
}

std::string stryker_json(const std::vector<MutantResult>& results) {
  nlohmann::ordered_json files = nlohmann::ordered_json::object();
  int killed = 0, survived = 0;
  for (const MutantResult& m : results) {
    nlohmann::ordered_json mutant;
    mutant["id"] = m.backend;
    mutant["mutatorName"] = m.backend;
    mutant["description"] = m.description;
    mutant["location"] = {{"start", {{"line", 1}, {"column", 1}}}, {"end", {{"line", 1}, {"column", 2}}}};
    const int found = m.found(), seeds = static_cast<int>(m.runs.size());
    std::string status, reason;
    if (m.kind == Kind::kBug && found < seeds && m.proven_equivalent()) {
      status = "Ignored";
      reason = equivalence_text(m);
    } else if (m.kind == Kind::kBug) {
      status = found == seeds ? "Killed" : "Survived";
      reason = "found by the fuzzer in " + std::to_string(found) + " of " + std::to_string(seeds) +
               " seeds; fixed-grid baseline " + baseline_text(m);
      (found == seeds ? killed : survived) += 1;
    } else {
      status = "Ignored";
      reason = std::string(m.kind == Kind::kTwin ? "harmless twin" : "correct kernel") + ": " +
               (found == 0 ? "no finding in " + std::to_string(seeds) + " seeds, as it must"
                           : "FALSE ALARM in " + std::to_string(found) + " of " + std::to_string(seeds) + " seeds");
    }
    mutant["status"] = status;
    mutant["statusReason"] = reason;
    nlohmann::ordered_json killed_by = nlohmann::ordered_json::array();
    int64_t executions = 0;
    double seconds = 0;
    for (const SeedRun& r : m.runs) {
      executions += r.fuzz.executions;
      seconds += r.fuzz.seconds;
      if (r.fuzz.found) killed_by.push_back("fuzz seed " + std::to_string(r.seed) + ": " + r.fuzz.failure);
    }
    if (!killed_by.empty()) mutant["killedBy"] = killed_by;
    mutant["testsCompleted"] = executions;
    mutant["duration"] = static_cast<int64_t>(seconds * 1000);
    nlohmann::ordered_json& file = files[m.source_file];
    if (file.is_null()) file = {{"language", "cpp"}, {"source", ""}, {"mutants", nlohmann::ordered_json::array()}};
    file["mutants"].push_back(mutant);
  }
  nlohmann::ordered_json j;
  j["$schema"] = "https://git.io/mutation-testing-schema";
  j["schemaVersion"] = "2";
  j["thresholds"] = {{"high", 100}, {"low", 90}};
  j["files"] = files;
  j["framework"] = {{"name", "qcheck-mutants"}};
  // (config is the schema's free-format object)
  j["config"] = {{"mutationScore", killed + survived == 0 ? 0.0 : 100.0 * killed / (killed + survived)},
                 {"killed", killed},
                 {"survived", survived}};
  return j.dump(2) + "\n";
}

}  // namespace qcheck::mutants
