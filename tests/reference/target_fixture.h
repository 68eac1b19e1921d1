// Per-target instantiation of SIMD tests (Highway's hwy_gtest.h): every
// TEST_P of a suite derived from SimdTargetTest runs once per Highway target
// that numerics/simd_rows.cc compiled in and this CPU supports. The base
// fixture mocks the supported set (hwy::SetSupportedTargetsForTest), so the
// dispatching table simd_row_ops() reaches that target; SetUp checks that it
// does, and the test name carries the target name (e.g. .../AVX2).
#pragma once

#include <vector>

#include "hwy/tests/hwy_gtest.h"
#include "numerics/row_ops.h"
#include "numerics/simd_rows.h"

namespace qcheck::test {

class SimdTargetTest : public hwy::TestWithParamTarget {
 protected:
  void SetUp() override {
    hwy::TestWithParamTarget::SetUp();
    ASSERT_EQ(simd_row_dispatched_target(), GetParam())
        << "simd_row_ops() did not dispatch to the mocked target " << hwy::TargetName(GetParam());
  }
  // The dispatching table; under this fixture it runs GetParam()'s code.
  const RowOps& simd() const { return simd_row_ops(); }
  const char* target_name() const { return hwy::TargetName(GetParam()); }
};

// The direct table (no dispatch) of every target compiled in and supported.
// simd_row_ops_for_target knows the x86 targets and the fallbacks; any other
// target is a test failure here rather than a null dereference.
inline std::vector<const RowOps*> direct_target_tables() {
  std::vector<const RowOps*> tables;
  for (int64_t target : simd_row_targets()) {
    const RowOps* ops = simd_row_ops_for_target(target);
    if (ops == nullptr) {
      ADD_FAILURE() << "no direct row table for Highway target " << hwy::TargetName(target);
      continue;
    }
    tables.push_back(ops);
  }
  return tables;
}

}  // namespace qcheck::test

// The targets come from simd_rows.cc's own list (its HWY_TARGETS, which
// include the fallback and AVX3_DL), not from this file's.
#define QCHECK_INSTANTIATE_PER_TARGET(suite)                                          \
  INSTANTIATE_TEST_SUITE_P(Targets, suite, ::testing::ValuesIn(::qcheck::simd_row_targets()), \
                           ::hwy::TestParamTargetName)
