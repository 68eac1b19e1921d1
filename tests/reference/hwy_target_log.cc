// Prints, once per test binary, which Highway targets of the SIMD rows this
// run covers: CI machines differ, and a log without the targets cannot say
// what was tested. Linked into every reference test binary (an object
// library, so this registration is never dropped by the linker).
#include <cstdio>

#include "gtest/gtest.h"
#include "numerics/simd_rows.h"

namespace qcheck::test {
namespace {

class HighwayTargetLog : public ::testing::Environment {
 public:
  void SetUp() override {
    std::printf("[qcheck] Highway targets covered (compiled in and supported by this CPU): %s\n",
                simd_row_target_names().c_str());
    std::fflush(stdout);
  }
};

[[maybe_unused]] ::testing::Environment* const kLog =
    ::testing::AddGlobalTestEnvironment(new HighwayTargetLog);

}  // namespace
}  // namespace qcheck::test
