// qcheck-minimize CASE --backend B [--profile P] [--oracle scalar|simd] [--budget SECONDS]
//                 [--out DIR] [--save-regression] [--corpus DIR] [--isolate] [--timeout SECONDS]
//                 [--no-explain]
//
// Shrinks a failing case (a libFuzzer artifact, a corpus file or a JSON case)
// to the smallest one that fails the same way on backend B (fuzz/minimize/minimize.h),
// and writes into DIR (default minimized-DIGEST): minimized.json and
// minimized.case (binary), report.txt, regression_test.cc and replay.txt (the
// one-line replay command); --save-regression also adds the case to
// corpus/regressions, which ctest replays on every backend from then on.
//
// First the determinism gate: the case runs twice; when the runs differ (a
// race) it reports both and shrinks nothing. A backend whose failure ends
// the process or its CUDA context (a planted fault, or --isolate) has every
// candidate run in a fresh process of this tool.
//
// Exit codes: 0 minimized, 1 nondeterministic (nothing shrunk), 2 invalid
// input (bad arguments, an unreadable or invalid case, a case that passes),
// 3 the backend cannot run here. Parsing and printing only: the logic lives
// in the harness library.
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "fuzz/backends/backend.h"
#include "fuzz/case/case_binary.h"
#include "fuzz/case/case_file.h"
#include "fuzz/minimize/minimize.h"
#include "fuzz/minimize/minimize_report.h"
#include "fuzz/verdict/repeat.h"
#include "fuzz/verdict/verdict.h"
#include "tools/common/cli.h"

extern char** environ;

namespace {

constexpr const char* kUsage =
    "usage: qcheck-minimize CASE --backend B [--profile P] [--oracle scalar|simd] [--budget SECONDS]\n"
    "                       [--out DIR] [--save-regression] [--corpus DIR] [--isolate] [--timeout SECONDS]\n"
    "                       [--no-explain]\n";

int refuse(const std::string& message) {
  std::fprintf(stderr, "qcheck-minimize: %s\n", message.c_str());
  return 2;
}

struct Settings {
  std::string case_path, backend_name, out_dir, corpus_dir, observe_path;
  qcheck::VerdictOptions verdict;
  double budget = 60;
  double timeout = 60;  // a run in a fresh process that takes longer is a hang
  bool save_regression = false, isolate = false, explain = true;
};

// The arguments a child needs to judge one case as the parent would.
std::vector<std::string> verdict_arguments(const Settings& s) {
  std::vector<std::string> args = {"--backend", s.backend_name};
  if (!s.verdict.profile.empty()) args.insert(args.end(), {"--profile", s.verdict.profile});
  args.insert(args.end(), {"--oracle", s.verdict.oracle_rows == qcheck::OracleRows::kScalar ? "scalar" : "simd"});
  return args;
}

qcheck::Observation failed_run(const std::string& why) {
  qcheck::Observation o;
  o.exit_code = 3;
  o.failure = why;
  return o;
}

// Runs the verdict in a fresh process of this tool (--observe): a fault
// there ends that process, not the minimizer. The child prints the
// observation on its first line, its signatures (tab-separated) on the
// second and what_differs after them. A child that dies is a crash; one
// that runs past --timeout seconds is a hang.
qcheck::Observation observe_in_child(const Settings& s, const qcheck::Case& c, std::string* differs = nullptr) {
  char path[] = "/tmp/qcheck-minimize-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return failed_run("runtime error: cannot create a temporary case file");
  close(fd);
  qcheck::save_case_file(path, c, qcheck::CaseForm::kBinary);
  const std::string output = std::string(path) + ".out";
  std::vector<std::string> args = {"/proc/self/exe", "--observe", path};
  for (const std::string& a : verdict_arguments(s)) args.push_back(a);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  qcheck::Observation o = failed_run("runtime error: cannot start a child process");
  if (spawned == 0) {
    int status = 0;
    const auto start = std::chrono::steady_clock::now();
    bool hung = false;
    while (waitpid(pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() - start > std::chrono::duration<double>(s.timeout)) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        hung = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    std::ifstream in(output);
    std::string first, signatures;
    std::getline(in, first);
    std::getline(in, signatures);
    if (hung) {
      o = failed_run("timeout: the run did not end within " + std::to_string(static_cast<int>(s.timeout)) + " s");
    } else if (WIFSIGNALED(status)) {
      o = failed_run("crash: signal " + std::to_string(WTERMSIG(status)));
    } else if (first.rfind("observation ", 0) == 0) {
      const size_t space = first.find(' ', 12);
      o.exit_code = std::atoi(first.c_str() + 12);
      o.failure = space == std::string::npos ? "" : first.substr(space + 1);
      for (size_t at = 0; at < signatures.size();) {
        const size_t tab = std::min(signatures.find('\t', at), signatures.size());
        if (tab > at) o.signatures.push_back(signatures.substr(at, tab - at));
        at = tab + 1;
      }
      if (differs != nullptr) {
        *differs = std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      }
    } else {
      o = failed_run("crash: exit " + std::to_string(WEXITSTATUS(status)) + " without an observation");
    }
  }
  std::remove(path);
  std::remove(output.c_str());
  return o;
}

// --observe CASE: the child's side.
int observe_main(const Settings& s, const qcheck::Backend& backend) {
  qcheck::Case c;
  if (!qcheck::load_case_file(s.observe_path, &c).empty()) return 2;
  qcheck::VerdictOptions options = s.verdict;
  options.max_listed = 50;
  const qcheck::Verdict v = qcheck::run_verdict(c, backend, options);
  const qcheck::Observation o = qcheck::observe(v);
  std::string signatures;
  for (const std::string& signature : o.signatures) signatures += (signatures.empty() ? "" : "\t") + signature;
  std::printf("observation %d %s\n%s\n%s", o.exit_code, o.failure.c_str(), signatures.c_str(),
              qcheck::what_differs(v).c_str());
  std::fflush(stdout);
  return 0;
}

std::string corpus_dir(const Settings& s) {
  if (!s.corpus_dir.empty()) return s.corpus_dir;
  const char* env = std::getenv("QCHECK_CORPUS_DIR");
  return env != nullptr && *env != '\0' ? env : QCHECK_SOURCE_CORPUS_DIR;
}

int parse(int argc, char** argv, Settings* s) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const bool takes_value = arg == "--backend" || arg == "--profile" || arg == "--oracle" || arg == "--budget" ||
                             arg == "--out" || arg == "--corpus" || arg == "--observe" || arg == "--timeout";
    const char* v = takes_value ? value() : nullptr;
    if (takes_value && v == nullptr) return refuse(arg + " needs a value");
    if (arg == "--backend") {
      s->backend_name = v;
    } else if (arg == "--profile") {
      s->verdict.profile = v;
    } else if (arg == "--oracle") {
      if (std::string(v) != "scalar" && std::string(v) != "simd") return refuse("--oracle must be scalar or simd");
      s->verdict.oracle_rows = std::string(v) == "scalar" ? qcheck::OracleRows::kScalar : qcheck::OracleRows::kSimd;
    } else if (arg == "--budget") {
      char* end = nullptr;
      s->budget = std::strtod(v, &end);
      if (*v == '\0' || *end != '\0' || !(s->budget > 0 && s->budget <= 86400)) {
        return refuse(std::string("--budget must be seconds in (0, 86400], not ") + v);
      }
    } else if (arg == "--timeout") {
      char* end = nullptr;
      s->timeout = std::strtod(v, &end);
      if (*v == '\0' || *end != '\0' || !(s->timeout > 0 && s->timeout <= 86400)) {
        return refuse(std::string("--timeout must be seconds in (0, 86400], not ") + v);
      }
    } else if (arg == "--out") {
      s->out_dir = v;
    } else if (arg == "--corpus") {
      s->corpus_dir = v;
    } else if (arg == "--observe") {
      s->observe_path = v;
    } else if (arg == "--save-regression") {
      s->save_regression = true;
    } else if (arg == "--isolate") {
      s->isolate = true;
    } else if (arg == "--no-explain") {
      s->explain = false;
    } else if (!arg.empty() && arg[0] == '-') {
      return qcheck::cli::unknown_option("qcheck-minimize", arg, kUsage);
    } else if (s->case_path.empty()) {
      s->case_path = arg;
    } else {
      return refuse("more than one case file given (" + s->case_path + ", " + arg + ")");
    }
  }
  if (s->backend_name.empty()) return refuse(std::string("--backend is required\n") + kUsage);
  if (s->case_path.empty() && s->observe_path.empty()) return refuse(std::string("no case file given\n") + kUsage);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (const int done = qcheck::cli::help_or_version(argc, argv, "qcheck-minimize", kUsage); done >= 0) return done;
  Settings s;
  if (const int bad = parse(argc, argv, &s)) return bad;
  std::string why;
  const qcheck::Backend* backend = qcheck::find_backend(s.backend_name, &why);
  if (backend == nullptr) return refuse(why);
  if (!s.observe_path.empty()) return observe_main(s, *backend);
  qcheck::Case original;
  const std::string error = qcheck::load_case_file(s.case_path, &original);
  if (!error.empty()) return refuse(error);

  // The original runs in a child first: if it ends there (a fault), every
  // candidate must, and this process never touched the device.
  bool isolate = s.isolate || backend->ends_process;
  const qcheck::Observation first = observe_in_child(s, original);
  if (first.exit_code == 0) return refuse("the case passes on " + backend->name + ": nothing to minimize");
  if (first.exit_code == 2) return refuse("the case is invalid: " + first.failure);
  if (first.failure.rfind("runtime error: backend ", 0) == 0) {
    std::fprintf(stderr, "qcheck-minimize: %s\n", first.failure.c_str());
    return 3;
  }
  if (first.exit_code == 3) isolate = true;
  qcheck::Evaluate evaluate = isolate ? qcheck::Evaluate([&s](const qcheck::Case& c) { return observe_in_child(s, c); })
                                      : qcheck::evaluate_in_process(*backend, s.verdict);

  // The determinism gate: two runs, compared byte for byte in process
  // (observations across processes otherwise).
  const std::string out = s.out_dir.empty() ? "minimized-" + qcheck::case_digest(original) : s.out_dir;
  mkdir(out.c_str(), 0755);
  std::string nondeterminism;
  if (!isolate) {
    qcheck::Profile profile;
    qcheck::find_profile(qcheck::verdict_profile(original, *backend, s.verdict), &profile);
    const qcheck::RepeatResult repeat = qcheck::repeat_backend(original, *backend, profile, 2);
    if (repeat.outcome.is_ok() && repeat.differing_runs > 0) {
      // The bytes differ; the failure may not (failure_holds_across_runs).
      if (qcheck::failure_holds_across_runs(first, {evaluate(original), evaluate(original)})) {
        std::fprintf(stderr, "qcheck-minimize: the runs of the same inputs write different bytes but fail the same "
                             "way each time (%s): minimized on that failure\n", first.text().c_str());
      } else {
        nondeterminism = "the two runs of the same inputs wrote different bytes (run 0 as expected, run 1 as got):\n" +
                         qcheck::report_text(repeat.difference);
      }
    }
  } else {
    const qcheck::Observation second = observe_in_child(s, original);
    if (second != first) nondeterminism = "run 0: " + first.text() + "\nrun 1: " + second.text() + "\n";
  }
  if (!nondeterminism.empty()) {
    const std::string report = "qcheck-minimize: NONDETERMINISTIC on " + backend->name +
                               ": not minimized (a race or uninitialized read is not a fixed bug)\ncase: " +
                               qcheck::describe(original) + "\n" + nondeterminism;
    qcheck::write_file_whole(out + "/report.txt", report);
    std::fputs(report.c_str(), stdout);
    return 1;
  }

  qcheck::MinimizeOptions options;
  options.budget_seconds = s.budget;
  options.explain = s.explain;
  options.log = [](const std::string& line) { std::fprintf(stderr, "  %s\n", line.c_str()); };
  options.outside = backend->outside;  // a plugin's declared domain: no candidate outside it
  options.fit = backend->fit;
  std::fprintf(stderr, "qcheck-minimize: %s on %s%s\n", first.text().c_str(), backend->name.c_str(),
               isolate ? " (every candidate in a fresh process)" : "");
  const qcheck::MinimizeResult r = qcheck::minimize(original, first, evaluate, options);

  std::string differs;
  const qcheck::Observation last = observe_in_child(s, r.minimized, &differs);
  if (differs.empty()) differs = last.text() + " (the run ended before it could report)\n";
  std::string replay = "qcheck-replay " + out + "/minimized.json --backend " + backend->name;
  if (!s.verdict.profile.empty()) replay += " --profile " + s.verdict.profile;
  const std::string report = qcheck::minimize_report(r, backend->name, differs, replay);
  std::string failed;
  for (const auto& [name, text] :
       std::vector<std::pair<std::string, std::string>>{{"report.txt", report},
                                                        {"regression_test.cc", qcheck::regression_test_source(
                                                                                   r, backend->name, s.verdict.profile)},
                                                        {"replay.txt", replay + "\n"}}) {
    const std::string e = qcheck::write_file_whole(out + "/" + name, text);
    if (!e.empty()) failed = e;
  }
  for (const auto& [name, form] : {std::pair{"/minimized.json", qcheck::CaseForm::kJson},
                                   std::pair{"/minimized.case", qcheck::CaseForm::kBinary}}) {
    const std::string e = qcheck::save_case_file(out + name, r.minimized, form);
    if (!e.empty()) failed = e;
  }
  if (!failed.empty()) return refuse(failed);
  std::fputs(report.c_str(), stdout);
  std::printf("written: %s/{minimized.json, minimized.case, report.txt, regression_test.cc, replay.txt}\n",
              out.c_str());
  if (s.save_regression) {
    const std::string path = corpus_dir(s) + "/regressions/" + qcheck::case_digest(r.minimized) + ".json";
    const std::string e = qcheck::save_case_file(path, r.minimized, qcheck::CaseForm::kJson);
    if (!e.empty()) return refuse(e);
    std::printf("saved as a regression: %s (ctest replays it on every backend)\n", path.c_str());
  }
  return 0;
}
