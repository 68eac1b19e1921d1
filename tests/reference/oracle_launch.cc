#include "tests/reference/oracle_launch.h"

#include <cstring>

#include "reference/conversions.h"
#include "reference/float_bits.h"
#include "tests/reference/f32_sweep.h"
#include "tests/reference/row_values.h"

namespace qcheck::test {
namespace {

constexpr uint8_t kPoison = 0xA5;

void* data_of(TensorBytes& t) { return t.bytes.data(); }

}  // namespace

std::string LaunchConfig::describe() const {
  return std::string(name_of(path)) + (alias ? " alias" : "") + (has_indexer ? " indexer " : " no-indexer ") +
         (has_indexer ? name_of(indexer_rope) : "") + " cache " + name_of(cache_dtype) + " weights " +
         name_of(weights_dtype) + "->" + name_of(weights_out_dtype) + " T" + std::to_string(tokens) + " H" +
         std::to_string(mqa_heads) + " NI" + std::to_string(indexer_heads) + " D" + std::to_string(index_dim) +
         " R" + std::to_string(rope_dim) + " L" + std::to_string(nope_dim) + " q_scale " + hex(q_scale_bits, 8);
}

TensorBytes& SmallLaunch::add(const std::string& name, int64_t rows, int64_t cols, int64_t width,
                              int64_t row_stride, int64_t col_stride, int element_bytes, bool is_output) {
  TensorBytes& t = tensors_[name];
  const int64_t elements = (rows - 1) * row_stride + (cols - 1) * col_stride + width + 8;  // + trailing padding
  t.bytes.assign(size_t(elements * element_bytes), kPoison);
  t.in_view.assign(t.bytes.size(), 0);
  t.is_output = is_output;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t first = (r * row_stride + c * col_stride) * element_bytes;
      std::memset(t.in_view.data() + first, 1, size_t(width * element_bytes));
    }
  }
  return t;
}

SmallLaunch::SmallLaunch(const LaunchConfig& c) : config_(c) {
  SplitMix64 rng(c.seed);
  const int64_t T = c.tokens, H = c.mqa_heads, NI = c.indexer_heads, D = c.index_dim, R = c.rope_dim,
                L = c.nope_dim, P = c.cache_rows;
  FusedQArgs& a = args_;
  a.num_tokens = T;
  a.mqa_heads = H;
  a.indexer_heads = NI;
  a.index_dim = D;
  a.rope_dim = R;
  a.nope_dim = L;
  a.query_path = c.path;
  a.has_indexer = c.has_indexer;
  a.indexer_rope = c.indexer_rope;
  a.q_scale_bits = c.q_scale_bits;
  a.softmax_scale_bits = default_softmax_scale_bits(D);
  a.head_scale_bits = default_head_scale_bits(NI);

  // Fills every element of a bf16 or f32 tensor with noise whose magnitude
  // varies by element (so row maxima, and UE8M0 scales, vary too).
  const auto fill = [&](TensorBytes& t, FloatType type, int scale_log2, uint32_t specials) {
    const size_t element = type == FloatType::kF32 ? 4 : 2;
    for (size_t i = 0; i < t.bytes.size(); i += element) {
      if (!t.in_view[i]) continue;
      float value;
      fill_mixed_row(rng, &value, 1, scale_log2 + int(rng.below(5)) - 2, specials);
      if (type == FloatType::kF32) {
        std::memcpy(&t.bytes[i], &value, 4);
      } else {
        const uint16_t bits = spec::bf16_from_f32(value, Bf16Nan::k7FFF);
        std::memcpy(&t.bytes[i], &bits, 2);
      }
    }
  };

  positions_.resize(size_t(T));
  for (int64_t& p : positions_) p = int64_t(rng.below(uint32_t(P)));
  a.positions = positions_.data();

  const int cache_bytes = c.cache_dtype == FloatType::kF32 ? 4 : 2;
  TensorBytes& mqa_cache = add("mqa_cache", P, 1, R, R + 4, 0, cache_bytes, false);
  fill(mqa_cache, c.cache_dtype, -1, 3);
  a.mqa_cache = {data_of(mqa_cache), c.cache_dtype, P, R + 4};

  TensorBytes& q_pe = add("q_pe", T, H, R, H * (R + 3) + 5, R + 3, 2, false);
  fill(q_pe, FloatType::kBf16, 2, 10);
  a.q_pe = {data_of(q_pe), H * (R + 3) + 5, R + 3};

  const int64_t width = query_out_width(a);
  const int out_bytes = c.path == QueryPath::kFp8Packed ? 1 : 2;
  TensorBytes& out = add("query_out", T, H, width, H * (width + 4) + 8, width + 4, out_bytes, true);
  a.query_out = {data_of(out), H * (width + 4) + 8, width + 4};
  if (c.path != QueryPath::kBf16Separate) {
    if (c.alias) {
      // The absorbed bmm already wrote ql_nope into the front of query_out.
      for (int64_t t = 0; t < T; ++t) {
        for (int64_t h = 0; h < H; ++h) {
          for (int64_t l = 0; l < L; ++l) {
            float value;
            fill_mixed_row(rng, &value, 1, 0, 10);
            const uint16_t bits = spec::bf16_from_f32(value, Bf16Nan::k7FFF);
            std::memcpy(&out.bytes[size_t((t * a.query_out.token_stride + h * a.query_out.head_stride + l) * 2)],
                        &bits, 2);
          }
        }
      }
      a.ql_nope = {a.query_out.data, a.query_out.token_stride, a.query_out.head_stride};
    } else {
      // Head-major, as production lays ql_nope out: strides (L + 2, T (L + 2), 1).
      TensorBytes& nope = add("ql_nope", T, H, L, L + 2, T * (L + 2), 2, false);
      fill(nope, FloatType::kBf16, 0, 10);
      a.ql_nope = {data_of(nope), L + 2, T * (L + 2)};
    }
  }

  // The indexer tensors exist either way: without the indexer they must stay untouched.
  TensorBytes& indexer_cache = add("indexer_cache", P, 1, R, R + 2, 0, cache_bytes, false);
  fill(indexer_cache, c.cache_dtype, -1, 3);
  TensorBytes& index_q = add("index_q", T, NI, D, NI * (D + 8) + 16, D + 8, 2, false);
  fill(index_q, FloatType::kBf16, 3, 10);
  const int weight_bytes = c.weights_dtype == FloatType::kF32 ? 4 : 2;
  TensorBytes& weights = add("index_weights", T, NI, 1, NI * 2 + 1, 2, weight_bytes, false);
  fill(weights, c.weights_dtype, 0, 10);
  TensorBytes& fp8 = add("index_q_fp8", T, NI, D, NI * (D + 16) + 32, D + 16, 1, c.has_indexer);
  const int weight_out_bytes = c.weights_out_dtype == FloatType::kF32 ? 4 : 2;
  TensorBytes& weights_out =
      add("index_weights_out", T, NI, 1, NI * 3 + 2, 3, weight_out_bytes, c.has_indexer);
  a.indexer_cache = {data_of(indexer_cache), c.cache_dtype, P, R + 2};
  a.index_q = {data_of(index_q), NI * (D + 8) + 16, D + 8};
  a.index_weights = {data_of(weights), NI * 2 + 1, 2};
  a.index_weights_dtype = c.weights_dtype;
  a.index_q_fp8 = {data_of(fp8), NI * (D + 16) + 32, D + 16};
  a.index_weights_out = {data_of(weights_out), NI * 3 + 2, 3};
  a.index_weights_out_dtype = c.weights_out_dtype;

  for (const auto& [name, t] : tensors_) initial_[name] = t.bytes;
}

std::string SmallLaunch::unexpected_changes() const {
  std::string lines;
  for (const auto& [name, t] : tensors_) {
    const std::vector<uint8_t>& before = initial_.at(name);
    size_t changed = 0;
    for (size_t i = 0; i < t.bytes.size(); ++i) {
      const bool may_change = t.is_output && t.in_view[i];
      if (!may_change && t.bytes[i] != before[i] && changed++ == 0) {
        lines += name + ": byte " + std::to_string(i) + " changed (" + hex(before[i], 2) + " -> " +
                 hex(t.bytes[i], 2) + ")\n";
      }
    }
    if (changed > 1) lines += name + ": " + std::to_string(changed) + " bytes changed in all\n";
  }
  return lines;
}

std::string output_differences(const SmallLaunch& expected, const SmallLaunch& actual) {
  std::string lines;
  for (const auto& [name, t] : expected.tensors()) {
    const TensorBytes& other = actual.tensors().at(name);
    size_t differing = 0;
    for (size_t i = 0; i < t.bytes.size(); ++i) {
      if (t.bytes[i] != other.bytes[i] && differing++ < 4) {
        lines += name + " byte " + std::to_string(i) + ": expected " + hex(t.bytes[i], 2) + ", got " +
                 hex(other.bytes[i], 2) + "\n";
      }
    }
    if (differing > 4) lines += name + ": " + std::to_string(differing) + " bytes differ in all\n";
  }
  return lines;
}

}  // namespace qcheck::test
