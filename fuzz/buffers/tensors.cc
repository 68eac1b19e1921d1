#include "fuzz/buffers/tensors.h"

#include <chrono>
#include <cstring>
#include <utility>

#include "fuzz/buffers/values.h"

namespace qcheck {

uint8_t poison_byte(Poison poison) { return poison == Poison::kA ? 0xFF : 0x5B; }

std::pair<int64_t, int64_t> aliased_elements(const TensorPlan& plan, const TensorGeometry& g) {
  for (const TensorGeometry& in : plan.tensors) {
    if (in.role != TensorRole::kInput || in.buffer != g.buffer || in.type != g.type ||
        in.rows != g.rows || in.cols != g.cols || in.row_stride != g.row_stride ||
        in.col_stride != g.col_stride || in.stride_unit != g.stride_unit) {
      continue;
    }
    const int64_t first = in.offset - g.offset;
    if (first >= 0 && first + in.width <= g.width) return {first, first + in.width};
  }
  return {0, 0};
}

bool TensorSet::row_written(const TensorGeometry& g, int64_t row) const {
  if (g.role != TensorRole::kScatterOutput) return g.role == TensorRole::kOutput;
  const size_t index = static_cast<size_t>(&g - plan.tensors.data());
  if (index >= row_masks.size() || row_masks[index].empty()) return true;
  return row_masks[index][static_cast<size_t>(row)] != 0;
}

void fill_poison(TensorSet& set, Poison poison) {
  set.poison = poison;
  const uint8_t byte = poison_byte(poison);
  const bool output_buffers_hold_inputs = [&] {
    for (const TensorGeometry& g : set.plan.tensors) {
      if (g.role == TensorRole::kInput && set.plan.buffers[g.buffer].is_output) return true;
    }
    return false;
  }();
  for (const TensorGeometry& g : set.plan.tensors) {
    if (g.role == TensorRole::kInput) continue;
    // An aliased input's elements (ql_nope = query_out[..., :L]) keep their values.
    const auto [first, end] =
        output_buffers_hold_inputs ? aliased_elements(set.plan, g) : std::pair<int64_t, int64_t>{0, 0};
    const int64_t bytes = element_bytes(g.type);
    for (int64_t row = 0; row < g.rows; ++row) {
      for (int64_t col = 0; col < g.cols; ++col) {
        if (first > 0) std::memset(set.element(g, row, col, 0), byte, static_cast<size_t>(first * bytes));
        const int64_t from = end > first ? end : 0;
        std::memset(set.element(g, row, col, from), byte, static_cast<size_t>((g.width - from) * bytes));
      }
    }
  }
}

TensorSet allocate_tensor_set(TensorPlan plan, Poison poison) {
  TensorSet set;
  set.plan = std::move(plan);
  set.buffers.reserve(set.plan.buffers.size());
  for (const BufferPlan& b : set.plan.buffers) {
    set.buffers.emplace_back(static_cast<size_t>(b.payload_bytes));
  }
  fill_poison(set, poison);
  return set;
}

TensorSet build_tensor_set(const Case& c, Poison poison, InputTimes* times) {
  const auto start = std::chrono::steady_clock::now();
  TensorSet set;
  {
    const InputTimer timer(times, InputPart::kBuffers);
    set = allocate_tensor_set(plan_tensors(c), poison);
  }
  generate_inputs(c, set, times);
  if (times != nullptr) {
    times->add_case(c.values, std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  std::chrono::steady_clock::now() - start).count());
  }
  return set;
}

namespace {

template <typename View>
View view_of(const TensorPlan& plan, TensorId id, const std::vector<uint8_t*>& bases) {
  View v;
  const TensorGeometry* g = plan.find(id);
  if (g == nullptr) return v;
  v.data = bases[g->buffer] + g->offset * element_bytes(g->type);
  v.token_stride = g->row_stride;
  v.head_stride = g->col_stride;
  return v;
}

CacheView cache_of(const TensorPlan& plan, TensorId id, FloatType dtype,
                   const std::vector<uint8_t*>& bases) {
  CacheView v;
  v.dtype = dtype;
  const TensorGeometry* g = plan.find(id);
  if (g == nullptr) return v;
  v.data = bases[g->buffer] + g->offset * element_bytes(g->type);
  v.rows = g->rows;
  v.row_stride = g->row_stride;
  return v;
}

}  // namespace

FusedQArgs make_fused_q_args(const Case& c, const TensorPlan& plan,
                             const std::vector<uint8_t*>& bases) {
  FusedQArgs a;
  a.num_tokens = c.num_tokens;
  a.mqa_heads = c.mqa_heads;
  a.indexer_heads = c.indexer_heads;
  a.index_dim = c.index_dim;
  a.rope_dim = c.rope_dim;
  a.nope_dim = c.nope_dim;
  a.query_path = c.query_path;
  a.has_indexer = c.has_indexer;
  a.indexer_rope = c.indexer_rope;
  const TensorGeometry* positions = plan.find(TensorId::kPositions);
  a.positions = reinterpret_cast<const int64_t*>(bases[positions->buffer]);
  a.mqa_cache = cache_of(plan, TensorId::kMqaCache, c.mqa_cache_dtype, bases);
  a.indexer_cache = cache_of(plan, TensorId::kIndexerCache, c.indexer_cache_dtype, bases);
  a.q_pe = view_of<InputView>(plan, TensorId::kQPe, bases);
  a.ql_nope = view_of<InputView>(plan, TensorId::kQlNope, bases);
  a.index_q = view_of<InputView>(plan, TensorId::kIndexQ, bases);
  a.index_weights = view_of<InputView>(plan, TensorId::kIndexWeights, bases);
  a.index_weights_dtype = c.weights_dtype;
  a.query_out = view_of<OutputView>(plan, TensorId::kQueryOut, bases);
  a.index_q_fp8 = view_of<OutputView>(plan, TensorId::kIndexQFp8, bases);
  a.index_weights_out = view_of<OutputView>(plan, TensorId::kIndexWeightsOut, bases);
  a.index_weights_out_dtype = c.weights_out_dtype;
  a.q_scale_bits = c.q_scale_bits;
  a.softmax_scale_bits = c.softmax_scale_bits;
  a.head_scale_bits = c.head_scale_bits;
  return a;
}

FusedQArgs make_fused_q_args(const Case& c, TensorSet& set) {
  std::vector<uint8_t*> bases;
  for (GuardedBuffer& b : set.buffers) bases.push_back(b.payload());
  return make_fused_q_args(c, set.plan, bases);
}

}  // namespace qcheck
