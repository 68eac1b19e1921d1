// A plain main() for a fuzz target: runs every file given (a directory means
// every file in it, recursively, in sorted order; README and *.md files are
// skipped) through LLVMFuzzerTestOneInput once. Flags (anything starting with
// '-') go to LLVMFuzzerInitialize, as libFuzzer passes them. A finding
// aborts inside the target, so this exits 0 only when every file passed.
//
//   fused_q_replay [--backend=NAME ...] [--repeat=N] FILE|DIR...
//
// --repeat=N runs each file N times and prints the executions per second of
// each file (a measurement of the target alone, without libFuzzer).
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz/case/case_file.h"
#include "fuzz/targets/fuzz_entry.h"


int main(int argc, char** argv) {
  LLVMFuzzerInitialize(&argc, &argv);
  std::vector<std::string> files;
  long repeat = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--repeat=", 9) == 0) {
      repeat = std::strtol(argv[i] + 9, nullptr, 10);
      if (repeat < 1 || repeat > 100000000) {
        std::fprintf(stderr, "replay: --repeat must be in [1, 100000000]\n");
        return 2;
      }
    }
    if (argv[i][0] == '-') continue;
    const std::string error = qcheck::list_case_files(argv[i], &files);
    if (!error.empty()) {
      std::fprintf(stderr, "replay: %s\n", error.c_str());
      return 2;
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: %s [--flags] FILE|DIR...  (no input files given)\n", argv[0]);
    return 2;
  }
  int refused = 0;
  for (const std::string& path : files) {
    std::ifstream in(path, std::ios::binary);
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      std::fprintf(stderr, "replay: cannot read %s\n", path.c_str());
      return 2;
    }
    // Named before it runs: a finding aborts inside the target.
    std::fprintf(stderr, "replay: %s\n", path.c_str());
    const auto start = std::chrono::steady_clock::now();
    const std::clock_t cpu_start = std::clock();
    for (long r = 0; r < repeat; ++r) {
      if (LLVMFuzzerTestOneInput(bytes.data(), bytes.size()) == -1 && r == 0) ++refused;
    }
    if (repeat > 1) {
      // CPU time as well as wall time: other jobs on the machine slow the
      // wall clock down, not the CPU time of this process.
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const double cpu = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
      std::fprintf(stderr, "replay: %ld runs in %.3f s wall, %.3f s CPU: %.0f exec/s per CPU second\n", repeat,
                   seconds, cpu, repeat / cpu);
    }
  }
  std::fprintf(stderr, "replay: %zu inputs ran, %d refused as invalid or over budget, no finding\n",
               files.size(), refused);
  return 0;
}
