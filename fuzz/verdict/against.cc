#include "fuzz/verdict/against.h"

#include <algorithm>

#include "fuzz/verdict/compare.h"
#include "fuzz/verdict/judge.h"

namespace qcheck {

int AgainstResult::exit_code() const {
  int code = std::max(first.outcome.is_ok() ? 0 : first.exit_code(), second.outcome.is_ok() ? 0 : second.exit_code());
  if (compared && !difference.passed()) code = std::max(code, 1);
  return code;
}

AgainstResult run_against(const Case& c, const Backend& first, const Backend& second, VerdictOptions options) {
  if (options.profile.empty()) options.profile = kAutoProfile;
  AgainstResult r;
  TensorSet run_first, run_second;
  r.first = run_verdict(c, first, options, &run_first);
  r.second = run_verdict(c, second, options, &run_second);
  r.compared = r.first.outcome.is_ok() && r.second.outcome.is_ok();
  if (r.compared) r.difference = compare_runs(c, run_first, run_second, run_second, options.max_listed);
  return r;
}

namespace {

std::string profiles_of(const Verdict& v) {
  if (v.explaining.empty()) return v.outcome.is_ok() ? "no profile explains it" : "not judged";
  std::string list;
  for (const std::string& name : v.explaining) list += (list.empty() ? "" : ", ") + name;
  return "follows " + list;
}

}  // namespace

std::string against_text(const AgainstResult& r, const Case& c) {
  std::string text = "AGAINST " + r.first.backend + " vs " + r.second.backend + ": ";
  if (!r.compared) {
    text += "not compared (a backend did not run)\n";
  } else if (r.difference.passed()) {
    text += "the outputs agree bit for bit\n";
  } else {
    text += std::to_string(r.difference.total) + " differences; primary signature " +
            r.difference.primary_signature().text() + "\n";
  }
  text += r.first.backend + ": " + profiles_of(r.first) + "; " + r.second.backend + ": " + profiles_of(r.second) +
          "\n";
  text += "== " + r.first.backend + "\n" + verdict_text(r.first, c);
  text += "== " + r.second.backend + "\n" + verdict_text(r.second, c);
  if (r.compared && !r.difference.passed()) {
    text += "== differences (expected: " + r.first.backend + ", got: " + r.second.backend + ")\n" +
            report_text(r.difference);
  }
  return text;
}

}  // namespace qcheck
