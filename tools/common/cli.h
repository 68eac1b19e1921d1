// The command-line conventions every qcheck-* tool follows: --help (or -h)
// prints the usage on stdout and exits 0; --version prints "NAME VERSION"
// and exits 0; an unknown option gets one line naming it, then the usage,
// on stderr, and exit 2. tests/cli checks them on every tool built.
#pragma once

#include <cstdio>
#include <cstring>
#include <string>

#ifndef QCHECK_VERSION
#error "QCHECK_VERSION comes from the project's version (the top CMakeLists.txt)"
#endif

namespace qcheck::cli {

// The exit status when argv asks for --help or --version (after printing
// the answer), else -1: the tool goes on parsing.
inline int help_or_version(int argc, char** argv, const char* name, const char* usage) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::fputs(usage, stdout);
      return 0;
    }
    if (std::strcmp(argv[i], "--version") == 0) {
      std::printf("%s %s\n", name, QCHECK_VERSION);
      return 0;
    }
  }
  return -1;
}

// One line naming the option, then the usage; the exit status 2.
inline int unknown_option(const char* name, const std::string& option, const char* usage) {
  std::fprintf(stderr, "%s: unknown option %s\n%s", name, option.c_str(), usage);
  return 2;
}

}  // namespace qcheck::cli
