// The harness's only source of randomness: small, explicit generators whose
// output is fixed by their arithmetic (never std::random_device, never a std
// distribution, whose output differs between standard libraries). A case plus
// its seed reproduces every byte on every compiler.
//
// SplitMix64 (Steele, Lea, Flood 2014) seeds and hashes; xoshiro256**
// (Blackman, Vigna 2018) draws the values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace qcheck {

// One SplitMix64 step: advances `state` and returns a well-mixed 64-bit value.
inline uint64_t splitmix64_next(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A hash of a few integers, used to derive an independent stream per
// (seed, tensor, token, head): a row's values then do not depend on T, on
// the layout or on any other row, so shrinking a case keeps the rows left.
// Keys are taken one at a time, so a prefix shared by many streams (the
// seed, the tensor, the token) is hashed once: KeyMix({a, b}).then(c).value()
// is mix_keys({a, b, c}).
class KeyMix {
 public:
  KeyMix(std::initializer_list<uint64_t> keys) {
    for (uint64_t key : keys) add(key);
  }
  KeyMix then(uint64_t key) const {
    KeyMix more = *this;
    more.add(key);
    return more;
  }
  uint64_t value() const { return h_; }

 private:
  void add(uint64_t key) {
    state_ ^= key + 0x632BE59BD9B4E019ull + (h_ << 6) + (h_ >> 2);
    h_ = splitmix64_next(state_);
  }
  uint64_t state_ = 0x71636865636B2121ull;  // "qcheck!!"
  uint64_t h_ = 0;
};

inline uint64_t mix_keys(std::initializer_list<uint64_t> keys) { return KeyMix(keys).value(); }

class Xoshiro256 {
 public:
  explicit Xoshiro256(uint64_t seed) {
    uint64_t state = seed;
    for (uint64_t& word : s_) word = splitmix64_next(state);
  }

  // The four state words, for the generators that run several streams side
  // by side (fuzz/buffers/noise_lanes.h) and hand them back.
  const uint64_t* state() const { return s_; }
  void set_state(const uint64_t words[4]) {
    for (int i = 0; i < 4; ++i) s_[i] = words[i];
  }

  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform integer in [0, n) for n >= 1 (multiply-shift; the tiny bias is
  // irrelevant here and the result is the same everywhere).
  uint64_t below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }

  // Uniform integer in [lo, hi].
  int64_t between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(below(static_cast<uint64_t>(hi - lo) + 1));
  }

  // True with probability 1 / n.
  bool one_in(uint64_t n) { return below(n) == 0; }

  // One of the values, uniformly.
  template <typename T, size_t N>
  T pick(const T (&values)[N]) {
    return values[below(N)];
  }

  // Uniform in [-1, 1) with 24 random bits: exact in fp32 and in double.
  double symmetric_unit() {
    return static_cast<double>(static_cast<int64_t>(next() >> 40) - (1 << 23)) / (1 << 23);
  }

  // Roughly normal noise (mean 0, standard deviation 1): the Irwin-Hall sum of
  // four uniforms, rescaled. Plain arithmetic, so identical everywhere
  // (Box-Muller would depend on the C library's log and cos).
  double noise() {
    // The sum of the four symmetric_unit() draws, k / 2^23 each: summed as
    // integers and converted once, which gives the same double (every
    // partial sum is exact in double) at a quarter of the conversions.
    int64_t sum = 0;
    for (int i = 0; i < 4; ++i) sum += static_cast<int64_t>(next() >> 40) - (1 << 23);
    return static_cast<double>(sum) / (1 << 23) * 0.8660254037844386;  // sqrt(3 / 4): var(U[-1,1)) = 1/3, four of them
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace qcheck
