#include "tests/fuzz/model_cases.h"

#include <gtest/gtest.h>

#include "fuzz/backends/backend.h"

namespace qcheck::test {

Case model_base_case() {
  Case c = qcheck::small_case();  // T 17, H 3, NI 2, D 32, P 40
  c.rope_dim = 16;
  c.nope_dim = 24;
  c.positions = PositionsRecipe::kRandom;
  c.values = ValueRecipe::kNormal;
  c.seed = 1;
  set_default_scales(c);
  return c;
}

Case model_case(const std::function<void(Case&)>& edit) {
  Case c = model_base_case();
  edit(c);
  set_default_scales(c);
  return c;
}

void apply_layout_mix(LayoutMix mix, Case& c) {
  const bool alias = c.alias == AliasMode::kExactFront;
  switch (mix) {
    case LayoutMix::kContiguous: return;
    case LayoutMix::kPadded:
      c.q_pe_layout = c.ql_nope_layout = c.index_q_layout = c.weights_layout = Layout::kPaddedRows;
      c.mqa_cache_layout = c.indexer_cache_layout = Layout::kPaddedRows;
      c.query_out_layout = c.index_q_fp8_layout = c.weights_out_layout = Layout::kPaddedRows;
      if (alias) c.ql_nope_layout = Layout::kContiguous;  // it takes query_out's strides
      c.row_padding = 3;  // odd: rows start at every alignment
      return;
    case LayoutMix::kProduction:
      c.q_pe_layout = Layout::kWideRowView;
      c.ql_nope_layout = alias ? Layout::kContiguous : Layout::kHeadMajor;
      c.weights_layout = Layout::kPaddedRows;
      c.query_out_layout = c.index_q_fp8_layout = c.weights_out_layout = Layout::kPaddedRows;
      c.row_padding = 8;
      return;
  }
}

std::vector<Case> model_grid() {
  using F = FloatType;
  struct DtypeMix {
    FloatType mqa_cache, indexer_cache, weights_in, weights_out;
  };
  const DtypeMix dtype_mixes[] = {{F::kF32, F::kF32, F::kF32, F::kF32},
                                  {F::kBf16, F::kBf16, F::kBf16, F::kBf16},
                                  {F::kF32, F::kBf16, F::kBf16, F::kF32},
                                  {F::kBf16, F::kF32, F::kF32, F::kBf16}};
  struct QueryMode {
    QueryPath path;
    AliasMode alias;
  };
  const QueryMode query_modes[] = {{QueryPath::kFp8Packed, AliasMode::kNone},
                                   {QueryPath::kBf16Packed, AliasMode::kNone},
                                   {QueryPath::kBf16Packed, AliasMode::kExactFront},
                                   {QueryPath::kBf16Separate, AliasMode::kNone}};
  struct IndexerMode {
    bool on;
    RopeStyle style;
  };
  const IndexerMode indexer_modes[] = {
      {true, RopeStyle::kNeox}, {true, RopeStyle::kInterleaved}, {false, RopeStyle::kNeox}};
  const LayoutMix layout_mixes[] = {LayoutMix::kContiguous, LayoutMix::kPadded,
                                    LayoutMix::kProduction};
  const PositionsRecipe positions[] = {PositionsRecipe::kArangeModP, PositionsRecipe::kRandom,
                                       PositionsRecipe::kNearEnd, PositionsRecipe::kRepeated};

  std::vector<Case> grid;
  uint64_t seed = 1;
  for (int64_t tokens : {1, 15, 16, 17, 33}) {
    for (const QueryMode& query : query_modes) {
      for (const IndexerMode& indexer : indexer_modes) {
        for (size_t d = 0; d < 4; ++d) {
          for (LayoutMix layout : layout_mixes) {
            for (int64_t column_stride : {1, 2}) {
              Case grid_case = model_case([&](Case& c) {
                c.num_tokens = tokens;
                c.query_path = query.path;
                c.alias = query.alias;
                c.has_indexer = indexer.on;
                c.indexer_rope = indexer.style;
                c.mqa_cache_dtype = dtype_mixes[d].mqa_cache;
                c.indexer_cache_dtype = dtype_mixes[d].indexer_cache;
                c.weights_dtype = dtype_mixes[d].weights_in;
                c.weights_out_dtype = dtype_mixes[d].weights_out;
                apply_layout_mix(layout, c);
                c.weights_column_stride = column_stride;
                c.q_scale_bits = d % 2 == 0 ? kQScaleOne : kQScale037;
                c.values = ValueRecipe::kMixed;
                c.positions = positions[seed % 4];
                c.seed = seed++;
              });
              // The head_scale is an argument: production layouts pass
              // DeepSeek-V3.2's RN(64^-0.5) = 0.125, not RN(NI^-0.5) of this NI.
              if (layout == LayoutMix::kProduction) {
                grid_case.head_scale_bits = default_head_scale_bits(64);
              }
              grid.push_back(grid_case);
            }
          }
        }
      }
    }
  }
  // The recipes aimed at rules only some values decide (nan-rows,
  // contraction, ties): every query mode, f32 caches (the contraction
  // recipe's rows need them), q_scale 1.
  for (ValueRecipe recipe : {ValueRecipe::kNanRows, ValueRecipe::kContraction, ValueRecipe::kTies}) {
    for (const QueryMode& query : query_modes) {
      grid.push_back(model_case([&](Case& c) {
        c.query_path = query.path;
        c.alias = query.alias;
        c.indexer_rope = seed % 2 ? RopeStyle::kNeox : RopeStyle::kInterleaved;
        c.values = recipe;
        c.seed = seed++;
      }));
    }
  }
  return grid;
}

std::vector<Case> real_and_edge_dims() {
  std::vector<Case> launches;
  uint64_t seed = 10000;
  for (QueryPath path :
       {QueryPath::kFp8Packed, QueryPath::kBf16Packed, QueryPath::kBf16Separate}) {
    launches.push_back(model_case([&](Case& c) {  // GLM-5 at TP4
      c.num_tokens = 17;
      c.mqa_heads = 16;
      c.indexer_heads = 32;
      c.index_dim = 128;
      c.rope_dim = 64;
      c.nope_dim = 512;
      c.query_path = path;
      c.alias = path == QueryPath::kBf16Packed ? AliasMode::kExactFront : AliasMode::kNone;
      c.indexer_rope = RopeStyle::kInterleaved;
      apply_layout_mix(LayoutMix::kProduction, c);
      c.values = ValueRecipe::kMixed;
      c.seed = seed++;
    }));
    launches.push_back(model_case([&](Case& c) {  // odd heads, R = D
      c.num_tokens = 18;
      c.mqa_heads = 5;
      c.indexer_heads = 3;
      c.index_dim = 32;
      c.rope_dim = 32;
      c.query_path = path;
      apply_layout_mix(LayoutMix::kPadded, c);
      c.weights_column_stride = 3;
      c.values = ValueRecipe::kMixed;
      c.seed = seed++;
    }));
    launches.push_back(model_case([&](Case& c) {  // the smallest dims
      c.num_tokens = 31;
      c.mqa_heads = 1;
      c.indexer_heads = 1;
      c.index_dim = 16;
      c.rope_dim = 2;
      c.nope_dim = 8;
      c.query_path = path;
      c.indexer_rope = RopeStyle::kInterleaved;
      c.values = ValueRecipe::kMixed;
      c.seed = seed++;
    }));
  }
  return launches;
}

std::string model_backend_name(const char* suffix) {
  return suffix[0] == '\0' ? std::string("cpu-model") : std::string("cpu-model-") + suffix;
}

Verdict verdict_of(const std::string& backend, const Case& c, size_t max_listed) {
  const Backend* b = find_backend(backend);
  if (b == nullptr) {
    ADD_FAILURE() << "no backend " << backend << " (known: " << backend_names() << ")";
    Verdict missing;
    missing.outcome = Outcome::runtime_error("no backend " + backend);
    return missing;
  }
  VerdictOptions options;
  options.oracle_rows = OracleRows::kScalar;
  options.max_listed = max_listed;
  return run_verdict(c, *b, options);
}

}  // namespace qcheck::test
