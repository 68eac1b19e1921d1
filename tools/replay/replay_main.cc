// qcheck-replay CASE|DIR... [--backend B] [--profile P] [--oracle scalar|simd]
//               [--max-listed N] [--json] [--repeat N] [--quiet] [--against B2] [--graph]
//               [--domain FILE] [--known FILE]
// qcheck-replay --list-backends
//
// B is a backend of --list-backends or plugin:PATH, a kernel built outside
// the project (include/qcheck/qcheck_plugin.h); a case outside a plugin's declared
// domain is invalid input (2), not a mismatch.
//
// Runs case files (binary, libFuzzer artifacts, or JSON; a directory means
// every file under it) on one backend (default cpu-simd) and prints each
// verdict. --repeat N also runs the backend N times on the same inputs and
// compares every byte of each run with the first run's (a race or other
// nondeterminism fails the file). --quiet prints only the files that do not
// pass, and the summary line. --against B2 runs a second backend on the
// same inputs and compares the two kernels' outputs with each other, each
// judged under auto unless --profile says otherwise (fuzz/verdict/against.h); the
// file fails when they differ. --graph also captures the launch in a CUDA
// graph, replays it and compares its bits with the eager launch's (the CUDA
// backends and CUDA plugins; a difference is graph-replay-differs). --domain
// FILE (fuzz/domain/domain_json.h) refuses a case outside the kernel's
// domain as invalid input with the reason. A failing verdict names its group
// (where the outputs differ) and, with --known FILE (fuzz/verdict/known.h),
// the known bug that covers it ("KNOWN: ...", and "group", "known" in the
// JSON). Exit codes, the worst over the files: 0 pass,
// 1 mismatch (or runs that differ), 2 invalid input (unreadable or corrupt
// file, invalid case, unknown backend or profile, bad arguments), 3 runtime
// or GPU error (including a backend that cannot run here, e.g. no GPU).
// Parsing and printing only: the logic lives in the harness library.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz/backends/backend.h"
#include "fuzz/case/case_file.h"
#include "fuzz/domain/domain_json.h"
#include "fuzz/verdict/against.h"
#include "fuzz/verdict/known.h"
#include "fuzz/verdict/repeat.h"
#include "fuzz/verdict/verdict.h"
#include "tools/common/cli.h"

namespace {

constexpr const char* kUsage =
    "usage: qcheck-replay CASE|DIR... [--backend B] [--profile P] [--oracle scalar|simd] "
    "[--max-listed N] [--json] [--repeat N] [--quiet] [--against B2] [--graph] [--domain FILE] [--known FILE]\n"
    "       qcheck-replay --list-backends\n";

int refuse(const std::string& message) {
  std::fprintf(stderr, "qcheck-replay: %s\n", message.c_str());
  return 2;
}

int list_backends() {
  for (const qcheck::Backend& b : qcheck::backends()) {
    const qcheck::Case probe;
    const std::string domain = b.domain(probe);
    std::printf("%-36s %-11s %s%s%s\n", b.name.c_str(), b.planted_bug ? "planted-bug" : "target",
                b.description.c_str(), domain.empty() ? "" : "  [cannot run here: ",
                domain.empty() ? "" : (domain + "]").c_str());
  }
  return 0;
}

// An integer option in [lo, hi], or -1 after printing why not.
long integer_value(const std::string& flag, const char* v, long lo, long hi) {
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*v == '\0' || *end != '\0' || n < lo || n > hi) {
    refuse(flag + " must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], not " + v);
    return -1;
  }
  return n;
}

struct Settings {
  const qcheck::Backend* backend = nullptr;
  const qcheck::Backend* against = nullptr;
  qcheck::VerdictOptions options;
  bool json = false;
  bool quiet = false;
  long repeat = 0;
  bool files_named_more_than_one = false;
  qcheck::Domain domain;
  std::string domain_file;  // empty: no --domain
  std::vector<qcheck::KnownBug> known;
};

// The verdict of one file (and its repeats); returns its exit code.
int replay_file(const std::string& path, const Settings& s) {
  qcheck::Case c;
  const std::string error = qcheck::load_case_file(path, &c);
  if (!error.empty()) return refuse(error);
  if (s.against != nullptr) {
    const qcheck::AgainstResult r = qcheck::run_against(c, *s.backend, *s.against, s.options);
    const int code = r.exit_code();
    if (s.quiet && code == 0) return 0;
    if (s.files_named_more_than_one) std::printf("== %s\n", path.c_str());
    std::fputs(qcheck::against_text(r, c).c_str(), stdout);
    return code;
  }
  qcheck::Verdict verdict;
  const std::string outside = s.domain_file.empty() ? "" : qcheck::outside_domain(s.domain, c);
  if (!outside.empty()) {
    verdict.backend = s.backend->name;
    verdict.outcome = qcheck::Outcome::invalid_input("outside the domain of " + s.domain_file + ": " + outside);
  } else {
    verdict = qcheck::run_verdict(c, *s.backend, s.options);
  }
  qcheck::classify_verdict(s.known, c, &verdict);
  int code = verdict.exit_code();
  std::string text = s.json ? qcheck::verdict_json(verdict, c) : qcheck::verdict_text(verdict, c);
  if (s.repeat > 0 && verdict.outcome.is_ok()) {
    qcheck::Profile profile;
    qcheck::find_profile(verdict.profile, &profile);
    const qcheck::RepeatResult r = qcheck::repeat_backend(c, *s.backend, profile, static_cast<int>(s.repeat));
    text += "repeat: " + std::to_string(r.runs) + " runs, " + std::to_string(r.differing_runs) +
            " differ from the first\n";
    if (!r.outcome.is_ok()) {
      text += std::string(qcheck::name_of(r.outcome.kind)) + " in run " + std::to_string(r.runs + 1) + ": " +
              r.outcome.reason + "\n";
      code = std::max(code, qcheck::exit_code_of(r.outcome.kind));
    } else if (r.differing_runs > 0) {
      text += "NONDETERMINISTIC: run " + std::to_string(r.first_differing) + " against run 0:\n" +
              qcheck::report_text(r.difference);
      code = std::max(code, 1);
    }
  }
  if (s.quiet && code == 0) return 0;
  if (s.files_named_more_than_one) std::printf("== %s\n", path.c_str());
  std::fputs(text.c_str(), code >= 2 && !s.json ? stderr : stdout);
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  if (const int done = qcheck::cli::help_or_version(argc, argv, "qcheck-replay", kUsage); done >= 0) return done;
  std::vector<std::string> paths;
  std::string backend_name = "cpu-simd", against_name;
  Settings s;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next_value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (arg == "--list-backends") {
      return list_backends();
    } else if (arg == "--json") {
      s.json = true;
    } else if (arg == "--quiet") {
      s.quiet = true;
    } else if (arg == "--graph") {
      s.options.graph = true;
    } else if (arg == "--backend" || arg == "--profile" || arg == "--oracle" || arg == "--max-listed" ||
               arg == "--repeat" || arg == "--against" || arg == "--domain" || arg == "--known") {
      const char* v = next_value();
      if (v == nullptr) return refuse(arg + " needs a value");
      if (arg == "--domain") {
        const std::string error = qcheck::load_domain_file(v, &s.domain);
        if (!error.empty()) return refuse(error);
        s.domain_file = v;
      }
      if (arg == "--known") {
        const std::string error = qcheck::load_known_file(v, &s.known);
        if (!error.empty()) return refuse(error);
      }
      if (arg == "--backend") backend_name = v;
      if (arg == "--against") against_name = v;
      if (arg == "--profile") s.options.profile = v;
      if (arg == "--oracle") {
        const std::string rows = v;
        if (rows != "scalar" && rows != "simd") return refuse("--oracle must be scalar or simd, not " + rows);
        s.options.oracle_rows = rows == "scalar" ? qcheck::OracleRows::kScalar : qcheck::OracleRows::kSimd;
      }
      if (arg == "--max-listed") {
        const long n = integer_value(arg, v, 0, 100000000);
        if (n < 0) return 2;
        s.options.max_listed = static_cast<size_t>(n);
      }
      if (arg == "--repeat") {
        s.repeat = integer_value(arg, v, 1, 1000000);
        if (s.repeat < 0) return 2;
      }
    } else if (!arg.empty() && arg[0] == '-') {
      return qcheck::cli::unknown_option("qcheck-replay", arg, kUsage);
    } else {
      paths.push_back(arg);
    }
  }
  if (paths.empty()) return refuse(std::string("no case file given\n") + kUsage);

  std::string why;
  s.backend = qcheck::find_backend(backend_name, &why);
  if (s.backend == nullptr) return refuse(why);
  if (!against_name.empty()) {
    s.against = qcheck::find_backend(against_name, &why);
    if (s.against == nullptr) return refuse("--against: " + why);
    if (s.json || s.repeat > 0) return refuse("--against does not combine with --json or --repeat");
  }
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    const std::string error = qcheck::list_case_files(path, &files);
    if (!error.empty()) return refuse(error);
  }
  if (files.empty()) return refuse("no case files under " + paths[0]);
  s.files_named_more_than_one = files.size() > 1;

  int worst = 0;
  int by_code[4] = {0, 0, 0, 0};
  for (const std::string& file : files) {
    const int code = replay_file(file, s);
    ++by_code[code];
    worst = std::max(worst, code);
  }
  if (files.size() > 1) {
    std::printf("qcheck-replay: %zu files on %s%s: %d passed, %d failed, %d invalid, %d runtime errors\n",
                files.size(), s.backend->name.c_str(),
                s.repeat > 0 ? (", each repeated " + std::to_string(s.repeat) + " times").c_str() : "",
                by_code[0], by_code[1], by_code[2], by_code[3]);
  }
  return worst;
}
