// The planted fault a campaign must survive (PlantedBug::kWildWrite): the
// blocked kernel writes through a wild pointer when T % 16 == 7. On other T it
// passes; on T = 23 the launch faults and the verdict is a runtime error
// naming the CUDA error, never a crash or a pass. Its own process: the fault
// ends the CUDA context, so the fault comes last.
#include <cstdio>

#include <gtest/gtest.h>

#include "fuzz/backends/backend.h"
#include "fuzz/case/case.h"
#include "fuzz/verdict/verdict.h"

namespace qcheck {
namespace {

TEST(PlantedGpuFault, WildWriteIsARuntimeErrorOfItsInputOnly) {
  const Backend* backend = find_backend("cuda-blocked-bug-wild-write");
  ASSERT_NE(backend, nullptr);
  Case c = small_case();
  const std::string outside = backend->domain(c);
  if (!outside.empty()) GTEST_SKIP() << "no CUDA device: " << outside;
  c.num_tokens = 24;
  const Verdict clean = run_verdict(c, *backend);
  EXPECT_TRUE(clean.passed()) << verdict_text(clean, c);

  c.num_tokens = 23;
  const Verdict fault = run_verdict(c, *backend);
  EXPECT_EQ(fault.exit_code(), 3) << verdict_text(fault, c);
  EXPECT_NE(fault.outcome.reason.find("cudaError"), std::string::npos) << fault.outcome.reason;
  std::printf("%s\n", verdict_text(fault, c).c_str());
}

}  // namespace
}  // namespace qcheck
