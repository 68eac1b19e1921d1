// The reduction orders against sums a GPU gave: rows Triton 3.6 summed on an
// H100 (sm_90) with tl.sum(x) and tl.sum(x * x) over a masked block, kept
// with their inputs in data/triton_sm90_sums.txt (the layout the compiler
// chose, read from its TTGIR, on each line). kTritonBlock must give every
// one of them; a sum with rounded squares must not give every square sum
// (the PTX contracts them), so the data can tell the conventions apart.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "numerics/float_bits.h"
#include "numerics/reduction.h"

namespace qcheck::spec {
namespace {

struct MeasuredSums {
  int64_t n = 0, block = 0;
  int size_per_thread = 0, warps = 0;
  uint32_t sum = 0, sum_of_squares = 0;
  std::vector<float> x;
};

std::vector<MeasuredSums> read_sums() {
  std::ifstream in(QCHECK_TRITON_DATA);
  std::vector<MeasuredSums> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("sums ", 0) != 0) continue;
    std::istringstream fields(line.substr(5));
    MeasuredSums m;
    std::string bar;
    fields >> m.n >> m.block >> m.size_per_thread >> m.warps >> bar >> std::hex >> m.sum >> m.sum_of_squares >> bar;
    for (uint32_t bits; fields >> bits;) m.x.push_back(float_from_bits(bits));
    EXPECT_EQ(static_cast<int64_t>(m.x.size()), m.n) << line.substr(0, 40);
    rows.push_back(std::move(m));
  }
  return rows;
}

Reduction triton(const MeasuredSums& m, SquareStep squares) {
  Reduction r{ReductionOrder::kTritonBlock};
  r.size_per_thread = m.size_per_thread;
  r.warps = m.warps;
  r.squares = squares;
  return r;
}

TEST(TritonMeasured, TheBlockOrderGivesEverySumTheDeviceGave) {
  const std::vector<MeasuredSums> rows = read_sums();
  ASSERT_GE(rows.size(), 20u) << "cannot read " << QCHECK_TRITON_DATA;
  int rounded_agree = 0, sequential_agree = 0;
  for (const MeasuredSums& m : rows) {
    std::vector<float> x = m.x;
    x.resize(static_cast<size_t>(m.block), 0.0f);  // the masked lanes' other=0.0
    const std::string where = "n " + std::to_string(m.n) + " layout " + std::to_string(m.size_per_thread) + "x32x" +
                              std::to_string(m.warps);
    EXPECT_EQ(bits_of(reduce_sum(x.data(), m.block, triton(m, SquareStep::kRounded))), m.sum) << where;
    EXPECT_EQ(bits_of(reduce_sum_of_squares(x.data(), m.block, triton(m, SquareStep::kFused))), m.sum_of_squares)
        << where;
    rounded_agree += bits_of(reduce_sum_of_squares(x.data(), m.block, triton(m, SquareStep::kRounded))) ==
                     m.sum_of_squares;
    sequential_agree += bits_of(reduce_sum(x.data(), m.block, Reduction{ReductionOrder::kSequential})) == m.sum;
  }
  // Other conventions over the same rows: the data can fail them (rounded
  // squares differ from the device on 5 of the 24 rows measured on sm_90).
  EXPECT_LT(rounded_agree, static_cast<int>(rows.size()));
  EXPECT_LT(sequential_agree, static_cast<int>(rows.size()));
  std::printf("%zu rows: rounded squares agree on %d, a sequential sum on %d\n", rows.size(), rounded_agree,
              sequential_agree);
}

// The layout rule (triton_block_reduction) against the layout the compiler
// chose for every row, as the file records it.
TEST(TritonMeasured, TheLayoutRuleGivesEveryMeasuredLayout) {
  const std::vector<MeasuredSums> rows = read_sums();
  ASSERT_GE(rows.size(), 20u) << "cannot read " << QCHECK_TRITON_DATA;
  for (const MeasuredSums& m : rows) {
    const Reduction r = triton_block_reduction(m.block, m.warps);
    EXPECT_EQ(r.order, ReductionOrder::kTritonBlock);
    EXPECT_EQ(r.size_per_thread, m.size_per_thread) << "block " << m.block << ", " << m.warps << " warps";
    EXPECT_EQ(r.warps, m.warps);
  }
}

}  // namespace
}  // namespace qcheck::spec
