// qcheck-case export CASE DIR: the case's tensors as .npy files for a kernel
//   that runs elsewhere, with manifest.json (fuzz/exchange.h).
// qcheck-case expected CASE DIR [--profile P]: the oracle's outputs as
//   expected_NAME.npy (P: a named profile; default the case's).
// Exit status: 0 done, 2 bad arguments, an unreadable or invalid case, or a
// directory that cannot be written (one line saying which).
#include <cstdio>
#include <string>

#include "fuzz/case_file.h"
#include "fuzz/exchange.h"

namespace {

int usage() {
  std::fprintf(stderr, "usage: qcheck-case export CASE DIR | qcheck-case expected CASE DIR [--profile P]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
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
