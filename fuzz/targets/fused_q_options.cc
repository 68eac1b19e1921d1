#include "fuzz/targets/fused_q_options.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include "numerics/profile.h"

namespace qcheck::fuzzing {

constexpr long kMaxRaceRuns = 16;
namespace {

// The value of --name=VALUE in argv, else of the environment variable, else
// nullptr. The last occurrence in argv wins.
const char* option_value(int argc, char** argv, const char* flag, const char* env) {
  const char* found = nullptr;
  const size_t n = std::strlen(flag);
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], flag, n) == 0 && argv[i][n] == '=') found = argv[i] + n + 1;
  }
  if (found != nullptr) return found;
  return std::getenv(env);
}

bool has_flag(int argc, char** argv, const char* flag) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], flag) == 0) return true;
  }
  return false;
}

bool env_is(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v != nullptr && std::strcmp(v, value) == 0;
}

}  // namespace

bool backend_follows_profile(const Backend& backend) { return backend.fixed_profile.empty(); }

std::string parse_fused_q_options(int argc, char** argv, FusedQOptions* out) {
  FusedQOptions o;
  if (const char* name = option_value(argc, argv, "--backend", "QCHECK_BACKEND")) {
    std::string why;
    o.backend = find_backend(name, &why);
    if (o.backend == nullptr) return std::string("--backend (QCHECK_BACKEND) = ") + name + ": " + why;
  } else {
    // A GPU here: fuzz the seed PR's kernel; else the SIMD oracle rows.
    const Backend* gpu = find_backend("cuda-blocked");
    o.backend = gpu != nullptr && gpu->domain(Case{}).empty() ? gpu : find_backend("cpu-simd");
  }
  if (const char* profile = option_value(argc, argv, "--profile", "QCHECK_PROFILE")) {
    Profile ignored;
    if (!find_profile(profile, &ignored)) {
      return std::string("--profile (QCHECK_PROFILE) = ") + profile + " is not a known profile";
    }
    o.verdict.profile = profile;
    o.profile_given = true;
  }
  o.verdict.oracle_rows = o.backend->name == "cpu-simd" ? OracleRows::kScalar : OracleRows::kSimd;
  if (const char* rows = option_value(argc, argv, "--oracle", "QCHECK_ORACLE")) {
    if (std::strcmp(rows, "scalar") != 0 && std::strcmp(rows, "simd") != 0) {
      return std::string("--oracle (QCHECK_ORACLE) = ") + rows + " must be scalar or simd";
    }
    o.verdict.oracle_rows = std::strcmp(rows, "scalar") == 0 ? OracleRows::kScalar : OracleRows::kSimd;
  }
  if (const char* bytes = option_value(argc, argv, "--max-case-bytes", "QCHECK_MAX_CASE_BYTES")) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(bytes, &end, 10);
    if (*bytes == '\0' || *end != '\0' || v < 4096 || v > CaseLimits::kMaxMemoryBytes) {
      return std::string("--max-case-bytes (QCHECK_MAX_CASE_BYTES) = ") + bytes + " must be in [4096, " +
             std::to_string(CaseLimits::kMaxMemoryBytes) + "]";
    }
    o.max_case_bytes = v;
  }
  if (const char* size = option_value(argc, argv, "--case-size", "QCHECK_CASE_SIZE")) {
    if (case_size_budget(size) == nullptr) {
      return std::string("--case-size (QCHECK_CASE_SIZE) = ") + size + " must be default, usual, tiny or limit";
    }
    o.case_size = size;
    // The limit cases are larger than the default cap on purpose.
    const bool cap_given = option_value(argc, argv, "--max-case-bytes", "QCHECK_MAX_CASE_BYTES") != nullptr;
    if (case_size_budget(size)->limit_cases && !cap_given) o.max_case_bytes = CaseLimits::kMaxMemoryBytes;
  }
  if (const char* known = option_value(argc, argv, "--known", "QCHECK_KNOWN")) {
    const std::string why = load_known_file(known, &o.known);
    if (!why.empty()) return std::string("--known (QCHECK_KNOWN): ") + why;
    o.known_file = known;
  }
  o.verdict.race_runs = o.backend->can_race ? kDefaultRaceRuns : 0;
  if (const char* runs = option_value(argc, argv, "--race-runs", "QCHECK_RACE_RUNS")) {
    char* end = nullptr;
    const long v = std::strtol(runs, &end, 10);
    if (*runs == '\0' || *end != '\0' || v < 0 || v > kMaxRaceRuns) {
      return std::string("--race-runs (QCHECK_RACE_RUNS) = ") + runs + " must be in [0, " +
             std::to_string(kMaxRaceRuns) + "]";
    }
    o.verdict.race_runs = static_cast<int>(v);
  }
  o.keep_going = has_flag(argc, argv, "--keep-going") || env_is("QCHECK_KEEP_GOING", "1");
  o.input_bins = !(has_flag(argc, argv, "--no-input-bins") || env_is("QCHECK_INPUT_BINS", "0"));
  o.phase_times = has_flag(argc, argv, "--phase-times") || env_is("QCHECK_PHASE_TIMES", "1");
  o.verdict.graph = has_flag(argc, argv, "--graph") || env_is("QCHECK_GRAPH", "1");
  if (o.verdict.graph && !o.backend->run_in_graph) {
    return "--graph (QCHECK_GRAPH=1): backend " + o.backend->name +
           " has no CUDA graph launch (the CUDA backends and CUDA plugins have one)";
  }
  *out = o;
  return "";
}

std::string describe(const FusedQOptions& o) {
  std::string profile = o.profile_given ? o.verdict.profile
                        : backend_follows_profile(*o.backend) ? "the case's"
                                                              : o.backend->fixed_profile + " (the backend's only profile)";
  return "backend " + o.backend->name + (o.backend->planted_bug ? " (planted bug)" : "") + ", oracle " +
         (o.verdict.oracle_rows == OracleRows::kScalar ? "scalar" : "simd") + " rows, profile " + profile +
         ", cases up to " + std::to_string(o.max_case_bytes) + " bytes" + ", " + o.case_size + " case sizes" +
         (o.keep_going ? ", keep going after mismatches" : "") + (o.input_bins ? "" : ", no input bins") +
         (o.verdict.graph ? ", graph replay against eager" : "") +
         (o.verdict.race_runs > 0 ? ", " + std::to_string(o.verdict.race_runs) + " race runs from T = " +
                                        std::to_string(kRaceRunsFromTokens)
                                  : "") +
         (o.known.empty() ? "" : ", " + std::to_string(o.known.size()) + " known bugs of " + o.known_file);
}

}  // namespace qcheck::fuzzing
