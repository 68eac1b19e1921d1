#include "tests/fuzz/model_vs_oracle.h"

#include "reference/fused_q_oracle.h"
#include "reference/profile.h"
#include "reference/row_ops.h"

namespace qcheck::test {

ModelVsOracle run_model_and_oracle(const LaunchSpec& spec, PlantedCpuBug bug) {
  LaunchTensors expected(spec);
  LaunchTensors got(spec);
  ModelVsOracle result;
  result.oracle_error = run_fused_q_oracle(expected.args(), qcheck_profile(), scalar_row_ops());
  result.model_error = run_blocked_model(got.args(), bug);
  result.differing = differing_buffers(expected, got);
  result.detail = compare_buffers(expected, got);
  return result;
}

namespace {

struct DtypeMix {
  FloatType mqa_cache, indexer_cache, weights_in, weights_out;
};
struct LayoutMix {
  Layout inputs, outputs;
};

}  // namespace

std::vector<LaunchSpec> covering_grid() {
  using F = FloatType;
  const DtypeMix dtype_mixes[] = {{F::kF32, F::kF32, F::kF32, F::kF32},
                                  {F::kBf16, F::kBf16, F::kBf16, F::kBf16},
                                  {F::kF32, F::kBf16, F::kBf16, F::kF32},
                                  {F::kBf16, F::kF32, F::kF32, F::kBf16}};
  const LayoutMix layout_mixes[] = {{Layout::kContiguous, Layout::kContiguous},
                                    {Layout::kPadded, Layout::kPadded},
                                    {Layout::kHeadMajor, Layout::kPadded}};
  struct QueryMode {
    QueryPath path;
    bool alias;
  };
  const QueryMode query_modes[] = {{QueryPath::kFp8Packed, false},
                                   {QueryPath::kBf16Packed, false},
                                   {QueryPath::kBf16Packed, true},
                                   {QueryPath::kBf16Separate, false}};
  struct IndexerMode {
    bool on;
    RopeStyle style;
  };
  const IndexerMode indexer_modes[] = {
      {true, RopeStyle::kNeox}, {true, RopeStyle::kInterleaved}, {false, RopeStyle::kNeox}};

  std::vector<LaunchSpec> grid;
  uint64_t seed = 1;
  for (int64_t tokens : {1, 15, 16, 17, 33}) {
    for (const QueryMode& query : query_modes) {
      for (const IndexerMode& indexer : indexer_modes) {
        for (size_t d = 0; d < 4; ++d) {
          for (const LayoutMix& layout : layout_mixes) {
            for (int64_t column_stride : {1, 2}) {
              LaunchSpec s;
              s.tokens = tokens;
              s.path = query.path;
              s.alias = query.alias;
              s.has_indexer = indexer.on;
              s.indexer_rope = indexer.style;
              s.mqa_cache = dtype_mixes[d].mqa_cache;
              s.indexer_cache = dtype_mixes[d].indexer_cache;
              s.weights_in = dtype_mixes[d].weights_in;
              s.weights_out = dtype_mixes[d].weights_out;
              s.input_layout = layout.inputs;
              s.output_layout = layout.outputs;
              s.weights_column_stride = column_stride;
              s.q_scale_bits = d % 2 == 0 ? 0x3F800000u : 0x3EBD70A4u;  // 1.0, 0.37f
              s.seed = seed++;
              grid.push_back(s);
            }
          }
        }
      }
    }
  }
  return grid;
}

std::vector<LaunchSpec> shape_launches() {
  std::vector<LaunchSpec> launches;
  uint64_t seed = 10000;
  const QueryPath paths[] = {QueryPath::kFp8Packed, QueryPath::kBf16Packed,
                             QueryPath::kBf16Separate};
  for (QueryPath path : paths) {
    // GLM-5 at TP4: H 16, NI 32, R 64, D 128, L 512, production-like views.
    LaunchSpec real;
    real.tokens = 17;
    real.mqa_heads = 16;
    real.indexer_heads = 32;
    real.index_dim = 128;
    real.rope_dim = 64;
    real.nope_dim = 512;
    real.path = path;
    real.alias = path == QueryPath::kBf16Packed;
    real.indexer_rope = RopeStyle::kInterleaved;
    real.input_layout = Layout::kHeadMajor;
    real.seed = seed++;
    launches.push_back(real);

    LaunchSpec odd;  // odd head counts, R = D (no pass-through dims)
    odd.tokens = 18;
    odd.mqa_heads = 5;
    odd.indexer_heads = 3;
    odd.index_dim = 32;
    odd.rope_dim = 32;
    odd.path = path;
    odd.input_layout = Layout::kPadded;
    odd.output_layout = Layout::kHeadMajor;
    odd.weights_column_stride = 3;
    odd.seed = seed++;
    launches.push_back(odd);

    LaunchSpec tiny;  // the smallest dims the launch accepts
    tiny.tokens = 31;
    tiny.mqa_heads = 1;
    tiny.indexer_heads = 1;
    tiny.index_dim = 16;
    tiny.rope_dim = 2;
    tiny.nope_dim = 8;
    tiny.path = path;
    tiny.indexer_rope = RopeStyle::kInterleaved;
    tiny.seed = seed++;
    launches.push_back(tiny);
  }
  return launches;
}

}  // namespace qcheck::test
