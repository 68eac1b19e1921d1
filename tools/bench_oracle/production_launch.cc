#include "tools/bench_oracle/production_launch.h"

#include <cmath>
#include <cstring>

#include "reference/float_bits.h"

namespace qcheck::bench {
namespace {

// splitmix64: deterministic, no std::random_device.
uint64_t next_random(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Noise in roughly [-4, 4) scaled by 2^scale_log2, as an exact f32.
float noise(uint64_t& state, int scale_log2) {
  const int32_t r = int32_t(next_random(state) >> 40) - (1 << 23);  // [-2^23, 2^23)
  return float(r) * float_from_bits(uint32_t(127 + scale_log2 - 21) << 23);  // exact power of two
}

uint16_t bf16_bits(float value) {  // round to nearest even; inputs here are finite
  const uint32_t bits = bits_of(value);
  return uint16_t((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

// cos/sin cache rows as a RoPE table: row p = [cos(p * f_i), sin(p * f_i)].
void fill_cache(std::vector<float>& cache, int64_t rows, int64_t rope_dim, double base) {
  const int64_t half = rope_dim / 2;
  cache.resize(size_t(rows * rope_dim));
  for (int64_t p = 0; p < rows; ++p) {
    for (int64_t i = 0; i < half; ++i) {
      const double angle = double(p) * std::pow(base, -2.0 * double(i) / double(rope_dim));
      cache[size_t(p * rope_dim + i)] = float(std::cos(angle));
      cache[size_t(p * rope_dim + half + i)] = float(std::sin(angle));
    }
  }
}

}  // namespace

ProductionLaunch::ProductionLaunch(const LaunchShape& s, uint64_t seed) : shape_(s) {
  uint64_t state = seed;
  const int64_t T = s.tokens, H = s.mqa_heads, NI = s.indexer_heads;
  positions_.resize(size_t(T));
  for (int64_t t = 0; t < T; ++t) positions_[size_t(t)] = int64_t(next_random(state) % uint64_t(s.cache_rows));
  fill_cache(mqa_cache_, s.cache_rows, s.rope_dim, 10000.0);
  fill_cache(indexer_cache_, s.cache_rows, s.rope_dim, 10000.0);
  q_pe_wide_.resize(size_t(T * H * kQPeRow));
  for (auto& v : q_pe_wide_) v = bf16_bits(noise(state, 0));
  ql_nope_.resize(size_t(H * T * s.nope_dim));
  for (auto& v : ql_nope_) v = bf16_bits(noise(state, -2));
  index_q_.resize(size_t(T * NI * s.index_dim));
  // Per-row magnitudes vary over a wide range, so the UE8M0 scales do too.
  for (size_t row = 0; row < size_t(T * NI); ++row) {
    const int scale_log2 = int(next_random(state) % 24) - 12;
    for (int64_t d = 0; d < s.index_dim; ++d) {
      index_q_[row * size_t(s.index_dim) + size_t(d)] = bf16_bits(noise(state, scale_log2));
    }
  }
  index_weights_wide_.resize(size_t(T * (s.index_dim + NI)));
  for (auto& v : index_weights_wide_) v = noise(state, 0);
  query_out_.assign(size_t(T * H * (s.nope_dim + s.rope_dim)), 0);
  index_q_fp8_.assign(size_t(T * NI * s.index_dim), 0);
  index_weights_out_.assign(size_t(T * NI), 0.0f);
}

FusedQArgs ProductionLaunch::args(int64_t num_tokens) const {
  const LaunchShape& s = shape_;
  FusedQArgs a;
  a.num_tokens = num_tokens;
  a.mqa_heads = s.mqa_heads;
  a.indexer_heads = s.indexer_heads;
  a.index_dim = s.index_dim;
  a.rope_dim = s.rope_dim;
  a.nope_dim = s.nope_dim;
  a.query_path = QueryPath::kBf16Packed;
  a.has_indexer = true;
  a.indexer_rope = RopeStyle::kNeox;
  a.positions = positions_.data();
  a.mqa_cache = {mqa_cache_.data(), FloatType::kF32, s.cache_rows, s.rope_dim};
  a.indexer_cache = {indexer_cache_.data(), FloatType::kF32, s.cache_rows, s.rope_dim};
  a.q_pe = {q_pe_wide_.data() + (kQPeRow - s.rope_dim), s.mqa_heads * kQPeRow, kQPeRow};
  a.ql_nope = {ql_nope_.data(), s.nope_dim, s.tokens * s.nope_dim};  // head-major
  a.index_q = {index_q_.data(), s.indexer_heads * s.index_dim, s.index_dim};
  a.index_weights = {index_weights_wide_.data(), s.index_dim + s.indexer_heads, 1};
  a.index_weights_dtype = FloatType::kF32;
  const int64_t width = s.nope_dim + s.rope_dim;
  a.query_out = {const_cast<uint16_t*>(query_out_.data()), s.mqa_heads * width, width};
  a.index_q_fp8 = {const_cast<uint8_t*>(index_q_fp8_.data()), s.indexer_heads * s.index_dim, s.index_dim};
  a.index_weights_out = {const_cast<float*>(index_weights_out_.data()), s.indexer_heads, 1};
  a.index_weights_out_dtype = FloatType::kF32;
  a.softmax_scale_bits = default_softmax_scale_bits(s.index_dim);
  a.head_scale_bits = default_head_scale_bits(s.indexer_heads);
  return a;
}

uint64_t ProductionLaunch::input_bytes(int64_t n) const {
  const LaunchShape& s = shape_;
  const uint64_t per_token = 8 /* position */ + 2 * 4 * uint64_t(s.rope_dim) /* two cache rows */ +
                             2 * uint64_t(s.mqa_heads * (s.rope_dim + s.nope_dim)) /* q_pe, ql_nope */ +
                             2 * uint64_t(s.indexer_heads * s.index_dim) + 4 * uint64_t(s.indexer_heads);
  return per_token * uint64_t(n);
}

uint64_t ProductionLaunch::output_bytes(int64_t n) const {
  const LaunchShape& s = shape_;
  const uint64_t per_token = 2 * uint64_t(s.mqa_heads * (s.nope_dim + s.rope_dim)) +
                             uint64_t(s.indexer_heads * s.index_dim) + 4 * uint64_t(s.indexer_heads);
  return per_token * uint64_t(n);
}

std::vector<uint8_t> ProductionLaunch::output_snapshot(int64_t n) const {
  const LaunchShape& s = shape_;
  const size_t query = size_t(n * s.mqa_heads * (s.nope_dim + s.rope_dim)) * 2;
  const size_t fp8 = size_t(n * s.indexer_heads * s.index_dim);
  const size_t weights = size_t(n * s.indexer_heads) * 4;
  std::vector<uint8_t> bytes(query + fp8 + weights);
  std::memcpy(bytes.data(), query_out_.data(), query);
  std::memcpy(bytes.data() + query, index_q_fp8_.data(), fp8);
  std::memcpy(bytes.data() + query + fp8, index_weights_out_.data(), weights);
  return bytes;
}

}  // namespace qcheck::bench
