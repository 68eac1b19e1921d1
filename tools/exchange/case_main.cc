// qcheck-case export CASE DIR: the case's tensors as .npy files for a kernel
//   that runs elsewhere, with manifest.json (fuzz/exchange/exchange.h).
// qcheck-case expected CASE DIR [--profile P]: the oracle's outputs as
//   expected_NAME.npy (P: a named profile; default the case's).
// qcheck-case run DIR --backend B: runs a backend of qcheck-replay (or
//   plugin:PATH) on the files of an exported DIR, as an outside kernel would,
//   and saves its buffers back in place; `qcheck-check DIR` then judges them.
//   The .npy path end to end with a kernel whose bits are known.
// Exit status: 0 done, 2 bad arguments, an unreadable or invalid case, or a
// directory that cannot be written (one line saying which), 3 the backend
// failed to run (its reason).
#include <cstdio>
#include <string>

#include "fuzz/backends/backend.h"
#include "fuzz/case/case_file.h"
#include "fuzz/exchange/exchange.h"
#include "fuzz/verdict/verdict.h"
#include "tools/common/cli.h"

namespace {

constexpr const char* kUsage =
    "usage: qcheck-case export CASE DIR | qcheck-case expected CASE DIR [--profile P] | "
    "qcheck-case run DIR --backend B\n";

int usage() {
  std::fputs(kUsage, stderr);
  return 2;
}

int fail(const std::string& why, int code) {
  std::fprintf(stderr, "qcheck-case: %s\n", why.c_str());
  return code;
}

// Runs backend `name` on the files in `dir` and writes its buffers back.
int run_on_files(const std::string& dir, const std::string& name) {
  std::string why;
  const qcheck::Backend* backend = qcheck::find_backend(name, &why);
  if (backend == nullptr) return fail(why, 2);
  qcheck::Case c;
  qcheck::TensorSet set;
  why = qcheck::import_run(dir, &c, &set);
  if (!why.empty()) return fail(why, 2);
  qcheck::Profile profile;
  const std::string profile_name = qcheck::verdict_profile(c, *backend, {});
  if (!qcheck::find_profile(profile_name, &profile)) return fail("profile \"" + profile_name + "\" is not known", 2);
  why = backend->domain(c);
  if (!why.empty()) return fail("backend " + name + " cannot run here: " + why, 3);
  const qcheck::Outcome outcome = backend->run(c, profile, set);
  if (!outcome.is_ok()) return fail(std::string(qcheck::name_of(outcome.kind)) + ": " + outcome.reason,
                                    qcheck::exit_code_of(outcome.kind));
  why = qcheck::write_buffers(set, dir);
  return why.empty() ? 0 : fail(why, 2);
}

}  // namespace

int main(int argc, char** argv) {
  if (const int done = qcheck::cli::help_or_version(argc, argv, "qcheck-case", kUsage); done >= 0) return done;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) == 0 && arg != "--profile" && arg != "--backend") {
      return qcheck::cli::unknown_option("qcheck-case", arg, kUsage);
    }
  }
  if (argc == 5 && std::string(argv[1]) == "run" && std::string(argv[3]) == "--backend") {
    return run_on_files(argv[2], argv[4]);
  }
  if (argc < 4) return usage();
  const std::string command = argv[1], case_path = argv[2], dir = argv[3];
  std::string profile_name;
  for (int i = 4; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--profile" && i + 1 < argc) {
      profile_name = argv[++i];
    } else {
      return usage();
    }
  }
  qcheck::Case c;
  std::string error = qcheck::load_case_file(case_path, &c);
  if (!error.empty()) {
    std::fprintf(stderr, "qcheck-case: %s: %s\n", case_path.c_str(), error.c_str());
    return 2;
  }
  if (command == "export") {
    if (!profile_name.empty()) return usage();
    error = qcheck::export_case(c, dir);
  } else if (command == "expected") {
    qcheck::Profile p;
    if (profile_name.empty()) profile_name = c.profile;
    if (!qcheck::find_profile(profile_name, &p)) error = "profile \"" + profile_name + "\" is not a known profile";
    if (error.empty()) error = qcheck::write_expected(c, p, dir);
  } else {
    return usage();
  }
  if (!error.empty()) {
    std::fprintf(stderr, "qcheck-case: %s\n", error.c_str());
    return 2;
  }
  return 0;
}
