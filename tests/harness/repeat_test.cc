// repeat_backend: runs of one backend compared with each other, byte for byte.
#include <gtest/gtest.h>

#include "fuzz/backends/backend.h"
#include "fuzz/buffers/tensors.h"
#include "fuzz/verdict/repeat.h"
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

TEST(Repeat, AnInvalidCaseIsRefusedBeforeAnyRun) {
  Case c = test::small_case();
  c.rope_dim = 7;
  const RepeatResult r = repeat_backend(c, *find_backend("cpu-simd"), qcheck_profile(), 3);
  EXPECT_EQ(r.outcome.kind, OutcomeKind::kInvalidInput);
  EXPECT_EQ(r.runs, 0);
}

}  // namespace
}  // namespace qcheck
