// fused_k's fuzz target: a case through a backend, every byte of its arena
// against the oracle under qcheck_fused_k_rules(). Built as fused_k_fuzzer
// (libFuzzer) and fused_k_replay (a plain main over case files).
//
// An input is a fused_k case in the generic binary form (version 3,
// core/op/any_case.h); any other bytes are a seed: their first 8 bytes,
// little-endian, draw a case (draw_fused_k_case), so an empty corpus reaches
// every shape. The mutator changes a case's fields through the op's
// metadata (LLVMFuzzerCustomMutator below). A case the validation refuses must be refused with a
// line naming a field (never a crash); a valid one the oracle refuses, or
// one whose bytes differ, is a finding: its JSON form and the difference
// are printed under "==== qcheck fused_k finding ====", then abort().
//
// Flags: --backend=cpu-model (the default: the CPU model of the CUDA
// kernel), cuda (the kernel itself, in a build with nvcc, on a GPU), or
// either with -bug-NAME (a planted bug, ops/fused_k/planted);
// --max-arena-mb=N skips cases whose arena is larger (default 64).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <string>

#include "core/op/any_case.h"
#include "core/op/any_case_json.h"
#include "core/op/any_mutate.h"
#include "fuzz/targets/fuzz_entry.h"
#include "fuzz/targets/status_file.h"
#include "ops/fused_k/case/fused_k_case.h"
#include "ops/fused_k/check/check.h"
#include "ops/fused_k/op.h"

namespace qcheck::fused_k {
namespace {

struct Options {
  FusedKBackend backend;  // cpu-model
  int64_t max_arena_bytes = int64_t(64) << 20;
};
Options g_options;

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr, "fused_k target: %s\n  flags: --backend=NAME, --max-arena-mb=N\n", why.c_str());
  std::exit(2);
}

void parse_flag(const std::string& a) {
  if (a.rfind("--backend=", 0) == 0) {
    if (!parse_backend(a.substr(10), &g_options.backend)) usage(a + " is not one of " + backend_names());
    const std::string ready = backend_ready(g_options.backend);
    if (!ready.empty()) usage(a + ": " + ready);
  } else if (a.rfind("--max-arena-mb=", 0) == 0) {
    const long mb = std::strtol(a.c_str() + 15, nullptr, 10);
    if (mb < 1 || mb > 65536) usage(a + ": the limit must be in [1, 65536] MiB");
    g_options.max_arena_bytes = int64_t(mb) << 20;
  }
  // Other flags are libFuzzer's (or the replay driver's).
}

FusedKCase case_of(const uint8_t* data, size_t size, bool* decoded) {
  AnyCase any;
  FusedKCase c;
  *decoded = decode_any_case(data, size, {&fused_k_op()}, &any).empty() && from_any_case(any, &c).empty();
  if (*decoded) return c;
  uint64_t seed = 0;
  for (size_t i = 0; i < 8 && i < size; ++i) seed |= uint64_t(data[i]) << (8 * i);
  return draw_fused_k_case(seed);
}

[[noreturn]] void finding(const FusedKCase& c, const std::string& what) {
  std::fprintf(stderr, "\n==== qcheck fused_k finding ====\n%s\ncase (%s):\n%s\n", what.c_str(), describe(c).c_str(),
               any_case_to_json(to_any_case(c), true).c_str());
  qcheck::fuzzing::write_status_now();
  std::abort();
}

}  // namespace
}  // namespace qcheck::fused_k

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  if (argc != nullptr && argv != nullptr) {
    for (int i = 1; i < *argc; ++i) {
      if ((*argv)[i][0] == '-') qcheck::fused_k::parse_flag((*argv)[i]);
    }
  }
  return 0;
}

// libFuzzer's mutations, structure-aware: a case's fields changed through
// the op's metadata (core/op/any_mutate.h); one time in eight a fresh case
// drawn from a new seed, one in eight libFuzzer's own byte mutation (most of
// which the decoder or the validation refuse at once).
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  using namespace qcheck::fused_k;
  const uint64_t draw = (uint64_t{seed} << 32) ^ (size * 0x9E3779B97F4A7C15ull);
  if (seed % 8 == 7 && LLVMFuzzerMutate != nullptr) return LLVMFuzzerMutate(data, size, max_size);
  bool decoded = false;
  const FusedKCase start = seed % 8 == 6 ? draw_fused_k_case(draw) : case_of(data, size, &decoded);
  const std::vector<uint8_t> bytes =
      qcheck::encode_any_case(seed % 8 == 6 ? to_any_case(start) : qcheck::mutate_any_case(to_any_case(start), draw));
  if (bytes.size() > max_size) return size;
  std::memcpy(data, bytes.data(), bytes.size());
  return bytes.size();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace qcheck::fused_k;
  qcheck::fuzzing::count_execution();
  bool decoded = false;
  const FusedKCase c = case_of(data, size, &decoded);
  const FusedKVerdict v = check_fused_k_case(c, g_options.backend, g_options.max_arena_bytes);
  if (v.exit_code == 2) {
    if (!decoded && v.failure == "invalid") finding(c, "a drawn case is invalid: " + v.text);
    if (v.text.find('\n') != std::string::npos) finding(c, "the refusal is not one line: " + v.text);
    return -1;  // refused with a line naming the field, or over the budget: not kept
  }
  if (v.exit_code == 1) finding(c, "FAIL backend " + backend_name(g_options.backend) + ": " + v.text);
  if (v.exit_code != 0) finding(c, v.text);
  return 0;
}
