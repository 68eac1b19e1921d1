#include "fuzz/verdict/known.h"

#include <nlohmann/json.hpp>
#include <set>

#include "fuzz/case/case_file.h"
#include "fuzz/domain/domain_json.h"

namespace qcheck {
namespace {

// "tensor/part" of "tensor/part/class"; the whole text when it has no two slashes.
std::string where_of(const std::string& signature) {
  const size_t last = signature.rfind('/');
  if (last == std::string::npos || signature.find('/') == last) return signature;
  return signature.substr(0, last);
}

// The entry whose pattern (and domain) covers `signature`, else -1.
int covering_entry(const std::vector<KnownBug>& known, const Case& c, const std::string& signature) {
  for (size_t i = 0; i < known.size(); ++i) {
    if (!matches_pattern(known[i].signature, signature)) continue;
    if (known[i].has_domain && !outside_domain(known[i].domain, c).empty()) continue;
    return static_cast<int>(i);
  }
  return -1;
}

std::string joined(const std::set<std::string>& parts) {
  std::string text;
  for (const std::string& p : parts) text += (text.empty() ? "" : " + ") + p;
  return text;
}

}  // namespace

bool matches_pattern(const std::string& pattern, const std::string& text) {
  // Greedy glob with one backtrack point (the last '*').
  size_t p = 0, t = 0, star = std::string::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != std::string::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::string known_bugs_from_json(const std::string& text, std::vector<KnownBug>* out) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return std::string("known bugs: not JSON: ") + e.what();
  }
  if (!j.is_object() || !j.contains("known") || !j["known"].is_array()) {
    return "known bugs: expected {\"known\": [{\"signature\": \"tensor/part/class\", \"domain\": {...}, \"note\": "
           "\"...\", \"op\": \"fused_q\"}, ...]}";
  }
  std::vector<KnownBug> bugs;
  for (size_t i = 0; i < j["known"].size(); ++i) {
    const nlohmann::json& e = j["known"][i];
    const std::string at = "known bugs: known[" + std::to_string(i) + "]";
    if (!e.is_object()) return at + ": expected an object";
    KnownBug bug;
    for (const auto& [key, value] : e.items()) {
      if (key == "signature" || key == "note") {
        if (!value.is_string()) return at + "." + key + ": expected a string";
        (key == "signature" ? bug.signature : bug.note) = value.get<std::string>();
      } else if (key == "op") {  // the op the entry is about (absent: the run's)
        if (!value.is_string() || value.get<std::string>() != kCaseOp) return not_this_op(at + ".op", value.dump());
      } else if (key == "domain") {
        const std::string why = domain_from_json(value.dump(), &bug.domain);
        if (!why.empty()) return at + ".domain: " + why;
        bug.has_domain = true;
      } else {
        return at + "." + key + ": unknown key (signature, domain, note, op)";
      }
    }
    if (bug.signature.empty()) return at + ".signature: missing or empty (a pattern such as \"index_weights_out/*\")";
    bugs.push_back(bug);
  }
  *out = std::move(bugs);
  return "";
}

std::string load_known_file(const std::string& path, std::vector<KnownBug>* out) {
  std::string text;
  std::string why = read_file_whole(path, &text);
  if (why.empty()) why = known_bugs_from_json(text, out);
  return why.empty() ? "" : "known bugs file " + path + ": " + why;
}

FindingClass classify_finding(const std::vector<KnownBug>& known, const Case& c,
                              const std::vector<std::string>& signatures) {
  FindingClass result;
  std::set<std::string> all, uncovered;
  int first_entry = -1;
  for (const std::string& s : signatures) {
    if (s.empty()) continue;
    all.insert(where_of(s));
    const int entry = covering_entry(known, c, s);
    if (entry < 0) {
      uncovered.insert(where_of(s));
    } else if (first_entry < 0) {
      first_entry = entry;
    }
  }
  if (!all.empty() && uncovered.empty()) result.known = first_entry;
  result.group = joined(uncovered.empty() ? all : uncovered);
  return result;
}

std::vector<std::string> verdict_signatures(const Verdict& v) {
  if (v.passed()) return {};
  if (!v.outcome.is_ok()) return {std::string(name_of(v.outcome.kind)) + ": " + v.outcome.reason};
  std::vector<std::string> out;
  for (const auto& [signature, count] : v.report.counts) out.push_back(signature.text());
  return out;
}

void classify_verdict(const std::vector<KnownBug>& known, const Case& c, Verdict* v) {
  v->group.clear();
  v->known = -1;
  v->known_signature.clear();
  v->known_note.clear();
  if (v->passed()) return;
  const FindingClass f = classify_finding(known, c, verdict_signatures(*v));
  v->group = f.group;
  v->known = f.known;
  if (f.known >= 0) {
    v->known_signature = known[f.known].signature;
    v->known_note = known[f.known].note;
  }
}

}  // namespace qcheck
