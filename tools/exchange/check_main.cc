// qcheck-check DIR [--profile P|auto] [--domain FILE] [--json] [--max-listed N]: the
// verdict on the outputs a kernel wrote into the .npy files of DIR (written
// by qcheck-case export; fuzz/exchange/exchange.h), as qcheck-replay gives it for an
// in-process backend: every output element bit for bit under the profile
// (default the case's; a named profile, NAME+any-fma, or auto), sentinels
// and padding untouched, inputs unchanged. One run: an output element that
// still holds poison A is reported unwritten. With --domain (the JSON form
// of fuzz/domain/domain_json.h), a case outside the kernel's domain is
// refused with the reason (exit 2), never judged.
// Exit status as qcheck-replay: 0 pass, 1 mismatch, 2 invalid input (a
// missing, corrupt, truncated, wrong-dtype or wrong-shape file, named with
// its field, in one line), 3 runtime error.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz/domain/domain_json.h"
#include "fuzz/exchange/exchange.h"
#include "fuzz/verdict/judge.h"
#include "fuzz/verdict/verdict.h"
#include "tools/common/cli.h"

namespace {

constexpr const char* kUsage = "usage: qcheck-check DIR [--profile P|auto] [--domain FILE] [--json] [--max-listed N]\n";

int usage() {
  std::fputs(kUsage, stderr);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (const int done = qcheck::cli::help_or_version(argc, argv, "qcheck-check", kUsage); done >= 0) return done;
  if (argc < 2 || argv[1][0] == '-') return argc < 2 ? usage() : qcheck::cli::unknown_option("qcheck-check", argv[1], kUsage);
  const std::string dir = argv[1];
  std::string profile, domain_file;
  bool json = false;
  size_t max_listed = 20;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--profile" && i + 1 < argc) {
      profile = argv[++i];
    } else if (arg == "--domain" && i + 1 < argc) {
      domain_file = argv[++i];
    } else if (arg == "--max-listed" && i + 1 < argc) {
      max_listed = std::strtoul(argv[++i], nullptr, 10);
    } else if (arg == "--json") {
      json = true;
    } else {
      return qcheck::cli::unknown_option("qcheck-check", arg, kUsage);
    }
  }
  qcheck::Case c;
  qcheck::TensorSet got;
  qcheck::Verdict v;
  v.backend = "outside kernel (.npy in " + dir + ")";
  qcheck::Domain domain;
  std::string error = domain_file.empty() ? "" : qcheck::load_domain_file(domain_file, &domain);
  if (error.empty()) error = qcheck::import_run(dir, &c, &got);
  if (error.empty()) {
    const std::string outside = qcheck::outside_domain(domain, c);
    if (!outside.empty()) error = "outside the domain of " + domain_file + ": " + outside;
  }
  if (error.empty()) {
    v.profile = profile.empty() ? c.profile : profile;
    v.report.max_listed = max_listed;
    qcheck::Judgement j;
    error = qcheck::judge_runs(c, v.profile, qcheck::simd_row_ops(), got, got, max_listed, nullptr, nullptr, &j);
    if (error.empty()) qcheck::take_judgement(std::move(j), &v);
  }
  if (!error.empty()) {
    std::fprintf(stderr, "INVALID INPUT: %s\n", error.c_str());
    return 2;
  }
  const std::string text = json ? qcheck::verdict_json(v, c) : qcheck::verdict_text(v, c);
  std::fputs(text.c_str(), stdout);
  return v.exit_code();
}
