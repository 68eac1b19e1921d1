// qcheck-replay CASE [--backend B] [--profile P] [--oracle scalar|simd]
//               [--max-listed N] [--json]
// qcheck-replay --list-backends
//
// Runs one case file (binary, a libFuzzer artifact, or JSON) on one backend
// (default cpu-simd) and prints the verdict. Exit codes: 0 pass, 1 mismatch,
// 2 invalid input (unreadable or corrupt file, invalid case, unknown backend
// or profile, bad arguments), 3 runtime or GPU error (including a backend
// that cannot run here, e.g. no GPU). Parsing and printing only: the logic
// lives in the harness library.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz/backend.h"
#include "fuzz/case_file.h"
#include "fuzz/verdict.h"

namespace {

constexpr const char* kUsage =
    "usage: qcheck-replay CASE [--backend B] [--profile P] [--oracle scalar|simd] "
    "[--max-listed N] [--json]\n"
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

}  // namespace

int main(int argc, char** argv) {
  std::string case_path, backend_name = "cpu-simd";
  qcheck::VerdictOptions options;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next_value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg == "--list-backends") {
      return list_backends();
    } else if (arg == "--json") {
      json = true;
    } else if (arg == "--backend" || arg == "--profile" || arg == "--oracle" ||
               arg == "--max-listed") {
      const char* v = next_value();
      if (v == nullptr) return refuse(arg + " needs a value");
      if (arg == "--backend") backend_name = v;
      if (arg == "--profile") options.profile = v;
      if (arg == "--oracle") {
        const std::string rows = v;
        if (rows != "scalar" && rows != "simd")
          return refuse("--oracle must be scalar or simd, not " + rows);
        options.oracle_rows =
            rows == "scalar" ? qcheck::OracleRows::kScalar : qcheck::OracleRows::kSimd;
      }
      if (arg == "--max-listed") {
        char* end = nullptr;
        const long n = std::strtol(v, &end, 10);
        if (*v == '\0' || *end != '\0' || n < 0 || n > 100000000) {
          return refuse(std::string("--max-listed must be an integer in [0, 100000000], not ") + v);
        }
        options.max_listed = static_cast<size_t>(n);
      }
    } else if (!arg.empty() && arg[0] == '-') {
      return refuse("unknown option " + arg + "\n" + kUsage);
    } else if (case_path.empty()) {
      case_path = arg;
    } else {
      return refuse("more than one case file given (" + case_path + ", " + arg + ")");
    }
  }
  if (case_path.empty()) return refuse(std::string("no case file given\n") + kUsage);

  const qcheck::Backend* backend = qcheck::find_backend(backend_name);
  if (backend == nullptr) {
    return refuse("unknown backend " + backend_name + " (known: " + qcheck::backend_names() + ")");
  }
  qcheck::Case c;
  const std::string error = qcheck::load_case_file(case_path, &c);
  if (!error.empty()) return refuse(error);

  const qcheck::Verdict verdict = qcheck::run_verdict(c, *backend, options);
  const std::string text =
      json ? qcheck::verdict_json(verdict, c) : qcheck::verdict_text(verdict, c);
  std::fputs(text.c_str(), verdict.exit_code() >= 2 && !json ? stderr : stdout);
  return verdict.exit_code();
}
