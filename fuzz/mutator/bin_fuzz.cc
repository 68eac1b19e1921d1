#include "fuzz/mutator/bin_fuzz.h"

#include <chrono>
#include <vector>

#include "core/random/prng.h"
#include "fuzz/mutator/semantic_bins.h"

namespace qcheck::fuzzing {

BinFuzzResult fuzz_until_finding(const Backend& backend, const BinFuzzOptions& o) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  Xoshiro256 rng(mix_keys({0x62696E66757A7Aull /* "binfuzz" */, o.seed}));
  const Backend observed = observing_input_bins(backend);
  std::vector<Case> pool;
  std::vector<uint8_t> reached(static_cast<size_t>(bin_count()), 0);
  BinFuzzResult r;
  int64_t attempts = 0, limit_cases = 0, last_scheduled = -1;
  while (r.executions < o.max_executions && elapsed() < o.max_seconds && attempts < 4 * o.max_executions + 16) {
    ++attempts;
    Case c;
    const size_t n = pool.size();
    // A limit or race case is not kept in the pool: its mutations would be
    // shrunk anyway, and a race case is made anew each time.
    const bool due = last_scheduled != r.executions;
    const bool scheduled = due && (next_limit_case(o.budget, r.executions, rng, &limit_cases, &c) ||
                                   next_race_case(o.budget, backend.can_race, r.executions, rng, &c));
    if (scheduled) {
      last_scheduled = r.executions;
    } else if (n == 0 || r.executions % 16 == 0) {
      c = seed_case(rng, o.budget);
    } else if (n > 1 && r.executions % 8 == 1) {
      c = cross_over(pool[rng.below(n)], pool[rng.below(n)], rng, o.budget);
    } else {
      c = pool[rng.below(n)];
      mutate_case(c, rng, o.budget);
    }
    if (backend.fit) backend.fit(c);
    if (!validate_case(c).empty()) continue;
    clear_last_bins();
    Verdict v = run_verdict(c, observed, o.verdict);
    if (v.outcome.kind == OutcomeKind::kInvalidInput) continue;
    ++r.executions;
    if (!v.passed()) {
      r.found = true;
      r.seconds = elapsed();
      r.finding = c;
      r.failure = v.outcome.is_ok() ? v.report.primary_signature().text() : "runtime error: " + v.outcome.reason;
      r.verdict = std::move(v);
      break;
    }
    mark_case_bins(c);
    mark_verdict_bins(v);
    const uint8_t* marked = last_bins();
    bool fresh = false;
    for (size_t i = 0; i < reached.size(); ++i) {
      if (marked[i] != 0 && reached[i] == 0) reached[i] = 1, fresh = true;
    }
    if (fresh && !scheduled) pool.push_back(c);
  }
  if (!r.found) r.seconds = elapsed();
  for (uint8_t b : reached) r.bins_reached += b;
  return r;
}

}  // namespace qcheck::fuzzing
