// Known answers for sums in named orders (numerics/reduction.h), worked by
// hand. Near 2^24 an f32 holds only even integers, so an added 1 is a tie
// that rounds to even and vanishes, while ones summed first survive: each
// order's result shows which additions it made first.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "numerics/float_bits.h"
#include "numerics/reduction.h"

namespace qcheck::spec {
namespace {

constexpr float k2p24 = 16777216.0f;

float sum(const std::vector<float>& x, ReductionOrder order, int lanes = 32) {
  return reduce_sum(x.data(), static_cast<int64_t>(x.size()), Reduction{order, lanes});
}

TEST(ReductionKnownAnswers, EachOrderRoundsItsOwnWay) {
  const std::vector<float> x = {k2p24, 1, 1, 1, 1, 1, 1, 1};
  // In order: 2^24 + 1 ties to 2^24, seven times.
  EXPECT_EQ(sum(x, ReductionOrder::kSequential), 16777216.0f);
  // Pairs: (2^24, 2, 2, 2) -> (2^24 + 2, 4) -> 2^24 + 6.
  EXPECT_EQ(sum(x, ReductionOrder::kPairwise), 16777222.0f);
  // Two strided lanes: lane 0 = 2^24 (+1 three times, each lost), lane 1 = 4.
  EXPECT_EQ(sum(x, ReductionOrder::kStridedLanes, 2), 16777220.0f);
  // Four: lanes (2^24, 2, 2, 2); butterfly 2^24 + 2 and 4, then 2^24 + 6.
  EXPECT_EQ(sum(x, ReductionOrder::kStridedLanes, 4), 16777222.0f);
  // Two blocked lanes: x[0..3] = 2^24, x[4..7] = 4.
  EXPECT_EQ(sum(x, ReductionOrder::kBlockedLanes, 2), 16777220.0f);
  // One lane is the loop.
  EXPECT_EQ(sum(x, ReductionOrder::kStridedLanes, 1), 16777216.0f);
}

TEST(ReductionKnownAnswers, StridedAndBlockedLanesDiffer) {
  const std::vector<float> x = {k2p24, 1, 3, 1};
  // Strided over 2: lane 0 = 2^24 + 3, a tie between 2^24 + 2 (odd
  // mantissa) and 2^24 + 4 (even): 2^24 + 4; lane 1 = 2; total 2^24 + 6.
  EXPECT_EQ(sum(x, ReductionOrder::kStridedLanes, 2), 16777222.0f);
  // Blocked over 2: lane 0 = 2^24 + 1 -> 2^24; lane 1 = 4; total 2^24 + 4.
  EXPECT_EQ(sum(x, ReductionOrder::kBlockedLanes, 2), 16777220.0f);
  // In order: 2^24, then 2^24 + 3 -> 2^24 + 4, then 2^24 + 5 -> 2^24 + 4.
  EXPECT_EQ(sum(x, ReductionOrder::kSequential), 16777220.0f);
}

TEST(ReductionKnownAnswers, TheButterflyPairsLanesHalfTheWidthApart) {
  // Four lanes of one element each: offset 2 pairs lane 0 with lane 2
  // (2^24 + 0) and lane 1 with lane 3 (1 + 1 = 2); offset 1 gives 2^24 + 2.
  // Adding the lanes in order would lose both ones (2^24); pairs of
  // neighbours too: (2^24 + 1 -> 2^24) + (0 + 1) -> 2^24.
  const std::vector<float> x = {k2p24, 1, 0, 1};
  EXPECT_EQ(sum(x, ReductionOrder::kStridedLanes, 4), 16777218.0f);
  EXPECT_EQ(sum(x, ReductionOrder::kBlockedLanes, 4), 16777218.0f);
  EXPECT_EQ(sum(x, ReductionOrder::kPairwise), 16777216.0f);
  EXPECT_EQ(sum(x, ReductionOrder::kSequential), 16777216.0f);
}

TEST(ReductionKnownAnswers, PairwisePadsToAPowerOfTwoWithZeros) {
  // (2^24, 1, 1, 1, 1, 0, 0, 0) -> (2^24, 2, 1, 0) -> (2^24 + 2, 1) -> 2^24 + 3,
  // a tie that rounds to 2^24 + 4.
  EXPECT_EQ(sum({k2p24, 1, 1, 1, 1}, ReductionOrder::kPairwise), 16777220.0f);
  EXPECT_EQ(sum({k2p24, 1, 1, 1, 1}, ReductionOrder::kSequential), 16777216.0f);
}

TEST(ReductionKnownAnswers, EmptyRowsAndNegativeZeroSumToPositiveZero) {
  // Every partial sum starts at +0, as a kernel's accumulator does: -0 + +0 = +0.
  for (const ReductionOrder order : {ReductionOrder::kSequential, ReductionOrder::kPairwise,
                                     ReductionOrder::kStridedLanes, ReductionOrder::kBlockedLanes}) {
    EXPECT_FALSE(std::signbit(sum({}, order))) << name_of(order);
    EXPECT_FALSE(std::signbit(sum({-0.0f}, order))) << name_of(order);
    EXPECT_FALSE(std::signbit(sum({-0.0f, -0.0f, -0.0f}, order))) << name_of(order);
  }
}

TEST(ReductionKnownAnswers, ThirtyTwoLanesAddTheOnesFirst) {
  // The toy op's rms row: 4096 and 63 ones, squared. Over 32 strided lanes,
  // lane 0 is 2^24 + 1 -> 2^24, lanes 1..31 are 2 each; the butterfly adds
  // them exactly: 2^24 + 62.
  std::vector<float> x(64, 1.0f);
  x[0] = 4096.0f;
  const int64_t n = static_cast<int64_t>(x.size());
  EXPECT_EQ(reduce_sum_of_squares(x.data(), n, Reduction{ReductionOrder::kStridedLanes, 32}), 16777278.0f);
  EXPECT_EQ(reduce_sum_of_squares(x.data(), n, Reduction{ReductionOrder::kSequential, 1}), 16777216.0f);
  const float squares[] = {3, 4};
  EXPECT_EQ(reduce_sum_of_squares(squares, 2, Reduction{ReductionOrder::kPairwise, 1}), 25.0f);
}

float triton(const std::vector<float>& x, int size_per_thread, int warps) {
  Reduction r{ReductionOrder::kTritonBlock};
  r.size_per_thread = size_per_thread;
  r.warps = warps;
  return reduce_sum(x.data(), static_cast<int64_t>(x.size()), r);
}

TEST(ReductionKnownAnswers, ATritonBlockSumsEachWarpBeforeTheWarps) {
  // 128 elements, one a thread over 4 warps: x[0] = 2^24, x[1] = 1 (warp 0,
  // lane 1), x[33] = 1 (warp 1, lane 1). Warp 0's butterfly adds lanes 0 and
  // 1: 2^24 + 1, a tie, 2^24; warp 1 gives 1; the warps: 2^24 + 1 -> 2^24.
  // 128 strided lanes pair lanes 32 apart first: lane 1 is 1 + 1 = 2, and
  // 2^24 + 2 is exact.
  std::vector<float> x(128, 0.0f);
  x[0] = k2p24;
  x[1] = 1;
  x[33] = 1;
  EXPECT_EQ(triton(x, 1, 4), 16777216.0f);
  EXPECT_EQ(sum(x, ReductionOrder::kStridedLanes, 128), 16777218.0f);
  EXPECT_EQ(sum(x, ReductionOrder::kBlockedLanes, 128), 16777218.0f);
}

TEST(ReductionKnownAnswers, ATritonThreadFoldsItsRegistersLeftToRight) {
  // Four a thread, one warp: thread 0 holds x[0..3] = (2^24, 1, 1, 1): three
  // ties, 2^24. Thread 16 holds x[64..67] = (1, 1, 1, 1) = 4, which the first
  // butterfly step (offset 16) adds to 2^24 exactly.
  std::vector<float> x(128, 0.0f);
  x[0] = k2p24;
  x[1] = x[2] = x[3] = 1;
  x[64] = x[65] = x[66] = x[67] = 1;
  EXPECT_EQ(triton(x, 4, 1), 16777220.0f);
  EXPECT_EQ(sum(x, ReductionOrder::kSequential), 16777216.0f);
  // Over 512 elements (four chunks of 128): thread 0 holds x[0..3],
  // x[128..131], x[256..259], x[384..387]. With x[256..259] at 1 too it folds
  // 2^24 and six ones, each lost: 2^24, then + 4 from thread 16.
  std::vector<float> y(512, 0.0f);
  std::copy(x.begin(), x.end(), y.begin());
  y[256] = y[257] = y[258] = y[259] = 1;
  EXPECT_EQ(triton(y, 4, 1), 16777220.0f);
}

TEST(ReductionKnownAnswers, ATritonBlockKeepsANegativeZeroRowsSign) {
  // Each thread starts from its first element: a row of -0 over the whole
  // layout sums to -0; lanes past the row hold the masked load's +0.
  EXPECT_TRUE(std::signbit(triton(std::vector<float>(128, -0.0f), 1, 4)));
  EXPECT_TRUE(std::signbit(triton(std::vector<float>(512, -0.0f), 4, 4)));
  EXPECT_FALSE(std::signbit(triton(std::vector<float>(100, -0.0f), 1, 4)));
  EXPECT_FALSE(std::signbit(triton({}, 4, 4)));
}

// a = 1 + 2^-12 squares to 1 + 2^-11 + 2^-24, a tie: RN gives 1 + 2^-11
// (0x3F801000). b = 2^-12 squares exactly to 2^-24. fma(a, a, 2^-24) is
// exactly 1 + 2^-11 + 2^-23 (0x3F801001); RN(a^2) + 2^-24 and
// fma(b, b, RN(a^2)) are the tie again, 0x3F801000.
constexpr float kA = 1.000244140625f, kB = 0.000244140625f;

float squares(std::vector<float> x, Reduction r, SquareStep step) {
  r.squares = step;
  return reduce_sum_of_squares(x.data(), static_cast<int64_t>(x.size()), r);
}

TEST(ReductionKnownAnswers, FusedSquaresKeepTheBitTheRoundedOnesLose) {
  Reduction triton{ReductionOrder::kTritonBlock};
  triton.size_per_thread = 4;
  triton.warps = 1;
  std::vector<float> x(128, 0.0f);
  x[0] = kA;
  x[1] = kB;
  // The thread's first two squares as fma(a0, a0, RN(a1^2)), as the PTX has them.
  EXPECT_EQ(bits_of(squares(x, triton, SquareStep::kFused)), 0x3F801001u);
  EXPECT_EQ(bits_of(squares(x, triton, SquareStep::kRounded)), 0x3F801000u);
  // An accumulator from +0: fma(a, a, 0) rounds a^2 first, then the tie.
  EXPECT_EQ(bits_of(squares({kA, kB}, Reduction{ReductionOrder::kSequential}, SquareStep::kFused)), 0x3F801000u);
  EXPECT_EQ(bits_of(squares({kB, kA}, Reduction{ReductionOrder::kSequential}, SquareStep::kFused)), 0x3F801001u);
  EXPECT_EQ(bits_of(squares({kB, kA}, Reduction{ReductionOrder::kSequential}, SquareStep::kRounded)), 0x3F801000u);
  EXPECT_EQ(bits_of(squares({kA, kB}, Reduction{ReductionOrder::kPairwise}, SquareStep::kFused)), 0x3F801001u);
  EXPECT_EQ(bits_of(squares({kA, kB}, Reduction{ReductionOrder::kPairwise}, SquareStep::kRounded)), 0x3F801000u);
}

TEST(ReductionKnownAnswers, AOneElementThreadFusesItsSquareIntoTheFirstButterflyStep) {
  // One warp, one element a thread: lane 0 computes fma(x0, x0, RN(x16^2)),
  // lane 16 fma(x16, x16, RN(x0^2)); lane 0's value is the sum.
  Reduction triton{ReductionOrder::kTritonBlock};
  triton.size_per_thread = 1;
  triton.warps = 1;
  std::vector<float> x(32, 0.0f);
  x[0] = kA;
  x[16] = kB;
  EXPECT_EQ(bits_of(squares(x, triton, SquareStep::kFused)), 0x3F801001u);
  std::swap(x[0], x[16]);
  EXPECT_EQ(bits_of(squares(x, triton, SquareStep::kFused)), 0x3F801000u);
}

TEST(ReductionKnownAnswers, ALayoutOutOfRangeIsNamed) {
  Reduction r{ReductionOrder::kTritonBlock};
  EXPECT_STREQ(reduction_error(r), "");
  r.size_per_thread = 3;
  EXPECT_STREQ(reduction_error(r), "reduction size_per_thread must be a power of two from 1 to 16");
  r.size_per_thread = 32;
  EXPECT_STREQ(reduction_error(r), "reduction size_per_thread must be a power of two from 1 to 16");
  r.size_per_thread = 16;
  r.warps = 64;
  EXPECT_STREQ(reduction_error(r), "reduction warps must be a power of two from 1 to 32");
  EXPECT_STREQ(reduction_error(Reduction{ReductionOrder::kStridedLanes, 0}),
               "reduction lanes must be a power of two from 1 to 1024");
  EXPECT_STREQ(reduction_error(Reduction{ReductionOrder::kBlockedLanes, 2048}),
               "reduction lanes must be a power of two from 1 to 1024");
}

}  // namespace
}  // namespace qcheck::spec
