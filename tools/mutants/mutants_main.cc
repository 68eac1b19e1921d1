// qcheck-mutants [--backends NAME,...] [--seeds 1,2,3] [--max-executions N]
//                [--max-seconds S] [--case-size tiny|usual|default|limit]
//                [--minimize-seconds S] [--minimize-seeds N] [--no-baseline] [--token-limit-case]
//                [--clean NAME,...] [--clean-executions N] [--out DIR]
//                [--max-find-seconds S] [--max-median-seconds S]
// qcheck-mutants --equivalence-witnesses
//
// The fuzzers' power, measured: every planted bug that runs here (a backend
// marked planted_bug whose failure does not end the process, every harmless
// twin, and the CUDA catalogue's plugins where the GPU and the libraries
// are: cuda-blocked+bug=NAME; or the --backends named) is fuzzed from an empty corpus
// with each seed by the in-process loop of fuzz/mutator/bin_fuzz.h until its
// first finding, within the budgets (default 100000 executions, 60 s per
// seed). The finding is minimized (--minimize-seconds, default 10; 0: not;
// --minimize-seeds N: only the first N seeds' findings)
// and the bug run through the fixed-grid baseline (ops/fused_q/mutants/baseline.h: the test
// that ships with vLLM's kernel). The correct kernels (--clean, default
// cpu-model and, with a GPU, cuda-blocked) run --clean-executions (default
// 20000) per seed and must give no finding. A bug the fuzzer misses that
// has an equivalence check (equivalence.h) runs its covering cases: when all
// agree with the oracle and the check's witness is caught, it is proven
// equivalent. --equivalence-witnesses runs only each check's covering cases
// on its witness (which must be caught) and on the correct CPU model (which
// must pass): the checks' own proof of power, for CI.
//
// Prints the markdown table; with --out writes DIR/mutants.md, mutants.csv,
// mutation-report.json (Stryker's mutation-testing-report schema) and
// junit.xml (a testcase per planted bug, for a CI system).
// Exit: 0 every bug found in every seed (or proven equivalent), no twin and
// no correct kernel reported, and with --max-find-seconds / --max-median-
// seconds (the GPU gate's 60 and 5) no bug found later than S seconds in any
// seed and the median of the bugs' median times to find under S; 1
// otherwise; 2 bad arguments. A twin runs --clean-executions, like a correct
// kernel: both are false-alarm checks.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz/case/tensor_plan.h"
#include "fuzz/minimize/minimize.h"
#include "tools/common/cli.h"
#include "tools/mutants/mutants.h"

namespace {

using qcheck::mutants::Kind;
using qcheck::mutants::MutantResult;

int refuse(const std::string& why) {
  std::fprintf(stderr, "qcheck-mutants: %s\n", why.c_str());
  return 2;
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream s(list);
  for (std::string item; std::getline(s, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

bool number(const char* text, double lo, double hi, double* out) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (*text == '\0' || *end != '\0' || !(v >= lo && v <= hi)) return false;
  *out = v;
  return true;
}

struct Settings {
  std::vector<std::string> backends, clean;
  std::vector<uint64_t> seeds = {1, 2, 3};
  double max_executions = 100000, max_seconds = 60, clean_executions = 20000, minimize_seconds = 10;
  double minimize_seeds = 1e9, max_find_seconds = -1, max_median_seconds = -1;
  double race_runs = qcheck::kDefaultRaceRuns;  // on the backends that can race
  std::string case_size = "tiny", out;
  bool baseline = true, token_limit_case = false;
};

std::string source_file(const std::string& backend) {
  if (backend.rfind("cpu-model", 0) == 0) return "ops/fused_q/cpu_model/cpu_model.cc";
  if (backend.rfind("cuda-legacy", 0) == 0) return "ops/fused_q/kernels/legacy_kernel.cu";
  if (backend.rfind("cuda-", 0) == 0) return "ops/fused_q/kernels/blocked_kernel.cu";
  return "fuzz/backends/backends.cc";
}

MutantResult measure(const qcheck::Backend& b, Kind kind, const Settings& s) {
  MutantResult m;
  m.backend = b.name;
  m.description = b.description;
  m.kind = kind;
  m.source_file = source_file(b.name);
  for (uint64_t seed : s.seeds) {
    qcheck::mutants::SeedRun run;
    run.seed = seed;
    qcheck::fuzzing::BinFuzzOptions o;
    o.seed = seed;
    o.max_executions = static_cast<int64_t>(kind == Kind::kBug ? s.max_executions : s.clean_executions);
    o.max_seconds = s.max_seconds;
    o.budget = *qcheck::fuzzing::case_size_budget(s.case_size.c_str());
    o.verdict.race_runs = static_cast<int>(s.race_runs);  // (the verdict runs them where a backend can race)
    run.fuzz = qcheck::fuzzing::fuzz_until_finding(b, o);
    const bool minimize_this = static_cast<double>(m.runs.size()) < s.minimize_seeds;
    if (run.fuzz.found && s.minimize_seconds > 0 && minimize_this && run.fuzz.verdict.outcome.is_ok()) {
      const qcheck::Evaluate evaluate = qcheck::evaluate_in_process(b, {});
      const qcheck::Observation target = evaluate(run.fuzz.finding);
      if (target.exit_code != 0) {
        qcheck::MinimizeOptions options;
        options.budget_seconds = s.minimize_seconds;
        options.explain = false;
        const qcheck::MinimizeResult r = qcheck::minimize(run.fuzz.finding, target, evaluate, options);
        run.minimized = true;
        run.smallest = r.minimized;
        run.smallest_bytes = static_cast<int64_t>(qcheck::plan_tensors(r.minimized).total_bytes());
      }
    }
    std::fprintf(stderr, "qcheck-mutants: %-44s seed %llu: %s after %lld executions, %.3f s\n", b.name.c_str(),
                 static_cast<unsigned long long>(seed), run.fuzz.found ? run.fuzz.failure.c_str() : "no finding",
                 static_cast<long long>(run.fuzz.executions), run.fuzz.seconds);
    m.runs.push_back(std::move(run));
  }
  const qcheck::mutants::EquivalenceCheck* check = qcheck::mutants::equivalence_check(b.name);
  if (kind == Kind::kBug && check != nullptr && m.found() < static_cast<int>(m.runs.size())) {
    const std::vector<qcheck::Case> cases = check->cases();
    m.equivalence_run = true;
    m.witness_name = check->witness;
    m.equivalence = qcheck::mutants::compare_with_oracle(b, cases);
    if (const qcheck::Backend* witness = qcheck::find_backend(check->witness)) {
      m.witness = qcheck::mutants::compare_with_oracle(*witness, cases);
    }
    std::fprintf(stderr, "qcheck-mutants: %-44s equivalence: %d of %d covering cases differ; witness %s: %d\n",
                 b.name.c_str(), m.equivalence.differ, m.equivalence.cases, check->witness.c_str(),
                 m.witness.differ);
  }
  if (kind == Kind::kBug && s.baseline) {
    m.baseline_run = true;
    m.baseline = qcheck::run_baseline(b, s.token_limit_case);
  }
  return m;
}

// Each equivalence check's covering cases must catch its witness and pass
// the correct CPU model.
int run_witnesses() {
  bool all = true;
  const qcheck::Backend* correct = qcheck::find_backend("cpu-model");
  for (const qcheck::mutants::EquivalenceCheck& check : qcheck::mutants::equivalence_checks()) {
    const std::vector<qcheck::Case> cases = check.cases();
    const qcheck::Backend* witness = qcheck::find_backend(check.witness);
    if (witness == nullptr || correct == nullptr) return refuse("no backend " + check.witness + " or cpu-model");
    const qcheck::mutants::EquivalenceResult w = qcheck::mutants::compare_with_oracle(*witness, cases);
    const qcheck::mutants::EquivalenceResult c = qcheck::mutants::compare_with_oracle(*correct, cases);
    const bool ok = w.differ > 0 && c.differ == 0;
    const std::string correct_first = c.differ > 0 ? " (" + c.first + ")" : "";
    std::printf("%s: %d covering cases; witness %s caught in %d (%s); cpu-model differs in %d%s: %s\n",
                check.backend.c_str(), w.cases, check.witness.c_str(), w.differ, w.first.c_str(), c.differ,
                correct_first.c_str(), ok ? "ok" : "FAILED");
    all &= ok;
  }
  return all ? 0 : 1;
}

bool write(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  return static_cast<bool>(out);
}

}  // namespace

constexpr const char* kUsage =
    "usage: qcheck-mutants [--backends NAME,...] [--seeds 1,2,3] [--max-executions N] [--max-seconds S]\n"
    "                      [--case-size tiny|usual|default|limit] [--minimize-seconds S] [--minimize-seeds N]\n"
    "                      [--no-baseline] [--token-limit-case] [--clean NAME,...] [--clean-executions N]\n"
    "                      [--out DIR] [--max-find-seconds S] [--max-median-seconds S]\n"
    "                      [--race-runs N]   (runs after A and B of a case of 256 tokens or more on a\n"
    "                                         backend that can race, default 3)\n"
    "       qcheck-mutants --equivalence-witnesses\n";

int main(int argc, char** argv) {
  if (const int done = qcheck::cli::help_or_version(argc, argv, "qcheck-mutants", kUsage); done >= 0) return done;
  Settings s;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool takes_value = arg == "--backends" || arg == "--seeds" || arg == "--max-executions" ||
                             arg == "--max-seconds" || arg == "--case-size" || arg == "--minimize-seconds" ||
                             arg == "--clean" || arg == "--clean-executions" || arg == "--out" ||
                             arg == "--minimize-seeds" || arg == "--max-find-seconds" || arg == "--max-median-seconds" ||
                             arg == "--race-runs";
    if (arg == "--no-baseline") {
      s.baseline = false;
      continue;
    }
    if (arg == "--equivalence-witnesses") return run_witnesses();
    if (arg == "--token-limit-case") {
      s.token_limit_case = true;
      continue;
    }
    if (!takes_value) return qcheck::cli::unknown_option("qcheck-mutants", arg, kUsage);
    if (i + 1 >= argc) return refuse(arg + " needs a value");
    const char* v = argv[++i];
    if (arg == "--backends") s.backends = split(v);
    if (arg == "--clean") s.clean = split(v);
    if (arg == "--out") s.out = v;
    if (arg == "--case-size") {
      if (qcheck::fuzzing::case_size_budget(v) == nullptr) return refuse("--case-size must be tiny, usual, default or limit");
      s.case_size = v;
    }
    if (arg == "--seeds") {
      s.seeds.clear();
      for (const std::string& seed : split(v)) {
        double n = 0;
        if (!number(seed.c_str(), 0, 1e15, &n)) return refuse("--seeds takes integers, not " + seed);
        s.seeds.push_back(static_cast<uint64_t>(n));
      }
      if (s.seeds.empty()) return refuse("--seeds names no seed");
    }
    double* target = arg == "--max-executions"     ? &s.max_executions
                     : arg == "--max-seconds"      ? &s.max_seconds
                     : arg == "--clean-executions" ? &s.clean_executions
                     : arg == "--minimize-seconds" ? &s.minimize_seconds
                     : arg == "--minimize-seeds"   ? &s.minimize_seeds
                     : arg == "--max-find-seconds" ? &s.max_find_seconds
                     : arg == "--max-median-seconds" ? &s.max_median_seconds
                     : arg == "--race-runs"        ? &s.race_runs
                                                   : nullptr;
    if (target != nullptr && !number(v, 0, 1e12, target)) return refuse(arg + " must be a number >= 0, not " + v);
  }
  std::vector<std::pair<const qcheck::Backend*, Kind>> chosen;
  if (s.backends.empty()) {
    for (const qcheck::Backend& b : qcheck::backends()) {
      if ((!b.planted_bug && !b.harmless_twin) || b.ends_process || !b.domain(qcheck::Case{}).empty()) continue;
      chosen.push_back({&b, b.harmless_twin ? Kind::kTwin : Kind::kBug});
    }
    for (const std::string& name : qcheck::planted_cuda_bug_backends()) {
      std::string why;
      const qcheck::Backend* b = qcheck::find_backend(name, &why);
      if (b == nullptr) return refuse(why);
      if (b->domain(qcheck::Case{}).empty()) chosen.push_back({b, b->harmless_twin ? Kind::kTwin : Kind::kBug});
    }
  } else {
    for (const std::string& name : s.backends) {
      std::string why;
      const qcheck::Backend* b = qcheck::find_backend(name, &why);
      if (b == nullptr) return refuse(why);
      chosen.push_back({b, b->harmless_twin ? Kind::kTwin : b->planted_bug ? Kind::kBug : Kind::kCorrect});
    }
  }
  if (s.clean.empty()) {
    s.clean.push_back("cpu-model");
    const qcheck::Backend* gpu = qcheck::find_backend("cuda-blocked");
    if (gpu != nullptr && gpu->domain(qcheck::Case{}).empty()) s.clean.push_back("cuda-blocked");
  }
  for (const std::string& name : s.clean) {
    std::string why;
    const qcheck::Backend* b = qcheck::find_backend(name, &why);
    if (b == nullptr) return refuse(why);
    chosen.push_back({b, Kind::kCorrect});
  }
  std::vector<MutantResult> results;
  for (const auto& [backend, kind] : chosen) results.push_back(measure(*backend, kind, s));
  const std::string table = qcheck::mutants::markdown(results);
  std::fputs(table.c_str(), stdout);
  if (!s.out.empty()) {
    std::error_code error;
    std::filesystem::create_directories(s.out, error);
    if (error || !write(s.out + "/mutants.md", table) || !write(s.out + "/mutants.csv", qcheck::mutants::csv(results)) ||
        !write(s.out + "/mutation-report.json", qcheck::mutants::stryker_json(results)) ||
        !write(s.out + "/junit.xml", qcheck::mutants::junit_xml(results))) {
      return refuse("cannot write the reports into " + s.out);
    }
  }
  bool all = true;
  for (const MutantResult& m : results) all &= m.as_expected();
  const qcheck::mutants::FindTimes times = qcheck::mutants::find_times(results);
  std::printf("time to find: slowest %.3f s, median of the bugs' medians %.3f s\n", times.slowest, times.median);
  if (s.max_find_seconds >= 0 && times.slowest > s.max_find_seconds) {
    std::printf("FAILED: a bug was found only after %.3f s (--max-find-seconds %.0f)\n", times.slowest,
                s.max_find_seconds);
    all = false;
  }
  if (s.max_median_seconds >= 0 && times.median >= s.max_median_seconds) {
    std::printf("FAILED: the median time to find is %.3f s (--max-median-seconds %.0f)\n", times.median,
                s.max_median_seconds);
    all = false;
  }
  return all ? 0 : 1;
}
