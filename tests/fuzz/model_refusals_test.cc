// The model refuses an invalid launch exactly as the oracle does: every
// variant returns the oracle's one-line message and writes nothing.
//
// Through run_verdict the oracle (and validate_case before it) refuses such a
// launch before any backend runs, and tests/harness covers those refusals of
// the Case. What is left is the model's own contract (ops/fused_q/cpu_model/cpu_model.h): it
// validates first, with the oracle's checks. So these tests take the harness's
// tensors and launch arguments for a valid Case, break the arguments the way
// a caller could, and call the model directly; one goes through the backend
// registry to show the refusal arrives as invalid input.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "fuzz/backends/backend.h"
#include "ops/fused_q/cpu_model/cpu_model.h"
#include "fuzz/buffers/tensors.h"
#include "numerics/profile.h"
#include "numerics/row_ops.h"
#include "ops/fused_q/oracle/fused_q_oracle.h"
#include "tests/fuzz/model_cases.h"

namespace qcheck::test {
namespace {

// True when every byte of every buffer (sentinels included) is the same.
bool same_bytes(const TensorSet& a, const TensorSet& b) {
  if (a.buffers.size() != b.buffers.size()) return false;
  for (size_t i = 0; i < a.buffers.size(); ++i) {
    const GuardedBuffer& x = a.buffers[i];
    const GuardedBuffer& y = b.buffers[i];
    if (x.size() != y.size() || std::memcmp(x.data(), y.data(), x.size()) != 0) return false;
  }
  return true;
}

struct Breakage {
  const char* what;
  void (*apply)(FusedQArgs&);
};

const Breakage kBreakages[] = {
    {"position outside the cache", [](FusedQArgs& a) { a.mqa_cache.rows = 1; }},
    {"indexer position outside its cache", [](FusedQArgs& a) { a.indexer_cache.rows = 1; }},
    {"odd rope_dim", [](FusedQArgs& a) { a.rope_dim = 15; }},
    {"negative num_tokens", [](FusedQArgs& a) { a.num_tokens = -1; }},
    {"null q_pe", [](FusedQArgs& a) { a.q_pe.data = nullptr; }},
    {"q_scale zero on fp8", [](FusedQArgs& a) { a.q_scale_bits = 0; }},
    {"outputs overlap", [](FusedQArgs& a) { a.index_q_fp8.data = a.query_out.data; }},
    {"input overlaps output", [](FusedQArgs& a) { a.q_pe.data = a.query_out.data; }},
    {"ql_nope overlaps with other strides",
     [](FusedQArgs& a) {
       a.ql_nope = {a.query_out.data, a.query_out.token_stride, a.query_out.head_stride + 1};
     }},
    {"query_out overlaps itself", [](FusedQArgs& a) { a.query_out.head_stride = 1; }},
};

TEST(CpuModelRefusals, EveryVariantRefusesWithTheOracleMessageAndWritesNothing) {
  int refusals = 0;
  for (QueryPath path : {QueryPath::kFp8Packed, QueryPath::kBf16Packed}) {
    const Case c = model_case([&](Case& c) { c.query_path = path; });
    ASSERT_EQ(validate_case(c), "");
    const TensorSet untouched = build_tensor_set(c, Poison::kA);
    for (const Breakage& breakage : kBreakages) {
      TensorSet oracle_set = untouched;
      FusedQArgs oracle_args = make_fused_q_args(c, oracle_set);
      breakage.apply(oracle_args);
      const std::string oracle_error =
          run_fused_q_oracle(oracle_args, qcheck_profile(), scalar_row_ops());
      if (path != QueryPath::kFp8Packed && std::string(breakage.what) == "q_scale zero on fp8") {
        EXPECT_EQ(oracle_error, "");  // q_scale is not read off the fp8 path
        continue;
      }
      ASSERT_NE(oracle_error, "") << breakage.what;
      EXPECT_EQ(oracle_error.find('\n'), std::string::npos) << oracle_error;
      for (const PlantedCpuBugInfo& info : planted_cpu_bugs()) {
        TensorSet set = untouched;
        FusedQArgs args = make_fused_q_args(c, set);
        breakage.apply(args);
        EXPECT_EQ(run_blocked_model(args, info.bug), oracle_error)
            << breakage.what << ", variant " << model_backend_name(info.backend_suffix);
        EXPECT_TRUE(same_bytes(untouched, set))
            << breakage.what << ", variant " << model_backend_name(info.backend_suffix);
        ++refusals;
      }
    }
  }
  EXPECT_GT(refusals, 0);
}

// A position that the case cannot produce (P itself), written into the
// harness's positions tensor: each model backend answers invalid input with
// the oracle's message and leaves every byte as it was.
TEST(CpuModelRefusals, BackendsReportARefusedPositionAsInvalidInput) {
  const Case c = model_base_case();
  TensorSet untouched = build_tensor_set(c, Poison::kA);
  const TensorGeometry* positions = untouched.find(TensorId::kPositions);
  ASSERT_NE(positions, nullptr);
  const int64_t outside = c.cache_rows;
  std::memcpy(untouched.element(*positions, c.num_tokens - 1, 0, 0), &outside, sizeof outside);
  TensorSet oracle_set = untouched;
  const std::string oracle_error =
      run_fused_q_oracle(make_fused_q_args(c, oracle_set), qcheck_profile(), scalar_row_ops());
  ASSERT_NE(oracle_error, "");
  for (const PlantedCpuBugInfo& info : planted_cpu_bugs()) {
    const Backend* b = find_backend(model_backend_name(info.backend_suffix));
    ASSERT_NE(b, nullptr) << model_backend_name(info.backend_suffix);
    TensorSet set = untouched;
    const Outcome outcome = b->run(c, qcheck_profile(), set);
    EXPECT_EQ(outcome.kind, OutcomeKind::kInvalidInput) << b->name;
    EXPECT_EQ(outcome.reason, oracle_error) << b->name;
    EXPECT_TRUE(same_bytes(untouched, set)) << b->name;
  }
}

}  // namespace
}  // namespace qcheck::test
