// repeat_backend: runs of one backend compared with each other, byte for byte.
#include <gtest/gtest.h>

#include "fuzz/backends/backend.h"
#include "fuzz/buffers/tensors.h"
#include "fuzz/verdict/repeat.h"
#include "fuzz/verdict/verdict.h"
#include "tests/harness/case_samples.h"

namespace qcheck {
namespace {

TEST(Repeat, TheOracleGivesTheSameBytesEveryRun) {
  const Case c = test::small_case();
  const RepeatResult r = repeat_backend(c, *find_backend("cpu-simd"), qcheck_profile(), 5);
  ASSERT_TRUE(r.outcome.is_ok()) << r.outcome.reason;
  EXPECT_EQ(r.runs, 5);
  EXPECT_EQ(r.differing_runs, 0);
  EXPECT_EQ(r.first_differing, -1);
  EXPECT_TRUE(r.difference.passed());
}

// A backend that writes the oracle's outputs but, from its third run on,
// flips one bit of the first index_q_fp8 element: a race that shows rarely.
Backend flaky_backend() {
  Backend b = *find_backend("cpu-scalar");
  b.name = "flaky";
  b.run = [inner = b.run, calls = std::make_shared<int>(0)](const Case& c, const Profile& p, TensorSet& t) {
    const Outcome o = inner(c, p, t);
    if ((*calls)++ >= 2) *t.element(*t.find(TensorId::kIndexQFp8), 0, 0, 0) ^= 0x01;
    return o;
  };
  return b;
}

TEST(Repeat, ARunThatDiffersIsFoundAndLocated) {
  const Case c = test::small_case();
  const RepeatResult r = repeat_backend(c, flaky_backend(), qcheck_profile(), 4);
  ASSERT_TRUE(r.outcome.is_ok()) << r.outcome.reason;
  EXPECT_EQ(r.runs, 4);
  EXPECT_EQ(r.differing_runs, 2);
  EXPECT_EQ(r.first_differing, 2);
  ASSERT_EQ(r.difference.total, 1);
  const Mismatch& m = r.difference.first[0];
  EXPECT_EQ(m.signature.tensor, "index_q_fp8");
  EXPECT_EQ(m.token, 0);
  EXPECT_EQ(m.head, 0);
  EXPECT_EQ(m.dim, 0);
  EXPECT_EQ(m.expected_bits ^ m.got_bits, 0x01u);
}

// The verdict's race runs (VerdictOptions::race_runs): the flaky backend
// passes runs A and B, so only a third run shows its race.
Case race_sized_case(int64_t tokens) {
  Case c = test::small_case();
  c.num_tokens = tokens;
  c.cache_rows = 2048;
  return c;
}

TEST(Repeat, TheVerdictsRaceRunsFindARaceThatRunsAAndBMiss) {
  Backend flaky = flaky_backend();
  flaky.can_race = true;
  VerdictOptions options;
  options.race_runs = 2;
  const Verdict v = run_verdict(race_sized_case(kRaceRunsFromTokens), flaky, options);
  ASSERT_TRUE(v.outcome.is_ok()) << v.outcome.reason;
  ASSERT_FALSE(v.report.passed()) << "a difference in the third run is a finding";
  EXPECT_EQ(v.report.total, 1);
  const Mismatch& m = v.report.first[0];
  EXPECT_EQ(m.signature.mismatch, MismatchClass::kNondeterministic);
  EXPECT_EQ(m.signature.tensor, "index_q_fp8");
  EXPECT_EQ(m.run, 'R');
}

TEST(Repeat, NoRaceRunsOnSmallCasesOrBackendsThatCannotRace) {
  const auto racing = [] {  // a fresh one each time: its count of runs starts at 0
    Backend b = flaky_backend();
    b.can_race = true;
    return b;
  };
  VerdictOptions options;
  options.race_runs = 2;
  EXPECT_TRUE(run_verdict(race_sized_case(kRaceRunsFromTokens - 1), racing(), options).passed());
  EXPECT_TRUE(run_verdict(race_sized_case(kRaceRunsFromTokens), flaky_backend(), options).passed())
      << "can_race false: a CPU backend";
  EXPECT_TRUE(run_verdict(race_sized_case(kRaceRunsFromTokens), racing(), VerdictOptions{}).passed())
      << "race_runs 0: runs A and B only";
}

TEST(Repeat, AnInvalidCaseIsRefusedBeforeAnyRun) {
  Case c = test::small_case();
  c.rope_dim = 7;
  const RepeatResult r = repeat_backend(c, *find_backend("cpu-simd"), qcheck_profile(), 3);
  EXPECT_EQ(r.outcome.kind, OutcomeKind::kInvalidInput);
  EXPECT_EQ(r.runs, 0);
}

}  // namespace
}  // namespace qcheck
