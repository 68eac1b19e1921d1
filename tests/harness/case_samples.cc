#include "tests/harness/case_samples.h"

#include "core/random/prng.h"
#include "fuzz/case/case_names.h"

namespace qcheck::test {

Case small_case() {
  Case c = qcheck::small_case();
  c.seed = 7;
  return c;
}

Case sample_case(uint64_t index) {
  Xoshiro256 rng(mix_keys({0x5A3B1Eull, index}));
  auto pick = [&](unsigned count) { return static_cast<unsigned>(rng.below(count)); };
  Case c;
  c.num_tokens = rng.between(0, 20);
  c.mqa_heads = rng.between(1, 5);
  c.indexer_heads = rng.between(1, 4);
  c.index_dim = 16 * rng.between(1, 4);
  c.rope_dim = 2 * rng.between(1, c.index_dim / 2);
  c.nope_dim = 8 * rng.between(1, 3);
  c.query_path = static_cast<QueryPath>(pick(3));
  c.has_indexer = rng.one_in(4) ? false : true;
  c.indexer_rope = static_cast<RopeStyle>(pick(2));
  c.mqa_cache_dtype = static_cast<FloatType>(pick(2));
  c.indexer_cache_dtype = static_cast<FloatType>(pick(2));
  c.weights_dtype = static_cast<FloatType>(pick(2));
  c.weights_out_dtype = static_cast<FloatType>(pick(2));
  const Layout q_pe_layouts[] = {Layout::kContiguous, Layout::kPaddedRows, Layout::kWideRowView};
  const Layout ql_nope_layouts[] = {Layout::kContiguous, Layout::kPaddedRows, Layout::kHeadMajor};
  c.q_pe_layout = q_pe_layouts[pick(3)];
  c.ql_nope_layout = ql_nope_layouts[pick(3)];
  c.index_q_layout = static_cast<Layout>(pick(2));
  c.weights_layout = static_cast<Layout>(pick(2));
  c.mqa_cache_layout = static_cast<Layout>(pick(2));
  c.indexer_cache_layout = static_cast<Layout>(pick(2));
  c.weights_column_stride = rng.between(1, 3);
  c.query_out_layout = static_cast<Layout>(pick(2));
  c.index_q_fp8_layout = static_cast<Layout>(pick(2));
  c.weights_out_layout = static_cast<Layout>(pick(2));
  c.row_padding = rng.between(1, 9);
  if (c.query_path == QueryPath::kBf16Packed && rng.one_in(2)) {
    c.alias = AliasMode::kExactFront;
    c.ql_nope_layout = Layout::kContiguous;
  }
  c.cache_rows = rng.between(1, 40);
  c.positions = static_cast<PositionsRecipe>(pick(enum_count<PositionsRecipe>()));
  c.values = static_cast<ValueRecipe>(pick(enum_count<ValueRecipe>()));
  c.profile = rng.one_in(2) ? "qcheck" : "vllm-triton";
  // Powers of two from 2^-3 to 2^3, or (profile qcheck only) any normal value.
  c.q_scale_bits = 0x3F800000u + (static_cast<uint32_t>(rng.between(-3, 3)) << 23);
  if (c.profile == "qcheck" && rng.one_in(2))
    c.q_scale_bits = 0x3E000000u + static_cast<uint32_t>(rng.below(1u << 24));
  c.softmax_scale_bits = static_cast<uint32_t>(rng.next());
  c.head_scale_bits = static_cast<uint32_t>(rng.next());
  c.seed = rng.next();
  c.memory_limit_bytes =
      rng.one_in(2) ? CaseLimits::kMaxMemoryBytes : (uint64_t(1) << 20) + rng.below(1u << 20);
  return c;
}

std::vector<NamedCase> covering_grid() {
  std::vector<NamedCase> grid;
  auto add = [&](const std::string& name, auto change) {
    Case c = small_case();
    change(c);
    set_default_scales(c);
    grid.push_back({name, c});
  };
  for (unsigned p = 0; p < enum_count<QueryPath>(); ++p) {
    const QueryPath path = static_cast<QueryPath>(p);
    const std::string n = name_of(path);
    add(n, [&](Case& c) { c.query_path = path; });
    add(n + "-no-indexer", [&](Case& c) {
      c.query_path = path;
      c.has_indexer = false;
    });
    add(n + "-real-dims", [&](Case& c) {
      c.query_path = path;
      c.index_dim = 128, c.rope_dim = 64, c.nope_dim = 512, c.mqa_heads = 2, c.indexer_heads = 3;
      c.q_pe_layout = Layout::kWideRowView, c.ql_nope_layout = Layout::kHeadMajor;
      c.weights_layout = Layout::kPaddedRows, c.row_padding = 128;  // production: row stride D + NI
      c.values = ValueRecipe::kMixed;
    });
  }
  add("alias", [](Case& c) { c.alias = AliasMode::kExactFront; });
  add("alias-padded", [](Case& c) {
    c.alias = AliasMode::kExactFront;
    c.query_out_layout = Layout::kPaddedRows;
  });
  add("alias-no-indexer", [](Case& c) {
    c.alias = AliasMode::kExactFront;
    c.has_indexer = false;
  });
  add("interleaved", [](Case& c) { c.indexer_rope = RopeStyle::kInterleaved; });
  add("bf16-caches", [](Case& c) { c.mqa_cache_dtype = c.indexer_cache_dtype = FloatType::kBf16; });
  add("bf16-weights-in", [](Case& c) { c.weights_dtype = FloatType::kBf16; });
  add("bf16-weights-out", [](Case& c) { c.weights_out_dtype = FloatType::kBf16; });
  add("fp8-q-scale-0.37", [](Case& c) {
    c.query_path = QueryPath::kFp8Packed;
    c.q_scale_bits = 0x3EBD70A4u;
  });
  add("padded-inputs", [](Case& c) {
    c.q_pe_layout = c.ql_nope_layout = c.index_q_layout = c.weights_layout = Layout::kPaddedRows;
    c.mqa_cache_layout = c.indexer_cache_layout = Layout::kPaddedRows;
    c.row_padding = 3;
  });
  add("padded-outputs", [](Case& c) {
    c.query_out_layout = c.index_q_fp8_layout = c.weights_out_layout = Layout::kPaddedRows;
    c.row_padding = 5;
  });
  add("head-major-ql-nope", [](Case& c) { c.ql_nope_layout = Layout::kHeadMajor; });
  add("wide-row-q-pe", [](Case& c) { c.q_pe_layout = Layout::kWideRowView; });
  add("weights-column-stride-2", [](Case& c) { c.weights_column_stride = 2; });
  for (unsigned v = 0; v < enum_count<ValueRecipe>(); ++v) {
    const ValueRecipe recipe = static_cast<ValueRecipe>(v);
    add(std::string("values-") + name_of(recipe), [&](Case& c) { c.values = recipe; });
  }
  // The fp8 path with the recipes aimed at its rounding (f32 caches, q_scale 1).
  add("values-contraction-fp8", [](Case& c) {
    c.values = ValueRecipe::kContraction;
    c.query_path = QueryPath::kFp8Packed;
    c.mqa_cache_dtype = c.indexer_cache_dtype = FloatType::kF32;
    c.q_scale_bits = 0x3F800000u;
  });
  add("values-scale-band-interleaved", [](Case& c) {
    c.values = ValueRecipe::kScaleBand;
    c.indexer_rope = RopeStyle::kInterleaved;
  });
  for (unsigned p = 0; p < enum_count<PositionsRecipe>(); ++p) {
    const PositionsRecipe recipe = static_cast<PositionsRecipe>(p);
    add(std::string("positions-") + name_of(recipe), [&](Case& c) { c.positions = recipe; });
  }
  for (int64_t t : {0, 1, 15, 16, 33}) {
    add("T=" + std::to_string(t), [&](Case& c) { c.num_tokens = t; });
  }
  add("odd-heads", [](Case& c) {
    c.mqa_heads = 5;
    c.indexer_heads = 3;
  });
  add("profile-vllm-triton", [](Case& c) {
    c.profile = "vllm-triton";
    c.values = ValueRecipe::kMixed;
  });
  // A head_scale argument that is not NI^-0.5 (a TP shard passes the
  // scale of all indexer heads): add() would reset the scales.
  Case head_scale = small_case();
  head_scale.head_scale_bits = default_head_scale_bits(64);
  grid.push_back({"head-scale-argument", head_scale});
  return grid;
}

std::vector<Case> round_trip_cases() {
  std::vector<Case> all;
  for (const NamedCase& n : covering_grid()) all.push_back(n.c);
  for (uint64_t i = 0; i < 200; ++i) all.push_back(sample_case(i));
  Case edited = sample_case(7);
  ValueEdit weight, position;
  weight.tensor = TensorId::kIndexWeights, weight.row = 1, weight.rows = -1, weight.head = 0, weight.bits = 0x3F800000;
  position.tensor = TensorId::kPositions, position.row = 2, position.bits = 0xFFFFFFFFFFFFFFFFull;  // -1 as int64
  edited.edits = {weight, position, ValueEdit{}};
  all.push_back(edited);
  return all;
}

}  // namespace qcheck::test
