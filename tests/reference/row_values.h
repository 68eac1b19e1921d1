// Deterministic test inputs: special f32 patterns and rows that mix noise
// with them. No std::random_device and no <random> distributions (whose
// output differs between standard libraries): a seeded splitmix64 only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace qcheck::test {

// splitmix64 (Steele, Lea, Flood 2014): a tiny generator with a 64-bit seed.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next();
  uint32_t below(uint32_t bound) { return uint32_t((next() >> 32) * bound >> 32); }

 private:
  uint64_t state_;
};

// The f32 patterns at every rounding boundary of bf16 and e4m3 for every sign
// and exponent (low bits just below, at and above each half-way point), every
// single-bit and all-ones-below-a-bit mantissa, and the classic specials.
// Used where a sweep cannot visit all 2^32 patterns (sanitizer builds).
std::vector<uint32_t> special_f32_patterns();

// Values a row mixes in: NaN of both signs with several payloads (quiet and
// signalling), +-Inf, +-0, subnormals, 448 / 464 / 464+ulp / 480, the bf16
// maximum, 2^-10 and neighbours, FLT_MAX.
const std::vector<uint32_t>& row_special_values();

// Roughly normal noise (sum of four uniforms, exact in f32) times
// 2^(scale_log2 + small random shift).
float noise_value(SplitMix64& rng, int scale_log2);

// count values: noise, with a special from row_special_values() at the rate
// special_per_256 / 256.
void fill_mixed_row(SplitMix64& rng, float* out, size_t count, int scale_log2, uint32_t special_per_256);

}  // namespace qcheck::test
