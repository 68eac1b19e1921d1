// The limit cases (case_mutator.h): the hardware's limits, on a schedule.
#include <algorithm>

#include "fuzz/mutator/case_mutator.h"
#include "ops/fused_q/shapes/model_shapes.h"

namespace qcheck::fuzzing {

bool limit_case_due(int64_t execution) {
  constexpr int64_t kFirst = 64, kEvery = 4096;
  if (execution < kFirst) return false;
  if (execution >= kEvery) return execution % kEvery == 0;
  return (execution & (execution - 1)) == 0;
}

Case limit_case(Xoshiro256& rng, int64_t index) {
  Case c = seed_case(rng, kTinyBudget);
  c.memory_limit_bytes = CaseLimits::kMaxMemoryBytes;
  SizeCap cap = kDefaultBudget.large;
  cap.tokens = int64_t(1) << 17;
  switch (index % 3) {
    case 0: {
      constexpr int64_t kPast[] = {-1, 0, 1, 17};
      c.num_tokens = 65536 + rng.pick(kPast);
      cap.bytes = uint64_t(256) << 20;
      break;
    }
    case 1: {
      constexpr int64_t kLoads[] = {512, 1024, 2048, 4096};
      apply_model_shape(c, kModelShapes[rng.below(kModelShapeCount)]);
      c.num_tokens = rng.pick(kLoads) + static_cast<int64_t>(rng.below(16));
      c.cache_rows = 8192 + static_cast<int64_t>(rng.below(2)) * 57344;
      cap.bytes = uint64_t(512) << 20;  // T halves until it fits (never below 512 at H = 128)
      break;
    }
    default: {
      // Every other view contiguous (or a non-padded special layout): only
      // the target's rows are 2^26 elements of padding apart, so 65 tokens
      // span 2^32 elements.
      for (Layout* l : {&c.q_pe_layout, &c.ql_nope_layout, &c.index_q_layout, &c.weights_layout,
                        &c.mqa_cache_layout, &c.indexer_cache_layout, &c.query_out_layout, &c.index_q_fp8_layout,
                        &c.weights_out_layout}) {
        if (*l == Layout::kPaddedRows) *l = Layout::kContiguous;
      }
      c.mqa_heads = 1, c.indexer_heads = 1, c.index_dim = 16, c.nope_dim = 8;
      c.rope_dim = std::min<int64_t>(c.rope_dim, 16);
      set_default_scales(c);
      c.row_padding = CaseLimits::kMaxRowPadding;
      c.num_tokens = 65 + static_cast<int64_t>(rng.below(8));
      if (rng.one_in(2)) {
        c.has_indexer = true;
        c.index_q_fp8_layout = Layout::kPaddedRows;
      } else {
        c.query_path = QueryPath::kFp8Packed;
        c.alias = AliasMode::kNone;
        c.query_out_layout = Layout::kPaddedRows;
      }
      cap.bytes = uint64_t(6) << 30;
      break;
    }
  }
  repair_case(c, cap);
  return c;
}

bool next_limit_case(const SizeBudget& budget, int64_t execution, Xoshiro256& rng, int64_t* index, Case* out) {
  if (!budget.limit_cases || !limit_case_due(execution)) return false;
  *out = limit_case(rng, (*index)++);
  return true;
}

}  // namespace qcheck::fuzzing
