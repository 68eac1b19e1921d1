#include "fuzz/case/tensor_plan.h"

namespace qcheck {

const char* name_of(TensorId id) {
  switch (id) {
    case TensorId::kPositions: return "positions";
    case TensorId::kQPe: return "q_pe";
    case TensorId::kQlNope: return "ql_nope";
    case TensorId::kIndexQ: return "index_q";
    case TensorId::kIndexWeights: return "index_weights";
    case TensorId::kMqaCache: return "mqa_cache";
    case TensorId::kIndexerCache: return "indexer_cache";
    case TensorId::kQueryOut: return "query_out";
    case TensorId::kIndexQFp8: return "index_q_fp8";
    case TensorId::kIndexWeightsOut: return "index_weights_out";
  }
  return "?";
}

const char* name_of(ElementType type) {
  switch (type) {
    case ElementType::kInt64: return "int64";
    case ElementType::kF32: return "f32";
    case ElementType::kBf16: return "bf16";
    case ElementType::kE4m3: return "e4m3";
    case ElementType::kInt32: return "int32";
    case ElementType::kU8: return "u8";
    case ElementType::kUe8m0: return "ue8m0";
    case ElementType::kE2m1x2: return "e2m1x2";
    case ElementType::kE4m3fnuz: return "e4m3fnuz";
  }
  return "?";
}

const char* name_of(TensorRole role) {
  switch (role) {
    case TensorRole::kInput: return "input";
    case TensorRole::kOutput: return "output";
    case TensorRole::kUntouchedOutput: return "untouched output";
    case TensorRole::kScatterOutput: return "scatter output";
  }
  return "?";
}

int element_bytes(ElementType type) {
  switch (type) {
    case ElementType::kInt64: return 8;
    case ElementType::kF32:
    case ElementType::kInt32: return 4;
    case ElementType::kBf16: return 2;
    case ElementType::kE4m3:
    case ElementType::kU8:
    case ElementType::kUe8m0:
    case ElementType::kE2m1x2:
    case ElementType::kE4m3fnuz: return 1;
  }
  return 1;
}

int64_t TensorGeometry::byte_offset(int64_t row, int64_t col, int64_t i) const {
  const int64_t bytes = element_bytes(type);
  const int64_t unit = stride_unit == 0 ? bytes : stride_unit;
  return (offset + row * row_stride + col * col_stride) * unit + i * bytes;
}

const TensorGeometry* TensorPlan::find(TensorId id) const {
  for (const TensorGeometry& t : tensors) {
    if (t.id == id) return &t;
  }
  return nullptr;
}

uint64_t TensorPlan::total_bytes() const {
  uint64_t total = 0;
  for (const BufferPlan& b : buffers) {
    total += static_cast<uint64_t>(b.payload_bytes) + 2 * kSentinelBytes;
  }
  return total;
}

namespace {

ElementType type_of(FloatType t) {
  return t == FloatType::kF32 ? ElementType::kF32 : ElementType::kBf16;
}

class Planner {
 public:
  explicit Planner(const Case& c) : c_(c) {
    plan_.tensors.reserve(11);  // every tensor a case can have (with the alias view): one allocation each
    plan_.buffers.reserve(10);
  }

  // A [rows, cols, width] tensor in a buffer of its own. `column_step` is the
  // stride between columns before padding (width, or the weights' column
  // stride).
  void add(TensorId id, TensorRole role, ElementType type, int64_t rows, int64_t cols,
           int64_t width, Layout layout, int64_t column_step) {
    TensorGeometry g{id,    role, type, rows, cols,
                     width, 0,    0,    0,    static_cast<int>(plan_.buffers.size()), name_of(id)};
    const int64_t pad = c_.row_padding;
    int64_t elements = 0;
    switch (layout) {
      case Layout::kContiguous:
        g.col_stride = column_step;
        g.row_stride = cols * column_step;
        elements = rows * g.row_stride;
        break;
      case Layout::kPaddedRows:
        // Every head row of a [T, N, W] tensor gets `pad` elements after it;
        // a scalar per head (weights) keeps its column step; every token row
        // (or cache row) gets `pad` elements after it.
        g.col_stride = (width > 1 && cols > 1) ? width + pad : column_step;
        g.row_stride = cols * g.col_stride + pad;
        elements = rows * g.row_stride;
        break;
      case Layout::kHeadMajor:  // [cols][rows][width]
        g.row_stride = width;
        g.col_stride = rows * width;
        elements = cols * rows * width;
        break;
      case Layout::kWideRowView:
        g.col_stride = kWideRowPrefix + width;
        g.row_stride = cols * g.col_stride;
        g.offset = kWideRowPrefix;
        elements = rows * g.row_stride;
        break;
    }
    const bool is_output = role != TensorRole::kInput;
    plan_.buffers.push_back(BufferPlan{name_of(id), elements * element_bytes(type), is_output});
    plan_.tensors.push_back(g);
  }

  TensorPlan finish() { return std::move(plan_); }

 private:
  const Case& c_;
  TensorPlan plan_;
};

}  // namespace

TensorPlan plan_tensors(const Case& c) {
  const int64_t T = c.num_tokens, H = c.mqa_heads, NI = c.indexer_heads;
  const int64_t D = c.index_dim, R = c.rope_dim, L = c.nope_dim, P = c.cache_rows;
  const bool separate = c.query_path == QueryPath::kBf16Separate;
  const int64_t query_width = separate ? R : L + R;
  const ElementType query_type =
      c.query_path == QueryPath::kFp8Packed ? ElementType::kE4m3 : ElementType::kBf16;
  const TensorRole indexer_out = c.has_indexer ? TensorRole::kOutput : TensorRole::kUntouchedOutput;
  const TensorRole in = TensorRole::kInput;

  Planner p(c);
  p.add(TensorId::kPositions, in, ElementType::kInt64, T, 1, 1, Layout::kContiguous, 1);
  p.add(TensorId::kMqaCache, in, type_of(c.mqa_cache_dtype), P, 1, R, c.mqa_cache_layout, R);
  p.add(TensorId::kQPe, in, ElementType::kBf16, T, H, R, c.q_pe_layout, R);
  const bool alias = c.alias == AliasMode::kExactFront;
  if (!separate && !alias) {
    p.add(TensorId::kQlNope, in, ElementType::kBf16, T, H, L, c.ql_nope_layout, L);
  }
  if (c.has_indexer) {
    p.add(TensorId::kIndexerCache, in, type_of(c.indexer_cache_dtype), P, 1, R,
          c.indexer_cache_layout, R);
    p.add(TensorId::kIndexQ, in, ElementType::kBf16, T, NI, D, c.index_q_layout, D);
    p.add(TensorId::kIndexWeights, in, type_of(c.weights_dtype), T, NI, 1, c.weights_layout,
          c.weights_column_stride);
  }
  p.add(TensorId::kQueryOut, TensorRole::kOutput, query_type, T, H, query_width, c.query_out_layout,
        query_width);
  p.add(TensorId::kIndexQFp8, indexer_out, ElementType::kE4m3, T, NI, D, c.index_q_fp8_layout, D);
  p.add(TensorId::kIndexWeightsOut, indexer_out, type_of(c.weights_out_dtype), T, NI, 1,
        c.weights_out_layout, 1);
  TensorPlan plan = p.finish();

  if (alias) {
    // ql_nope = query_out[..., :L]: same buffer, address and strides.
    TensorGeometry view = *plan.find(TensorId::kQueryOut);
    view.id = TensorId::kQlNope;
    view.name = name_of(TensorId::kQlNope);
    view.role = TensorRole::kInput;
    view.width = L;
    plan.tensors.push_back(view);
  }
  return plan;
}

OutsideShape outside_shape(const TensorGeometry& g) {
  OutsideShape o;
  const bool cache = g.id == TensorId::kMqaCache || g.id == TensorId::kIndexerCache;
  o.ndim = g.id == TensorId::kPositions ? 1 : cache ? 2 : 3;
  const int64_t shape[3] = {g.rows, g.cols, g.width};
  const int64_t strides[3] = {g.row_stride, g.col_stride, 1};
  const int axes[3] = {0, cache ? 2 : 1, 2};
  for (int d = 0; d < o.ndim; ++d) {
    o.shape[d] = shape[axes[d]];
    o.strides[d] = strides[axes[d]];
  }
  return o;
}

}  // namespace qcheck
