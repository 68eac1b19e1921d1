#include "ops/fused_q/args/fused_q_args.h"

#include <cmath>
#include <cstring>
#include <sstream>
#include <utility>
#include <vector>

#include "numerics/float_bits.h"

namespace qcheck {

const char* name_of(QueryPath path) {
  switch (path) {
    case QueryPath::kFp8Packed: return "fp8-packed";
    case QueryPath::kBf16Packed: return "bf16-packed";
    case QueryPath::kBf16Separate: return "bf16-separate";
  }
  return "?";
}

int64_t query_out_width(const FusedQArgs& a) {
  return a.query_path == QueryPath::kBf16Separate ? a.rope_dim : a.nope_dim + a.rope_dim;
}

int element_bytes(FloatType type) { return type == FloatType::kF32 ? 4 : 2; }

int query_out_element_bytes(const FusedQArgs& a) { return a.query_path == QueryPath::kFp8Packed ? 1 : 2; }

uint32_t default_softmax_scale_bits(int64_t index_dim) {
  return bits_of(static_cast<float>(1.0 / std::sqrt(static_cast<double>(index_dim))));
}
uint32_t default_head_scale_bits(int64_t indexer_heads) {
  return bits_of(static_cast<float>(1.0 / std::sqrt(static_cast<double>(indexer_heads))));
}

bool ql_nope_aliases_query_out(const FusedQArgs& a) {
  return a.query_path == QueryPath::kBf16Packed && a.ql_nope.data != nullptr &&
         a.ql_nope.data == a.query_out.data && a.ql_nope.token_stride == a.query_out.token_stride &&
         a.ql_nope.head_stride == a.query_out.head_stride;
}

namespace {

// Byte range [begin, end) that a [rows, cols, width] view touches.
struct Extent {
  const char* name;
  uintptr_t begin;
  uintptr_t end;
};

class Checker {
 public:
  explicit Checker(const FusedQArgs& a) : a_(a) {}

  std::string run();

 private:
  bool fail(const std::string& message) {
    if (error_.empty()) error_ = message;
    return false;
  }
  bool dim(const char* field, int64_t value, int64_t lo, int64_t hi);
  bool view(const char* field, const void* data, int64_t rows, int64_t cols, int64_t width,
            int64_t row_stride, int64_t col_stride, int element_bytes, bool is_output);
  bool cache(const char* field, const CacheView& cache);
  bool scale(const char* field, uint32_t bits, bool must_be_normal_positive);
  void check_overlaps();

  const FusedQArgs& a_;
  std::string error_;
  std::vector<Extent> inputs_;
  std::vector<Extent> outputs_;
};

bool Checker::dim(const char* field, int64_t value, int64_t lo, int64_t hi) {
  if (value < lo || value > hi) {
    std::ostringstream s;
    s << field << " = " << value << " is outside [" << lo << ", " << hi << "]";
    return fail(s.str());
  }
  return true;
}

bool Checker::view(const char* field, const void* data, int64_t rows, int64_t cols,
                   int64_t width, int64_t row_stride, int64_t col_stride, int element_bytes,
                   bool is_output) {
  if (rows == 0 || cols == 0 || width == 0) return true;
  if (data == nullptr) return fail(std::string(field) + " is null but this launch reads or writes it");
  if (row_stride < 0 || col_stride < 0) {
    return fail(std::string(field) + " has a negative stride (strides must be >= 0)");
  }
  // Largest element offset; strides are bounded so this cannot overflow.
  const int64_t kMaxStride = int64_t(1) << 40;
  if (row_stride > kMaxStride || col_stride > kMaxStride) {
    return fail(std::string(field) + " stride exceeds 2^40 elements");
  }
  if (is_output) {
    // An output must not overlap itself: order the dimensions that have more
    // than one entry by stride; each must step past all the inner one spans.
    std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, count)
    if (rows > 1) dims.emplace_back(row_stride, rows);
    if (cols > 1) dims.emplace_back(col_stride, cols);
    if (dims.size() == 2 && dims[1].first < dims[0].first) std::swap(dims[0], dims[1]);
    int64_t span = width;  // elements covered by the dimensions inside this one
    for (const auto& [stride, count] : dims) {
      if (stride < span) {
        return fail(std::string(field) + " overlaps itself: stride " + std::to_string(stride) +
                    " is smaller than the " + std::to_string(span) +
                    " elements it must step over");
      }
      span = stride * (count - 1) + span;
    }
  }
  const uint64_t last = static_cast<uint64_t>((rows - 1) * row_stride + (cols - 1) * col_stride +
                                              width);
  const uintptr_t begin = reinterpret_cast<uintptr_t>(data);
  Extent e{field, begin, begin + static_cast<uintptr_t>(last * element_bytes)};
  (is_output ? outputs_ : inputs_).push_back(e);
  return true;
}

bool Checker::cache(const char* field, const CacheView& c) {
  if (c.data == nullptr) return fail(std::string(field) + ".data is null");
  if (c.rows < 1) return fail(std::string(field) + ".rows = " + std::to_string(c.rows) + " must be >= 1");
  if (c.row_stride < a_.rope_dim) {
    return fail(std::string(field) + ".row_stride = " + std::to_string(c.row_stride) +
                " is smaller than R = " + std::to_string(a_.rope_dim));
  }
  return view(field, c.data, c.rows, 1, a_.rope_dim, c.row_stride, 0,
              element_bytes(c.dtype), false);
}

bool Checker::scale(const char* field, uint32_t bits, bool must_be_normal_positive) {
  const uint32_t exponent = (bits >> 23) & 0xFF;
  if (must_be_normal_positive && ((bits >> 31) != 0 || exponent == 0 || exponent == 0xFF)) {
    std::ostringstream s;
    s << field << " = 0x" << std::hex << bits
      << " must be a positive, finite, normal fp32";
    return fail(s.str());
  }
  return true;
}

void Checker::check_overlaps() {
  const bool alias = ql_nope_aliases_query_out(a_);
  auto intersects = [](const Extent& x, const Extent& y) {
    return x.begin < y.end && y.begin < x.end;
  };
  for (size_t i = 0; i < outputs_.size(); ++i) {
    for (size_t j = i + 1; j < outputs_.size(); ++j) {
      if (intersects(outputs_[i], outputs_[j])) {
        fail(std::string("outputs ") + outputs_[i].name + " and " + outputs_[j].name + " overlap");
        return;
      }
    }
    for (const Extent& in : inputs_) {
      if (!intersects(outputs_[i], in)) continue;
      if (alias && std::strcmp(in.name, "ql_nope") == 0 &&
          std::strcmp(outputs_[i].name, "query_out") == 0) {
        continue;  // the exact front alias is the one permitted overlap
      }
      fail(std::string("input ") + in.name + " overlaps output " + outputs_[i].name +
           " (only ql_nope may alias query_out[..., :L], with the same address and strides)");
      return;
    }
  }
}

std::string Checker::run() {
  const FusedQArgs& a = a_;
  if (!dim("num_tokens (T)", a.num_tokens, 0, DimLimits::kMaxTokens)) return error_;
  if (!dim("mqa_heads (H)", a.mqa_heads, 1, DimLimits::kMaxHeads)) return error_;
  if (!dim("index_dim (D)", a.index_dim, 16, DimLimits::kMaxIndexDim)) return error_;
  if (a.index_dim % 16 != 0) return "index_dim (D) = " + std::to_string(a.index_dim) + " must be a multiple of 16";
  if (!dim("rope_dim (R)", a.rope_dim, 2, a.index_dim)) return error_;
  if (a.rope_dim % 2 != 0) return "rope_dim (R) = " + std::to_string(a.rope_dim) + " must be even";
  if (!dim("nope_dim (L)", a.nope_dim, 8, DimLimits::kMaxNopeDim)) return error_;
  if (a.nope_dim % 8 != 0) return "nope_dim (L) = " + std::to_string(a.nope_dim) + " must be a multiple of 8";
  if (a.has_indexer && !dim("indexer_heads (NI)", a.indexer_heads, 1, DimLimits::kMaxIndexerHeads)) {
    return error_;
  }
  if (static_cast<unsigned>(a.query_path) > 2) return "query_path is not one of fp8-packed, bf16-packed, bf16-separate";
  if (static_cast<unsigned>(a.indexer_rope) > 1) return "indexer_rope is not one of neox, interleaved";
  if (static_cast<unsigned>(a.index_weights_dtype) > 1 || static_cast<unsigned>(a.index_weights_out_dtype) > 1 ||
      static_cast<unsigned>(a.mqa_cache.dtype) > 1 || static_cast<unsigned>(a.indexer_cache.dtype) > 1) {
    return "a dtype field is not one of f32, bf16";
  }
  if (a.num_tokens == 0) return "";  // a valid no-op: nothing is read or written

  const int64_t T = a.num_tokens, H = a.mqa_heads, NI = a.indexer_heads;
  if (a.positions == nullptr) return "positions is null";
  view("positions", a.positions, T, 1, 1, 1, 0, 8, false);
  cache("mqa_cache", a.mqa_cache);
  view("q_pe", a.q_pe.data, T, H, a.rope_dim, a.q_pe.token_stride, a.q_pe.head_stride, 2, false);
  if (a.query_path != QueryPath::kBf16Separate) {
    view("ql_nope", a.ql_nope.data, T, H, a.nope_dim, a.ql_nope.token_stride,
         a.ql_nope.head_stride, 2, false);
  }
  view("query_out", a.query_out.data, T, H, query_out_width(a), a.query_out.token_stride,
       a.query_out.head_stride, query_out_element_bytes(a), true);
  if (a.query_path == QueryPath::kFp8Packed) {
    scale("q_scale", a.q_scale_bits, true);
  }
  if (a.has_indexer) {
    cache("indexer_cache", a.indexer_cache);
    view("index_q", a.index_q.data, T, NI, a.index_dim, a.index_q.token_stride,
         a.index_q.head_stride, 2, false);
    view("index_weights", a.index_weights.data, T, NI, 1, a.index_weights.token_stride,
         a.index_weights.head_stride, element_bytes(a.index_weights_dtype), false);
    view("index_q_fp8", a.index_q_fp8.data, T, NI, a.index_dim, a.index_q_fp8.token_stride,
         a.index_q_fp8.head_stride, 1, true);
    view("index_weights_out", a.index_weights_out.data, T, NI, 1,
         a.index_weights_out.token_stride, a.index_weights_out.head_stride,
         element_bytes(a.index_weights_out_dtype), true);
  }
  if (!error_.empty()) return error_;
  check_overlaps();
  return error_;
}

}  // namespace

std::string validate_fused_q_args(const FusedQArgs& args) { return Checker(args).run(); }

}  // namespace qcheck
