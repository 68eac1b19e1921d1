// The race cases (case_mutator.h): a GPU kernel's races, on a schedule.
//
// A race between the warps of a block (a shared-memory copy read before the
// barrier that should follow it) or between blocks shows only where many
// blocks are in flight and the data path goes through shared memory: in
// this project's kernels the staged path (T >= 512, R <= 64, D <= 128, views
// aligned for 16-byte vectors), in a user's kernel whatever its large-T path
// is. The usual cases (T <= 64) never get there, and the limit cases come
// too rarely (one load case in 12,288 executions) to find a race that shows
// in a fraction of the runs of such a case. A race case is small enough in
// bytes (about 4 MB) to come every 8th execution at first, every 32nd later.
#include "fuzz/mutator/case_mutator.h"

namespace qcheck::fuzzing {

// Dense at first (every 8th up to 512: on the H200 the planted missing
// barrier showed in one race case of a few to thirty, and the limit cases
// at 64, 128 and 256 cost seconds each), then every 32nd.
bool race_case_due(int64_t execution) { return execution < 512 ? execution % 8 == 4 : execution % 32 == 8; }

Case race_case(Xoshiro256& rng) {
  Case c = seed_case(rng, kTinyBudget);
  for (Layout* l : {&c.q_pe_layout, &c.ql_nope_layout, &c.index_q_layout, &c.weights_layout, &c.mqa_cache_layout,
                    &c.indexer_cache_layout, &c.query_out_layout, &c.index_q_fp8_layout, &c.weights_out_layout}) {
    *l = Layout::kContiguous;
  }
  c.weights_column_stride = 1;
  c.rope_dim = rng.one_in(2) ? 64 : 32;
  // D = 128 most often: a row of 16 vectors is copied by other warps than
  // the ones that read it in a 64-thread block.
  c.index_dim = rng.one_in(4) ? 64 : 128;
  c.nope_dim = 8 * (1 + static_cast<int64_t>(rng.below(8)));
  c.mqa_heads = 1 + static_cast<int64_t>(rng.below(4));
  c.indexer_heads = 1 + static_cast<int64_t>(rng.below(8));
  c.has_indexer = !rng.one_in(8);
  // The packed paths most often: with a ql_nope task in the launch, this
  // project's kernel takes 64-thread blocks (two warps) at this T.
  constexpr QueryPath kPaths[] = {QueryPath::kFp8Packed, QueryPath::kBf16Packed, QueryPath::kFp8Packed,
                                  QueryPath::kBf16Separate};
  c.query_path = rng.pick(kPaths);
  if (c.query_path != QueryPath::kBf16Packed) c.alias = AliasMode::kNone;
  c.mqa_cache_dtype = rng.one_in(2) ? FloatType::kF32 : FloatType::kBf16;
  c.indexer_cache_dtype = rng.one_in(2) ? FloatType::kF32 : FloatType::kBf16;
  c.num_tokens = 512 + static_cast<int64_t>(rng.below(512));
  set_default_scales(c);
  const SizeCap cap = {uint64_t(16) << 20, 1024, 8, 128, 64, 8192};
  repair_case(c, cap);
  return c;
}

bool next_race_case(const SizeBudget& budget, bool backend_can_race, int64_t execution, Xoshiro256& rng,
                    Case* out) {
  if (!budget.race_cases || !backend_can_race || !race_case_due(execution)) return false;
  *out = race_case(rng);
  return true;
}

}  // namespace qcheck::fuzzing
