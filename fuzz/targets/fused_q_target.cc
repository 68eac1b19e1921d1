// Fuzz target `fused_q`: bytes -> Case (the strict binary decoder, or JSON
// when the bytes start with '{') ->
// run_verdict on one backend (fuzz/verdict/verdict.h: the whole data path). Options:
// fuzz/targets/fused_q_options.h.
//
// What counts as a finding: a mismatch (the verdict's report is printed, then
// abort() so libFuzzer saves the input as a crash artifact) and a runtime
// error (a CUDA error, a backend that stopped working). Invalid input is not
// a finding: the case is refused (-1, libFuzzer does not keep it), as is a
// case above the size budget. Neither is a failure that --known covers: the
// first of each known entry is printed ("qcheck fused_q known bug"), the
// rest only counted, and the run goes on. Nor is memory the harness runs out
// of: the device mirror retries an out-of-memory run alone (with
// QCHECK_GPU_LEDGER, fuzz/admission/gpu_ledger.h), and a case that fails even
// alone is a memory note ("qcheck fused_q memory note"), counted in the
// status file, not kept.
//
// The structure-aware mutator and cross-over (case_mutator.h) keep nearly
// every input a valid small case; the semantic bins (semantic_bins.h) give
// libFuzzer feedback about the numeric situations reached.
//
// Run it with -len_control=0: libFuzzer otherwise starts with 4-byte
// mutations, far shorter than any case (about 110 bytes).
#include <malloc.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/random/prng.h"
#include "fuzz/buffers/device_mirror.h"
#include "fuzz/case/case_binary.h"
#include "fuzz/case/case_file.h"
#include "fuzz/case/case_json.h"
#include "fuzz/case/tensor_plan.h"
#include "fuzz/mutator/case_mutator.h"
#include "fuzz/mutator/semantic_bins.h"
#include "fuzz/targets/fused_q_options.h"
#include "fuzz/targets/fuzz_entry.h"
#include "fuzz/targets/status_file.h"
#include "fuzz/verdict/phase_times.h"
#include "fuzz/verdict/verdict.h"

namespace {

using qcheck::Case;
namespace fz = qcheck::fuzzing;

fz::FusedQOptions g_options;
fz::SizeBudget g_budget = fz::kDefaultBudget;
bool g_initialized = false;
qcheck::PhaseTimes g_times;  // filled only with --phase-times
qcheck::Backend g_observed;  // the chosen backend, seen through observing_input_bins

void initialize(int argc, char** argv) {
  if (g_initialized) return;
  g_initialized = true;
  const std::string error = fz::parse_fused_q_options(argc, argv, &g_options);
  if (!error.empty()) {
    std::fprintf(stderr, "fused_q: %s\n", error.c_str());
    std::exit(2);
  }
  const std::string why = g_options.backend->domain(Case{});
  if (!why.empty()) {
    std::fprintf(stderr, "fused_q: backend %s cannot run here: %s\n", g_options.backend->name.c_str(),
                 why.c_str());
    std::exit(3);
  }
  g_budget = *fz::case_size_budget(g_options.case_size);
  g_budget.usual.bytes = std::min(g_budget.usual.bytes, g_options.max_case_bytes);
  g_budget.large.bytes = std::min(g_budget.large.bytes, g_options.max_case_bytes);
  std::fprintf(stderr, "fused_q: %s\n", fz::describe(g_options).c_str());
  fz::print_bins_at_exit_if_asked();
  if (g_options.phase_times) {
    g_options.verdict.times = &g_times;
    std::atexit([] { std::fputs(g_times.text().c_str(), stderr); });
  }
  g_observed = g_options.input_bins ? fz::observing_input_bins(*g_options.backend, g_options.verdict.times)
                                    : *g_options.backend;
  // A run waiting for its turn in the GPU ledger says so in the status file.
  qcheck::set_device_wait_reporter(fz::set_waiting);
}

// A case that needs more device memory than the device has, even alone
// (fuzz/buffers/device_mirror.h): memory the harness cannot have is not a bug
// of the kernel. Noted (the first few with the case), counted, not kept.
constexpr int kMemoryNotesPrinted = 5;
void note_memory(const qcheck::Verdict& verdict, const Case& c) {
  static int printed = 0;
  fz::count_memory_note();
  if (printed++ >= kMemoryNotesPrinted) return;
  std::fprintf(stderr, "\n==== qcheck fused_q memory note (not a finding): %s\ncase (JSON):\n%s\n====\n",
               verdict.outcome.reason.c_str(), qcheck::case_to_json(c).c_str());
}

std::string replay_command(const qcheck::VerdictOptions& v) {
  std::string command = "qcheck-replay ARTIFACT --backend " + g_options.backend->name;
  if (v.graph) command += " --graph";
  if (!v.profile.empty()) command += " --profile " + v.profile;
  command += v.oracle_rows == qcheck::OracleRows::kScalar ? " --oracle scalar" : " --oracle simd";
  return command;
}

[[noreturn]] void report_finding(const qcheck::Verdict& verdict, const Case& c, const qcheck::VerdictOptions& v) {
  std::fprintf(stderr, "\n==== qcheck fused_q finding ====\n%s", qcheck::verdict_text(verdict, c).c_str());
  std::fprintf(stderr, "case (JSON):\n%s\n", qcheck::case_to_json(c).c_str());
  std::fprintf(stderr, "replay: %s\n==== end of finding ====\n", replay_command(v).c_str());
  std::fflush(stderr);
  fz::write_status_now();
  std::abort();
}

// True when --known covers the verdict's failure: printed the first time
// for each entry (with the case), so a latent bug neither stops the worker
// nor hides the next one.
bool known_failure(qcheck::Verdict verdict, const Case& c) {
  if (g_options.known.empty()) return false;
  qcheck::classify_verdict(g_options.known, c, &verdict);
  if (verdict.known < 0) return false;
  static std::vector<int64_t> seen(g_options.known.size(), 0);
  if (seen[verdict.known]++ == 0) {
    std::fprintf(stderr, "\n==== qcheck fused_q known bug %d (%s) met: %s; not a finding, first case:\n%s\n====\n",
                 verdict.known, verdict.known_note.c_str(), verdict.group.c_str(), qcheck::case_to_json(c).c_str());
  }
  return true;
}

size_t write_case(Case c, uint8_t* out, size_t max_size) {
  // A plugin's cases stay inside its declared domain.
  if (g_options.backend != nullptr && g_options.backend->fit) g_options.backend->fit(c);
  const std::vector<uint8_t> bytes = qcheck::encode_case(c);
  // Only without -len_control=0 can the room be short; the cut bytes are
  // then refused by the decoder.
  const size_t n = std::min(bytes.size(), max_size);
  std::memcpy(out, bytes.data(), n);
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  initialize(*argc, *argv);
#ifdef M_MMAP_THRESHOLD
  // Every execution allocates and frees three tensor sets of up to a few
  // MiB. glibc serves blocks over 128 KiB with fresh mmaps, so each one
  // page-faulted in anew (about 5% of an execution); keep them in the heap.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  initialize(0, nullptr);
  qcheck::fuzzing::count_execution();
  // Binary (what libFuzzer mutates) or JSON (hand-written regressions and
  // examples replayed through this target): the form of a case file.
  const qcheck::VerdictOptions options = g_options.verdict;
  if (options.times != nullptr) ++options.times->executions;
  Case c;
  {
    qcheck::PhaseTimer timer(options.times, qcheck::Phase::kDecode);
    if (!qcheck::parse_case_bytes(std::vector<uint8_t>(data, data + size), &c).empty()) return -1;
    if (!qcheck::validate_case(c).empty()) return -1;
    if (qcheck::plan_tensors(c).total_bytes() > g_options.max_case_bytes) return -1;
  }
  const qcheck::Verdict verdict = qcheck::run_verdict(c, g_observed, options);
  {
    qcheck::PhaseTimer timer(options.times, qcheck::Phase::kBins);
    fz::mark_case_bins(c);
    fz::mark_verdict_bins(verdict);
  }
  if (verdict.outcome.kind == qcheck::OutcomeKind::kInvalidInput) return -1;
  if (verdict.outcome.kind == qcheck::OutcomeKind::kRuntimeError &&
      verdict.outcome.reason.rfind(qcheck::kNeedsMoreMemory, 0) == 0) {
    note_memory(verdict, c);
    return -1;
  }
  if (verdict.passed() || known_failure(verdict, c)) return 0;
  if (!verdict.outcome.is_ok() || !g_options.keep_going) report_finding(verdict, c, options);
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  qcheck::Xoshiro256 rng(qcheck::mix_keys({0x6D757461746F72ull, seed}));
  // --case-size=limit: now and then a case at the hardware's limits, in
  // place of a mutation (case_mutator.h next_limit_case).
  // On a backend that can race, now and then a race case (next_race_case).
  static int64_t mutations = 0, limit_cases = 0;
  const int64_t mutation = mutations++;
  Case c;
  if (fz::next_limit_case(g_budget, mutation, rng, &limit_cases, &c) ||
      fz::next_race_case(g_budget, g_options.backend->can_race, mutation, rng, &c)) {
    return write_case(c, data, max_size);
  }
  const bool decoded = qcheck::decode_case(data, size, &c).empty();
  if (!decoded) return write_case(fz::seed_case(rng, g_budget), data, max_size);
  // Now and then libFuzzer's own byte mutation (dictionary entries such as
  // interesting fp32 patterns, comparison operands), kept when it still
  // decodes; then repaired like every other case.
  if (LLVMFuzzerMutate != nullptr && rng.one_in(8)) {
    const size_t n = LLVMFuzzerMutate(data, size, max_size);
    Case mutated;
    if (qcheck::decode_case(data, n, &mutated).empty()) {
      fz::repair_case(mutated, g_budget.large);
      return write_case(mutated, data, max_size);
    }
  }
  fz::mutate_case(c, rng, g_budget);
  return write_case(c, data, max_size);
}

extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t* data1, size_t size1, const uint8_t* data2,
                                            size_t size2, uint8_t* out, size_t max_out_size,
                                            unsigned int seed) {
  qcheck::Xoshiro256 rng(qcheck::mix_keys({0x63726F7373ull, seed}));
  Case a, b;
  if (!qcheck::decode_case(data1, size1, &a).empty()) a = fz::seed_case(rng, g_budget);
  if (!qcheck::decode_case(data2, size2, &b).empty()) b = fz::seed_case(rng, g_budget);
  return write_case(fz::cross_over(a, b, rng, g_budget), out, max_out_size);
}
