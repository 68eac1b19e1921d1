// The minimizer (fuzz/minimize/minimize.h) on the planted bugs of the CPU model: from
// a random failing case it reaches the smallest case that still shows the
// bug, keeps the failure at every step, and refuses to slip to another one.
// Prints the reduction table (elements before and after, verdicts, time)
// that tools/fuzz_campaign/README.md quotes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/random/prng.h"
#include "fuzz/backends/backend.h"
#include "fuzz/buffers/tensors.h"
#include "fuzz/case/case_file.h"
#include "fuzz/minimize/minimize.h"
#include "fuzz/mutator/case_mutator.h"

namespace qcheck {
namespace {

// The first random case (the mutator's seed cases, default sizes) that
// fails on `backend` (with a primary signature that starts with `failure`,
// when given): a stand-in for what the fuzzer hands over.
Case first_failing_case(const Backend& backend, uint64_t* seed_used, const std::string& failure = "") {
  for (uint64_t seed = 1; seed < 5000; ++seed) {
    Xoshiro256 rng(seed);
    Case c = fuzzing::seed_case(rng);
    c.profile = "qcheck";
    const Verdict v = run_verdict(c, backend);
    if (!v.passed() && v.report.primary_signature().text().rfind(failure, 0) == 0) {
      *seed_used = seed;
      return c;
    }
  }
  ADD_FAILURE() << "no failing case for " << backend.name;
  return {};
}

MinimizeResult minimize_bug(const std::string& name, const std::string& failure = "") {
  const Backend* backend = find_backend(name);
  EXPECT_NE(backend, nullptr) << name;
  if (backend == nullptr) return {};
  uint64_t seed = 0;
  const Case original = first_failing_case(*backend, &seed, failure);
  // QCHECK_TEST_CASES=DIR keeps each starting case, for qcheck-minimize by hand.
  if (const char* dir = std::getenv("QCHECK_TEST_CASES")) {
    save_case_file(std::string(dir) + "/" + name + ".json", original, CaseForm::kJson);
  }
  const Evaluate evaluate = evaluate_in_process(*backend, {});
  const Observation target = evaluate(original);
  EXPECT_EQ(target.exit_code, 1) << target.text();
  MinimizeOptions options;
  options.budget_seconds = 120;
  const MinimizeResult r = minimize(original, target, evaluate, options);
  EXPECT_FALSE(r.budget_exhausted) << name << " did not reach its fixpoint";
  // The result fails as claimed, and every accepted step was checked.
  EXPECT_EQ(evaluate(r.minimized), r.target) << describe(r.minimized);
  std::printf("[ minimized ] %-44s seed case %llu: %s\n  -> %s\n  keeps %s\n", name.c_str(),
              static_cast<unsigned long long>(seed), describe(original).c_str(), describe(r.minimized).c_str(),
              r.target.text().c_str());
  return r;
}

// Nonzero input elements of a case (after its edits).
int64_t nonzero_elements(const Case& c, TensorId id) {
  const TensorSet set = build_tensor_set(c, Poison::kA);
  const TensorGeometry* g = set.find(id);
  if (g == nullptr) return 0;
  int64_t n = 0;
  for (int64_t row = 0; row < g->rows; ++row) {
    for (int64_t head = 0; head < g->cols; ++head) {
      for (int64_t i = 0; i < g->width; ++i) {
        const uint8_t* p = set.element(*g, row, head, i);
        uint32_t bits = 0;
        std::memcpy(&bits, p, static_cast<size_t>(element_bytes(g->type)));
        n += bits != 0;
      }
    }
  }
  return n;
}

TEST(Minimize, MissingTailTokenShrinksToTheSmallestTailWithoutTheIndexer) {
  const MinimizeResult r = minimize_bug("cpu-model-bug-skip-last-tail-token");
  // T = 1 is the smallest failing tail: the tail block of one token is left out.
  EXPECT_EQ(r.minimized.num_tokens, 1);
  EXPECT_EQ(r.minimized.mqa_heads, 1);
  EXPECT_FALSE(r.minimized.has_indexer);
  EXPECT_NE(r.target.failure.find("/unwritten"), std::string::npos) << r.target.failure;
}

TEST(Minimize, SwappedIndexerRopeShrinksToOneTokenAndOneIndexerHead) {
  // The swap shows in the RoPE'd codes (in a scale-band case it can show as
  // a weight off by a power of two first: that failure is another test's).
  const MinimizeResult r = minimize_bug("cpu-model-bug-swapped-indexer-rope", "index_q_fp8/rope part/");
  EXPECT_EQ(r.minimized.num_tokens, 1);
  EXPECT_EQ(r.minimized.indexer_heads, 1);
  EXPECT_EQ(r.minimized.mqa_heads, 1);
  EXPECT_TRUE(r.minimized.has_indexer);
  // NeoX and interleaved pair the same elements when R = 2: the swap needs
  // R >= 4 (how much more depends on the values the failure came with).
  EXPECT_GE(r.minimized.rope_dim, 4);
  EXPECT_LE(r.minimized.rope_dim, 8);
  EXPECT_EQ(r.target.failure.rfind("index_q_fp8/rope part/", 0), 0u) << r.target.failure;
}

TEST(Minimize, ScaleRuleShrinksToOneTokenOneHeadAndOneEngineeredRow) {
  const MinimizeResult r = minimize_bug("cpu-model-bug-log2f-scale");
  EXPECT_EQ(r.minimized.num_tokens, 1);
  EXPECT_EQ(r.minimized.mqa_heads, 1);
  EXPECT_EQ(r.minimized.indexer_heads, 1);
  EXPECT_TRUE(r.minimized.has_indexer);
  EXPECT_NE(r.target.failure.find("row-power-of-two"), std::string::npos) << r.target.failure;
  // The engineered row: the indexer row is zero but for the element that
  // sets the scale, and the query inputs are all zero.
  EXPECT_LE(nonzero_elements(r.minimized, TensorId::kIndexQ), 2);
  EXPECT_EQ(nonzero_elements(r.minimized, TensorId::kQPe), 0);
}

TEST(Minimize, OtherPlantedBugsShrinkToOneTokenAndOneHead) {
  for (const char* bug : {"cpu-model-bug-truncating-bf16", "cpu-model-bug-skip-copy-unaliased",
                          "cpu-model-bug-unit-weights-column"}) {
    const MinimizeResult r = minimize_bug(bug);
    EXPECT_EQ(r.minimized.num_tokens, 1) << bug;
    EXPECT_EQ(r.minimized.mqa_heads, 1) << bug;
    EXPECT_LT(r.elements_after * 10, r.elements_before) << bug << ": less than 10x smaller";
  }
}

// A backend whose failure changes with T: from T = 8 on it writes one wrong
// value, below T = 8 it writes past the end of query_out. Shrinking T
// further than 8 would trade the bug for another: the minimizer stops at 8.
TEST(Minimize, SignatureDriftIsRefused) {
  Backend drift = *find_backend("cpu-scalar");
  drift.name = "test-drift";
  drift.planted_bug = true;
  drift.run = [inner = drift.run](const Case& c, const Profile& p, TensorSet& t) {
    const Outcome o = inner(c, p, t);
    const TensorGeometry* g = t.find(TensorId::kQueryOut);
    if (c.num_tokens >= 8) {
      *t.element(*g, 0, 0, 0) ^= 0x40;
    } else {
      t.buffers[g->buffer].data()[t.buffers[g->buffer].size() - 1] ^= 0xFF;  // the back sentinel
    }
    return o;
  };
  Case c = small_case();
  c.num_tokens = 20;
  const Evaluate evaluate = evaluate_in_process(drift, {});
  const Observation target = evaluate(c);
  ASSERT_EQ(target.exit_code, 1);
  ASSERT_EQ(target.failure.find("sentinel"), std::string::npos) << target.failure;
  const MinimizeResult r = minimize(c, target, evaluate);
  EXPECT_EQ(r.minimized.num_tokens, 8) << "T below 8 shows a sentinel write, not the original wrong value";
  EXPECT_EQ(r.target, target);
  bool refused_below = false;
  for (const FieldEffect& e : r.explain) {
    if (e.change == "T 8 -> 7") refused_below = e.matters && e.observed.failure.find("sentinel") != std::string::npos;
  }
  EXPECT_TRUE(refused_below) << "the explain phase shows that T = 7 fails otherwise";
}

// The swapped style fails on the indexer only: turning the indexer off
// passes (it matters), one more MQA head fails the same (it does not).
TEST(Minimize, ExplainSaysWhichFieldsMatter) {
  const Backend* backend = find_backend("cpu-model-bug-swapped-indexer-rope");
  ASSERT_NE(backend, nullptr);
  uint64_t seed = 0;
  const Case original = first_failing_case(*backend, &seed);
  const Evaluate evaluate = evaluate_in_process(*backend, {});
  const MinimizeResult r = minimize(original, evaluate(original), evaluate);
  int checked = 0;
  for (const FieldEffect& e : r.explain) {
    if (e.field == "has_indexer") {
      EXPECT_TRUE(e.matters) << e.change;
      EXPECT_EQ(e.observed.exit_code, 0) << e.observed.text();
      ++checked;
    }
    if (e.field == "H") {
      EXPECT_FALSE(e.matters) << e.change << ": " << e.observed.text();
      ++checked;
    }
  }
  EXPECT_EQ(checked, 2);
}

// The measurement over the planted bugs of the CPU model: elements before
// and after, verdicts (oracle calls) and time, median and worst reduction
// (tools/fuzz_campaign/README.md quotes this table).
TEST(Minimize, ReductionTable) {
  std::vector<double> ratios;
  std::vector<int> verdicts;
  std::printf("\n| planted bug | elements before | after | ratio | verdicts | seconds |\n|---|---|---|---|---|---|\n");
  for (const char* bug : {"cpu-model-bug-skip-last-tail-token", "cpu-model-bug-swapped-indexer-rope",
                          "cpu-model-bug-log2f-scale", "cpu-model-bug-truncating-bf16",
                          "cpu-model-bug-skip-copy-unaliased", "cpu-model-bug-unit-weights-column"}) {
    const MinimizeResult r = minimize_bug(bug);
    const double ratio = double(r.elements_before) / double(std::max<int64_t>(1, r.elements_after));
    ratios.push_back(ratio);
    verdicts.push_back(r.evaluations);
    std::printf("| %s | %lld | %lld | %.0fx | %d | %.3f |\n", bug, static_cast<long long>(r.elements_before),
                static_cast<long long>(r.elements_after), ratio, r.evaluations, r.seconds);
    EXPECT_GE(ratio, 2.0) << bug << " barely shrank";
  }
  std::sort(ratios.begin(), ratios.end());
  std::sort(verdicts.begin(), verdicts.end());
  std::printf("median reduction %.0fx, worst %.0fx; median %d verdicts, most %d\n", ratios[ratios.size() / 2],
              ratios.front(), verdicts[verdicts.size() / 2], verdicts.back());
}

}  // namespace
}  // namespace qcheck

namespace qcheck {
namespace {

// The determinism gate lets a case through whose bytes differ from run to
// run when its failure does not (the CUDA tail bug's out-of-bounds writes),
// and never a failure that is the runs differing, or one that moves.
TEST(Minimize, AFailureThatHoldsAcrossRunsIsMinimizedThoughTheBytesDiffer) {
  Observation guards;
  guards.exit_code = 1;
  guards.failure = "index_q_fp8/sentinel after/sentinel-overwritten";
  EXPECT_TRUE(failure_holds_across_runs(guards, {guards, guards}));
  Observation moved = guards;
  moved.failure = "index_q_fp8/rope part/wrong-value";
  EXPECT_FALSE(failure_holds_across_runs(guards, {guards, moved}));
  Observation passed;
  EXPECT_FALSE(failure_holds_across_runs(guards, {passed}));
  Observation race;
  race.exit_code = 1;
  race.failure = "query_out/rope tail/nondeterministic";
  EXPECT_FALSE(failure_holds_across_runs(race, {race, race}));
  EXPECT_FALSE(failure_holds_across_runs(guards, {}));
}

}  // namespace
}  // namespace qcheck
