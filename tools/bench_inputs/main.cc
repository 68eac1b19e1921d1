// qcheck-bench-inputs: the inputs phase of a fuzz execution on the CPU alone.
// Cases are drawn as the fuzz target makes them (a seed case, then
// mutations under a size budget; each case from a stream of its own), each case's tensor set built
// as the verdict builds it (poison A, generated inputs); the time per case,
// per part and per value recipe is printed (the same split as the fuzz
// target's --phase-times). The same --seed draws the same cases, so two
// builds compare on identical work.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/random/prng.h"
#include "fuzz/buffers/input_times.h"
#include "fuzz/buffers/tensors.h"
#include "fuzz/mutator/case_mutator.h"
#include "tools/common/cli.h"

namespace {

constexpr const char* kUsage =
    "usage: qcheck-bench-inputs [--cases N] [--seed S] [--case-size NAME]\n"
    "  --cases N        cases to build (default 20000)\n"
    "  --seed S         the walk's seed (default 1)\n"
    "  --case-size NAME usual, tiny or default (default usual; the fuzz target's --case-size)\n";

int64_t parse_int(const char* flag, const char* text, int64_t lo, int64_t hi) {
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || value < lo || value > hi) {
    std::fprintf(stderr, "qcheck-bench-inputs: %s = '%s' must be an integer in [%lld, %lld]\n", flag, text,
                 static_cast<long long>(lo), static_cast<long long>(hi));
    std::exit(2);
  }
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  if (const int done = qcheck::cli::help_or_version(argc, argv, "qcheck-bench-inputs", kUsage); done >= 0) return done;
  int64_t cases = 20000, seed = 1;
  std::string size = "usual";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) return qcheck::cli::unknown_option("qcheck-bench-inputs", arg, kUsage);
    if (arg == "--cases") {
      cases = parse_int("--cases", argv[++i], 1, int64_t(1) << 40);
    } else if (arg == "--seed") {
      seed = parse_int("--seed", argv[++i], 0, INT64_MAX);
    } else if (arg == "--case-size") {
      size = argv[++i];
    } else {
      return qcheck::cli::unknown_option("qcheck-bench-inputs", arg, kUsage);
    }
  }
  const qcheck::fuzzing::SizeBudget* budget = qcheck::fuzzing::case_size_budget(size.c_str());
  if (budget == nullptr || size == "limit") {
    std::fprintf(stderr, "qcheck-bench-inputs: --case-size = '%s' must be usual, tiny or default\n", size.c_str());
    return 2;
  }
  qcheck::InputTimes times;
  int64_t bytes = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int64_t n = 0; n < cases; ++n) {
    // Each case on its own: a seed case and eight mutations, from a stream
    // of its own (independent samples of what the fuzz target runs).
    qcheck::Xoshiro256 rng(qcheck::mix_keys({static_cast<uint64_t>(seed), static_cast<uint64_t>(n)}));
    qcheck::Case c = qcheck::fuzzing::seed_case(rng, *budget);
    for (int m = 0; m < 8; ++m) qcheck::fuzzing::mutate_case(c, rng, *budget);
    const qcheck::TensorSet set = qcheck::build_tensor_set(c, qcheck::Poison::kA, &times);
    bytes += static_cast<int64_t>(set.plan.total_bytes());
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("qcheck-bench-inputs: %lld %s cases (seed %lld), %.1f us per case, %.0f KiB of tensors per case\n",
              static_cast<long long>(cases), size.c_str(), static_cast<long long>(seed), seconds * 1e6 / cases,
              bytes / 1024.0 / cases);
  std::fputs(times.text(static_cast<uint64_t>(cases)).c_str(), stdout);
  return 0;
}
