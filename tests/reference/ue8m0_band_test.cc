// The UE8M0 scale band: where vLLM Triton's log2f ceiling (ScaleCeiling::
// kLog2f) and the exact bit ceiling (kExactBits) disagree, over every finite
// fp32 amax >= 1e-4 (the 1e-4 floor then changes nothing).
//
// SEMANTICS.md: log2f keeps 2^e although s0 = RN(amax / 448) = 2^e (1 + m 2^-23)
// with 1 <= m <= M(e), so the scale is half. Which amax values are those?
// amax = 448 s0 lies in [2^(e+8), 2^(e+9)), so amax = 2^(e+8) (1 + k 2^-23),
// and amax / 448 = 2^e (1 + k 2^-23) / 1.75 rounds to s0 exactly when
//   |k - (0.75 * 2^23 + 1.75 m)| <= 0.875        (in units of 2^-23).
// 1.75 m is an integer when m % 4 == 0, otherwise it has fraction .25, .5 or
// .75; an interval of width 1.75 around it then holds 1 or 2 integers (never
// a tie at the ends). So n(m) = 1 amax value if m % 4 == 0, else 2, and the
// band of exponent e holds sum_{m=1..M(e)} n(m) amax values:
//   M = 1: 2, M = 2: 4, M = 5: 9, M = 11: 20, M = 22: 39.
// Over the exponents (8 with M = 1, 16 with M = 2, 22 with M = 5, 32 with
// M = 11, 56 with M = 22): 16 + 64 + 198 + 640 + 2184 = 3102.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "gtest/gtest.h"
#include "numerics/float_bits.h"
#include "numerics/ue8m0.h"
#include "tests/reference/f32_sweep.h"

#ifndef QCHECK_EXHAUSTIVE
#define QCHECK_EXHAUSTIVE 1
#endif

namespace qcheck::test {
namespace {

// M(e) by exponent of s0, from SEMANTICS.md; 0 elsewhere.
int band_limit(int e) {
  if (e >= -22 && e <= -17) return 5;
  if (e >= -16 && e <= -9) return 2;
  if (e >= -8 && e <= -5) return 1;
  if (e >= -4 && e <= 3) return 0;
  if (e >= 4 && e <= 7) return 1;
  if (e >= 8 && e <= 15) return 2;
  if (e >= 16 && e <= 31) return 5;
  if (e >= 32 && e <= 63) return 11;
  if (e >= 64 && e <= 119) return 22;
  return 0;
}

// Amax values per s0 = 2^e (1 + m 2^-23), derived in the file comment.
int amax_values_per_s0(int m) { return m % 4 == 0 ? 1 : 2; }

int expected_band_count(int e) {
  int count = 0;
  for (int m = 1; m <= band_limit(e); ++m) count += amax_values_per_s0(m);
  return count;
}

struct Difference {
  uint32_t amax_bits;
  int exponent;  // of s0
  int mantissa;  // m, the low 23 bits of s0
  bool half;     // log2f scale * 2 == exact scale
};

// The amax patterns to visit: all finite ones >= 1e-4, or (sanitizer builds)
// every 4099th plus, for every exponent, the first 160 ulps above 448 * 2^e,
// which hold every s0 with m <= 80 (beyond any M).
std::vector<uint32_t> strided_amax_patterns(uint32_t first, uint32_t last) {
  std::vector<uint32_t> p;
  for (uint64_t b = first; b <= last; b += 4099) p.push_back(uint32_t(b));
  for (int e = -23; e <= 119; ++e) {
    const uint32_t base = bits_of(448.0f * float_from_bits(uint32_t(127 + e) << 23));
    for (uint32_t k = 0; k < 160; ++k) {
      if (base - 4 + k >= first && base - 4 + k <= last) p.push_back(base - 4 + k);
    }
  }
  std::sort(p.begin(), p.end());
  p.erase(std::unique(p.begin(), p.end()), p.end());
  return p;
}

TEST(Ue8m0Band, Log2fCeilingDiffersExactlyInTheDocumentedBand) {
  const uint32_t first = bits_of(1e-4f), last = 0x7F7FFFFFu;  // FLT_MAX
  const std::vector<uint32_t> sample = QCHECK_EXHAUSTIVE ? std::vector<uint32_t>{}
                                                         : strided_amax_patterns(first, last);
  const uint64_t total = QCHECK_EXHAUSTIVE ? uint64_t(last) - first + 1 : sample.size();
  const uint64_t blocks = (total + kSweepBlock - 1) / kSweepBlock;

  std::mutex mutex;
  std::vector<Difference> differences;
  const auto start = std::chrono::steady_clock::now();
  parallel_blocks(blocks, kSweepThreads, [&](uint64_t block, int) {
    std::vector<Difference> found;
    const uint64_t begin = block * kSweepBlock, end = std::min(total, begin + kSweepBlock);
    for (uint64_t i = begin; i < end; ++i) {
      const uint32_t bits = QCHECK_EXHAUSTIVE ? uint32_t(first + i) : sample[i];
      const float amax = float_from_bits(bits);
      const float exact = spec::ue8m0_scale(amax, ScaleCeiling::kExactBits, ScaleFloor::kAmax1e4);
      const float log2f = spec::ue8m0_scale(amax, ScaleCeiling::kLog2f, ScaleFloor::kAmax1e4);
      if (bits_of(exact) == bits_of(log2f)) continue;
      const uint32_t s0 = bits_of(amax / 448.0f);
      found.push_back({bits, int(s0 >> 23) - 127, int(s0 & 0x7FFFFF),
                       bits_of(exact) == bits_of(log2f) + (1u << 23)});
    }
    if (found.empty()) return;
    std::lock_guard<std::mutex> lock(mutex);
    differences.insert(differences.end(), found.begin(), found.end());
  });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("[qcheck] UE8M0 exact vs log2f over %llu amax values (%s): %.2f s on %d threads\n",
              static_cast<unsigned long long>(total),
              QCHECK_EXHAUSTIVE ? "every finite fp32 >= 1e-4" : "strided sample plus the band neighbourhoods",
              seconds, kSweepThreads);

  // Per exponent of s0: how many amax values differ, and which m occur.
  std::map<int, int> per_exponent;
  std::map<int, std::set<int>> mantissas;
  int not_half = 0;
  for (const Difference& d : differences) {
    ++per_exponent[d.exponent];
    mantissas[d.exponent].insert(d.mantissa);
    if (!d.half && not_half++ < 8) {
      ADD_FAILURE() << "amax " << hex(d.amax_bits, 8) << ": the log2f scale is not half the exact one";
    }
  }
  EXPECT_EQ(not_half, 0);

  struct Band {
    int lo, hi;
  };
  const Band bands[] = {{-23, -23}, {-22, -17}, {-16, -9}, {-8, -5}, {-4, 3},  {4, 7},
                        {8, 15},    {16, 31},   {32, 63},  {64, 119}};
  std::printf("[qcheck] s0 exponent band |  M | amax per exponent | exponents | expected | observed\n");
  int observed_total = 0, expected_total = 0;
  for (const Band& band : bands) {
    int observed = 0, expected = 0;
    for (int e = band.lo; e <= band.hi; ++e) {
      const int seen = per_exponent.count(e) ? per_exponent[e] : 0;
      observed += seen;
      expected += expected_band_count(e);
      EXPECT_EQ(seen, expected_band_count(e)) << "s0 exponent " << e;
      // The differing s0 are exactly m = 1..M(e).
      std::set<int> want;
      for (int m = 1; m <= band_limit(e); ++m) want.insert(m);
      EXPECT_EQ(mantissas[e], want) << "s0 exponent " << e;
    }
    std::printf("[qcheck] %6d .. %-6d     | %2d | %17d | %9d | %8d | %8d\n", band.lo, band.hi,
                band_limit(band.lo), expected_band_count(band.lo), band.hi - band.lo + 1, expected,
                observed);
    observed_total += observed;
    expected_total += expected;
  }
  // Differences outside every band (none expected).
  for (const auto& [e, count] : per_exponent) {
    if (e < -23 || e > 119) ADD_FAILURE() << count << " differences at s0 exponent " << e;
  }
  std::printf("[qcheck] total: expected %d, observed %d amax values\n", expected_total, observed_total);
  EXPECT_EQ(expected_total, 3102);
  EXPECT_EQ(int(differences.size()), 3102);
}

}  // namespace
}  // namespace qcheck::test
