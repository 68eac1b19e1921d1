#include "fuzz/verdict/verdict.h"

#include <unistd.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "fuzz/verdict/compare.h"
#include "fuzz/verdict/judge.h"
#include "ops/fused_q/oracle/fused_q_oracle.h"

namespace qcheck {

int Verdict::exit_code() const {
  if (!outcome.is_ok()) return exit_code_of(outcome.kind);
  return report.passed() ? 0 : 1;
}

TensorSet expected_tensors(const Case& c, const Profile& profile, const RowOps& rows, Poison poison,
                           std::string* error) {
  return expected_tensors(c, profile, rows, build_tensor_set(c, poison), error);
}

TensorSet expected_tensors(const Case& c, const Profile& profile, const RowOps& rows, TensorSet blank,
                           std::string* error) {
  *error = run_fused_q_oracle(make_fused_q_args(c, blank), profile, rows);
  return blank;
}

namespace {

// "" when the host has room for the verdict's three tensor sets (expected
// and two runs) of `c`, else why not: a large case (up to 8 GiB of tensors)
// must end in a report, not in the kernel's out-of-memory killer.
std::string host_memory_problem(const Case& c) {
  const uint64_t need = 3 * plan_tensors(c).total_bytes();
  // Asking the kernel costs tens of microseconds (it reads /proc/meminfo),
  // a lot per fuzz execution; cases under 256 MiB are not worth the question.
  if (need < (uint64_t(256) << 20)) return "";
  const long pages = sysconf(_SC_AVPHYS_PAGES), page_bytes = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_bytes <= 0) return "";  // unknown: try
  const uint64_t available = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_bytes);
  if (need <= available) return "";
  return "the case needs " + std::to_string(need) + " bytes of host memory (three sets of " +
         std::to_string(need / 3) + " bytes), the host has " + std::to_string(available) + " available";
}

}  // namespace

void take_judgement(Judgement&& j, Verdict* v) {
  v->report = std::move(j.report);
  v->judged_under = std::move(j.profile);
  v->explaining = std::move(j.explaining);
  v->explanation = std::move(j.explanation);
}

void add_graph_replay(const Case& c, const TensorSet& run_a, const TensorSet& replayed, Verdict* v) {
  v->graph = true;
  v->report.merge(
      compare_identical(c, run_a, replayed, MismatchClass::kGraphReplayDiffers, 'G', v->report.max_listed));
}

std::string verdict_profile(const Case& c, const Backend& backend, const VerdictOptions& options) {
  return !options.profile.empty()         ? options.profile
         : !backend.fixed_profile.empty() ? backend.fixed_profile
                                          : c.profile;
}

Verdict run_verdict(const Case& c, const Backend& backend, const VerdictOptions& options, TensorSet* run_a) {
  Verdict v;
  v.backend = backend.name;
  v.planted_bug = backend.planted_bug;
  v.graph = options.graph;
  v.profile = verdict_profile(c, backend, options);
  v.report.max_listed = options.max_listed;
  std::string error = validate_case(c);
  if (!error.empty()) {
    v.outcome = Outcome::invalid_input(error);
    return v;
  }
  // Under auto the backend runs as it would without it (an oracle backend
  // follows the case's profile); the judge tries every profile after.
  const std::string run_profile =
      v.profile != kAutoProfile ? v.profile : verdict_profile(c, backend, VerdictOptions{});
  Profile profile;
  if (!find_profile(run_profile, &profile)) {
    v.outcome = Outcome::invalid_input("profile \"" + run_profile + "\" is not a known profile (" +
                                       known_profiles() + ")");
    return v;
  }
  error = backend.domain(c);
  if (!error.empty()) {
    v.outcome = Outcome::runtime_error("backend " + backend.name + " cannot run here: " + error);
    return v;
  }
  error = host_memory_problem(c);
  if (!error.empty()) {
    v.outcome = Outcome::runtime_error(error);
    return v;
  }
  // The backend's sets are copies of the expected set taken before the
  // oracle runs: the same inputs, guards and poison, byte for byte.
  PhaseTimes* times = options.times;
  TensorSet expected, got_a, got_b;
  {
    PhaseTimer timer(times, Phase::kInputs);
    InputTimes* split = times != nullptr ? &times->inputs : nullptr;
    expected = build_tensor_set(c, Poison::kA, split);
    const InputTimer copies(split, InputPart::kCopies);
    got_a = expected;
    got_b = expected;
    fill_poison(got_b, Poison::kB);
  }
  // Inputs the oracle refuses (a position outside the cache) never reach
  // the backend.
  error = check_oracle_inputs(make_fused_q_args(c, expected));
  if (!error.empty()) {
    v.outcome = Outcome::invalid_input(error);
    return v;
  }
  if (options.graph && !backend.run_in_graph) {
    v.outcome = Outcome::invalid_input("backend " + backend.name +
                                       " has no CUDA graph launch (graph replay: the CUDA backends and CUDA plugins)");
    return v;
  }
  const int race_runs = backend.can_race && c.num_tokens >= kRaceRunsFromTokens ? options.race_runs : 0;
  TensorSet unrun;  // run A's set before the run, for the race runs
  if (race_runs > 0) unrun = got_a;
  for (TensorSet* got : {&got_a, &got_b}) {
    PhaseTimer timer(times, got == &got_a ? Phase::kBackendA : Phase::kBackendB);
    v.outcome = backend.run(c, profile, *got);
    if (!v.outcome.is_ok()) return v;
  }
  TensorSet got_graph;
  if (options.graph) {
    PhaseTimer timer(times, Phase::kBackendB);
    got_graph = expected;  // (still as built: the oracle has not filled it yet)
    v.outcome = backend.run_in_graph(c, profile, got_graph);
    if (!v.outcome.is_ok()) return v;
  }
  if (run_a != nullptr) *run_a = got_a;
  const RowOps& rows = options.oracle_rows == OracleRows::kSimd ? simd_row_ops() : scalar_row_ops();
  Judgement judgement;
  error = judge_runs(c, v.profile, rows, got_a, got_b, options.max_listed, &expected, times, &judgement);
  if (!error.empty()) {
    v.outcome = Outcome::invalid_input(error);
    return v;
  }
  take_judgement(std::move(judgement), &v);
  if (options.graph) add_graph_replay(c, got_a, got_graph, &v);
  for (int run = 0; run < race_runs && v.report.passed(); ++run) {
    PhaseTimer timer(times, Phase::kBackendB);
    TensorSet again = unrun;
    v.outcome = backend.run(c, profile, again);
    if (!v.outcome.is_ok()) return v;
    v.report.merge(compare_identical(c, got_a, again, MismatchClass::kNondeterministic, 'R', options.max_listed));
  }
  return v;
}

namespace {

std::string header(const Verdict& v) {
  std::ostringstream s;
  switch (v.outcome.kind) {
    case OutcomeKind::kInvalidInput: return "INVALID INPUT: " + v.outcome.reason;
    case OutcomeKind::kRuntimeError: return "RUNTIME ERROR: " + v.outcome.reason;
    case OutcomeKind::kOk: break;
  }
  s << (v.report.passed() ? "PASS" : "FAIL") << " backend " << v.backend
    << (v.planted_bug ? " (planted bug)" : "") << ", profile " << v.profile;
  if (v.graph) s << ", graph replay against eager";
  if (!v.judged_under.empty() && v.judged_under != v.profile) s << " (report under " << v.judged_under << ")";
  if (!v.report.passed()) s << ": " << v.report.total << " mismatches";
  return s.str();
}

}  // namespace

std::string verdict_text(const Verdict& v, const Case& c) {
  std::string text = header(v) + "\ncase: " + describe(c) + "\n";
  for (const std::string& line : v.explanation) text += line + "\n";
  if (v.outcome.is_ok()) text += report_text(v.report);
  if (v.known >= 0) {
    text += "KNOWN: " + v.group + " is covered by known bug " + std::to_string(v.known) + " [" +
            v.known_signature + "]" + (v.known_note.empty() ? "" : " (" + v.known_note + ")") + "\n";
  }
  return text;
}

std::string verdict_json(const Verdict& v, const Case& c) {
  nlohmann::ordered_json j;
  j["verdict"] = !v.outcome.is_ok()  ? name_of(v.outcome.kind)
                 : v.report.passed() ? "pass"
                                     : "mismatch";
  j["exit_code"] = v.exit_code();
  j["reason"] = v.outcome.reason;
  j["backend"] = v.backend;
  j["planted_bug"] = v.planted_bug;
  j["graph"] = v.graph;
  j["profile"] = v.profile;
  j["judged_under"] = v.judged_under;
  j["profiles"] = v.explaining;
  j["explanation"] = v.explanation;
  j["case"] = describe(c);
  j["group"] = v.group;
  j["known"] = v.known;
  j["known_note"] = v.known_note;
  if (v.outcome.is_ok()) {
    const Report& r = v.report;
    j["total"] = r.total;
    j["bytes_compared"] = r.bytes_compared;
    j["primary_signature"] = r.passed() ? "" : r.primary_signature().text();
    nlohmann::ordered_json counts = nlohmann::ordered_json::array();
    for (const auto& [signature, count] : r.counts) {
      counts.push_back({{"tensor", signature.tensor},
                        {"part", signature.part},
                        {"class", name_of(signature.mismatch)},
                        {"count", count}});
    }
    j["counts"] = counts;
    nlohmann::ordered_json first = nlohmann::ordered_json::array();
    for (const Mismatch& m : r.first) {
      first.push_back({{"signature", m.signature.text()},
                       {"run", std::string(1, m.run)},
                       {"token", m.token},
                       {"head", m.head},
                       {"dim", m.dim},
                       {"byte_offset", m.byte_offset},
                       {"type", name_of(m.type)},
                       {"expected_bits", m.expected_bits},
                       {"got_bits", m.got_bits},
                       {"expected", value_text(m.type, m.expected_bits)},
                       {"got", value_text(m.type, m.got_bits)}});
    }
    j["first"] = first;
  }
  return j.dump(2) + "\n";
}

}  // namespace qcheck
