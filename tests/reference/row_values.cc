#include "tests/reference/row_values.h"

#include <algorithm>

#include "core/random/prng.h"
#include "numerics/float_bits.h"

namespace qcheck::test {

uint64_t SplitMix64::next() { return splitmix64_next(state_); }

std::vector<uint32_t> special_f32_patterns() {
  std::vector<uint32_t> p;
  // bf16 keeps the top 16 bits: around the half-way point 0x8000 of the low 16.
  const uint32_t bf16_low[] = {0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF};
  for (uint32_t top = 0; top < 0x10000; ++top) {
    for (uint32_t low : bf16_low) p.push_back(top << 16 | low);
  }
  // e4m3 normals keep sign, exponent and 3 mantissa bits: the top 12 bits.
  const uint32_t e4m3_low[] = {0x00000, 0x00001, 0x3FFFF, 0x40000, 0x7FFFE,
                               0x7FFFF, 0x80000, 0x80001, 0xFFFFE, 0xFFFFF};
  for (uint32_t top = 0; top < 0x1000; ++top) {
    for (uint32_t low : e4m3_low) p.push_back(top << 20 | low);
  }
  // e4m3 subnormals round at mantissa bit 21..24 of the significand: every
  // single bit, every all-ones run and their neighbours, for every exponent.
  for (uint32_t sign_exponent = 0; sign_exponent < 0x200; ++sign_exponent) {
    for (int bit = 0; bit < 23; ++bit) {
      const uint32_t one = 1u << bit;
      for (uint32_t mantissa : {one, one - 1, one + 1, (one << 1) - 1}) {
        p.push_back(sign_exponent << 23 | (mantissa & 0x7FFFFF));
      }
    }
  }
  const std::vector<uint32_t>& extra = row_special_values();
  p.insert(p.end(), extra.begin(), extra.end());
  std::sort(p.begin(), p.end());
  p.erase(std::unique(p.begin(), p.end()), p.end());
  return p;
}

const std::vector<uint32_t>& row_special_values() {
  static const std::vector<uint32_t> values = {
      0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001, 0x7FA12345, 0xFFBFFFFF, 0x7FFFFFFF,  // NaN
      0x7F800000, 0xFF800000,                                                            // +-Inf
      0x00000000, 0x80000000,                                                            // +-0
      0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00400000,                        // subnormal
      0x43E00000, 0xC3E00000,                                      // +-448
      0x43E80000, 0x43E80001, 0xC3E80001,                          // 464, 464 + ulp
      0x43F00000, 0xC3F00000,                                      // +-480
      0x7F7F0000, 0xFF7F0000, 0x7F7FFFFF,                          // bf16 max, FLT_MAX
      0x3A800000, 0xBA800000, 0x3A800001, 0x3B000000, 0x3C800000,  // 2^-10, 2^-10+ulp, 2^-9, 2^-6
  };
  return values;
}

float noise_value(SplitMix64& rng, int scale_log2) {
  const uint64_t r = rng.next();
  // Four 12-bit uniforms: their sum minus the mean is an integer in
  // [-8190, 8190], exact in f32, with a bell-shaped distribution.
  const int32_t sum = int32_t(r & 0xFFF) + int32_t(r >> 12 & 0xFFF) + int32_t(r >> 24 & 0xFFF) +
                      int32_t(r >> 36 & 0xFFF) - 2 * 4095;
  const int shift = scale_log2 + int(r >> 48 & 3) - 12;
  return float(sum) * float_from_bits(uint32_t(127 + shift) << 23);
}

void fill_mixed_row(SplitMix64& rng, float* out, size_t count, int scale_log2,
                    uint32_t special_per_256) {
  const std::vector<uint32_t>& specials = row_special_values();
  for (size_t i = 0; i < count; ++i) {
    if (rng.below(256) < special_per_256) {
      out[i] = float_from_bits(specials[rng.below(uint32_t(specials.size()))]);
    } else {
      out[i] = noise_value(rng, scale_log2);
    }
  }
}

}  // namespace qcheck::test
