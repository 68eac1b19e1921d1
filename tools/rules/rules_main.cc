// qcheck-rules: over N generated cases (a seed case, then each case a
// mutation of the one before, as the fuzz loops make them), how many output
// elements each numeric rule decides: where a wrong variant of the rule
// changes the output (ops/fused_q/search/rule_reach.h). --values RECIPE counts
// cases of one value recipe only (the generated case with its recipe set).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz/case/case_names.h"
#include "fuzz/mutator/case_mutator.h"
#include "ops/fused_q/search/rule_reach.h"
#include "tools/common/cli.h"

namespace {

constexpr const char* kUsage =
    "usage: qcheck-rules [--cases N] [--seed S] [--case-size tiny|usual|default] [--values RECIPE]\n"
    "  prints, per rule, the output elements a wrong variant of it changes over N generated cases\n";

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "qcheck-rules: %s\n%s", message.c_str(), kUsage);
  std::exit(2);
}

long long parse_count(const std::string& flag, const char* text, long long lo, long long hi) {
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || value < lo || value > hi) {
    usage_error(flag + " = '" + text + "' must be an integer in [" + std::to_string(lo) + ", " +
                std::to_string(hi) + "]");
  }
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace qcheck;
  using namespace qcheck::fuzzing;
  if (const int done = cli::help_or_version(argc, argv, "qcheck-rules", kUsage); done >= 0) return done;
  long long cases = 1000, seed = 1;
  std::string size = "usual";
  bool one_recipe = false;
  ValueRecipe recipe = ValueRecipe::kNormal;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    const bool has_value = i + 1 < argc;
    if (flag == "--cases" && has_value) {
      cases = parse_count(flag, argv[++i], 1, 100000000);
    } else if (flag == "--seed" && has_value) {
      seed = parse_count(flag, argv[++i], 0, 1LL << 62);
    } else if (flag == "--case-size" && has_value) {
      size = argv[++i];
      if (size == "limit" || case_size_budget(size.c_str()) == nullptr) {
        usage_error("--case-size = '" + size + "' must be tiny, usual or default");
      }
    } else if (flag == "--values" && has_value) {
      one_recipe = true;
      if (!parse_name(argv[++i], &recipe)) usage_error(std::string("--values = '") + argv[i] + "' is not a value recipe");
    } else {
      return cli::unknown_option("qcheck-rules", flag, kUsage);
    }
  }
  GeneratedCases generated(static_cast<uint64_t>(seed), *case_size_budget(size.c_str()));
  ReachCounts total;
  for (long long i = 0; i < cases; ++i) {
    Case c = generated.next();
    if (one_recipe) c.values = recipe;
    total.add(count_reach(c));
  }
  std::printf("qcheck-rules: %lld %s cases, seed %lld%s\n\n%s", cases, size.c_str(), seed,
              one_recipe ? (std::string(", values ") + name_of(recipe)).c_str() : "", reach_table(total).c_str());
  return 0;
}
