// qcheck-fused-k: fused_k's cases from the command line.
//
//   qcheck-fused-k draw SEED
//       the case SEED draws (draw_fused_k_case), as JSON on stdout
//   qcheck-fused-k check CASE [--backend=NAME] [--quiet]
//       the case through the backend (default cpu-model: the CPU model of
//       qcheck's CUDA kernel; cuda: the kernel on the GPU; either with
//       -bug-NAME: a planted bug) against the oracle, every byte of its
//       arena; exit 0 the same bytes, 1 they differ, 2 an invalid case or
//       bad arguments, 3 a refusal or a device error
//   qcheck-fused-k minimize CASE --backend=NAME [--out FILE] [--max-tries N]
//       the smallest case that fails the same way (core/op/any_shrink.h:
//       field by field toward 0, false, the first choice; the seed stays),
//       as JSON on stdout (or FILE), the steps on stderr
//
// CASE is a file in the generic binary form (version 3) or JSON.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/op/any_case.h"
#include "core/op/any_case_json.h"
#include "core/op/any_shrink.h"
#include "ops/fused_k/case/fused_k_case.h"
#include "ops/fused_k/check/check.h"
#include "ops/fused_k/op.h"
#include "tools/common/cli.h"

namespace {

using namespace qcheck;
using namespace qcheck::fused_k;

constexpr const char* kName = "qcheck-fused-k";
constexpr const char* kUsage =
    "usage: qcheck-fused-k draw SEED\n"
    "       qcheck-fused-k check CASE [--backend=NAME] [--quiet]\n"
    "       qcheck-fused-k minimize CASE --backend=NAME [--out FILE] [--max-tries N]\n"
    "  CASE: a fused_k case file (binary version 3 or JSON); NAME: cpu-model (default), cuda, or either\n"
    "  with -bug-NAME (ops/fused_k/planted). check exits 0 same bytes, 1 differ, 2 invalid, 3 refused.\n";

int fail(const std::string& why, int code = 2) {
  std::fprintf(stderr, "%s: %s\n", kName, why.c_str());
  return code;
}

std::string read_case(const std::string& path, FusedKCase* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "cannot read " + path;
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  AnyCase any;
  const std::vector<const Op*> ops = {&fused_k_op()};
  const bool binary = bytes.size() >= 4 && std::string(bytes.begin(), bytes.begin() + 4) == "QCKC";
  const std::string error = binary ? decode_any_case(bytes.data(), bytes.size(), ops, &any)
                                   : any_case_from_json(std::string(bytes.begin(), bytes.end()), ops, fused_k_op(), &any);
  if (!error.empty()) return path + ": " + error;
  return from_any_case(any, out);
}

std::string json_of(const FusedKCase& c) { return any_case_to_json(to_any_case(c), true) + "\n"; }

}  // namespace

int main(int argc, char** argv) {
  if (const int done = cli::help_or_version(argc, argv, kName, kUsage); done >= 0) return done;
  std::vector<std::string> words;
  std::string backend = "cpu-model", out_path;
  bool quiet = false, backend_given = false;
  int64_t max_tries = 20000;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--backend=", 0) == 0) {
      backend = a.substr(10), backend_given = true;
    } else if (a == "--quiet") {
      quiet = true;
    } else if (a == "--out" && i + 1 < argc) {
      out_path = argv[++i];
    } else if (a == "--max-tries" && i + 1 < argc) {
      max_tries = std::strtoll(argv[++i], nullptr, 10);
      if (max_tries < 1) return fail("--max-tries must be at least 1");
    } else if (a[0] == '-') {
      return cli::unknown_option(kName, a, kUsage);
    } else {
      words.push_back(a);
    }
  }
  if (words.size() != 2) return std::fputs(kUsage, stderr), 2;
  FusedKBackend chosen;
  if (!parse_backend(backend, &chosen)) return fail("--backend=" + backend + " is not one of " + backend_names());
  if (const std::string ready = backend_ready(chosen); !ready.empty() && words[0] != "draw") {
    return fail("--backend=" + backend + ": " + ready);
  }

  if (words[0] == "draw") {
    char* end = nullptr;
    const unsigned long long seed = std::strtoull(words[1].c_str(), &end, 10);
    if (*end != '\0' || words[1].empty()) return fail("SEED = \"" + words[1] + "\" is not an unsigned integer");
    std::fputs(json_of(draw_fused_k_case(seed)).c_str(), stdout);
    return 0;
  }
  FusedKCase c;
  if (const std::string error = read_case(words[1], &c); !error.empty()) return fail(error);
  if (words[0] == "check") {
    const FusedKVerdict v = check_fused_k_case(c, chosen);
    if (!quiet) std::printf("%s: %s\n", describe(c).c_str(), v.exit_code == 0 ? "pass" : v.text.c_str());
    return v.exit_code;
  }
  if (words[0] != "minimize") return fail("unknown command " + words[0] + " (draw, check, minimize)");
  if (!backend_given) return fail("minimize needs --backend=NAME: the backend the case fails on");
  const FusedKVerdict first = check_fused_k_case(c, chosen);
  if (first.exit_code == 0 || first.exit_code == 2) {
    return fail("the case does not fail on " + backend + " (" + (first.exit_code == 0 ? "pass" : first.text) + ")");
  }
  std::fprintf(stderr, "%s: %s fails on %s: %s\n", kName, describe(c).c_str(), backend.c_str(), first.text.c_str());
  const auto same = [&](const AnyCase& candidate) {
    FusedKCase k;
    return from_any_case(candidate, &k).empty() && check_fused_k_case(k, chosen).failure == first.failure;
  };
  const AnyShrinkResult r = shrink_any_case(to_any_case(c), same, max_tries,
                                            [](const std::string& step) { std::fprintf(stderr, "  %s\n", step.c_str()); });
  FusedKCase small;
  from_any_case(r.best, &small);
  const FusedKVerdict last = check_fused_k_case(small, chosen);
  std::fprintf(stderr, "%s: %lld candidates tried, %lld kept: %s fails the same way: %s\n", kName,
               static_cast<long long>(r.tries), static_cast<long long>(r.accepted), describe(small).c_str(),
               last.text.c_str());
  if (out_path.empty()) {
    std::fputs(json_of(small).c_str(), stdout);
    return 0;
  }
  std::ofstream out(out_path, std::ios::trunc);
  out << json_of(small);
  return out ? 0 : fail("cannot write " + out_path);
}
