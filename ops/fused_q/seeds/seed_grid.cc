#include "ops/fused_q/seeds/seed_grid.h"

#include <functional>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "fuzz/buffers/value_rows.h"
#include "fuzz/case/case_binary.h"
#include "fuzz/case/case_json.h"
#include "fuzz/case/case_names.h"
#include "fuzz/exchange/npy.h"
#include "fuzz/targets/numerics_input.h"
#include "ops/fused_q/shapes/model_shapes.h"

namespace qcheck::corpus {
namespace {

using fuzzing::kModelShapes;
using fuzzing::ModelShape;

uint64_t seed_of(const std::string& name) { return XXH64(name.data(), name.size(), 0x5EED); }

// Production layouts (SEMANTICS.md): q_pe a view of a wider row, ql_nope
// head-major, the weights a view of a row of D + NI (modelled by padded rows).
void production_layouts(Case& c) {
  c.q_pe_layout = Layout::kWideRowView;
  c.ql_nope_layout = c.alias == AliasMode::kExactFront ? Layout::kContiguous : Layout::kHeadMajor;
  c.weights_layout = Layout::kPaddedRows;
  c.row_padding = c.index_dim;
}

class Grid {
 public:
  // Adds small_case() changed by `change`; scales follow the dims.
  void add(const std::string& name, const std::function<void(Case&)>& change) {
    Case c = small_case();
    change(c);
    set_default_scales(c);
    c.seed = seed_of(name);
    cases.push_back({name, c});
  }
  std::vector<NamedCase> cases;
};

const char* path_name(QueryPath p) { return name_of(p); }

void add_model_shapes(Grid& g) {
  const QueryPath paths[] = {QueryPath::kFp8Packed, QueryPath::kBf16Packed, QueryPath::kBf16Separate};
  int i = 0;
  for (const ModelShape& shape : kModelShapes) {
    for (QueryPath path : paths) {
      // Alternate T between one token (decode) and a block plus a tail;
      // the largest shape stays at T = 1 to keep the replay fast.
      const int64_t T = (shape.mqa_heads >= 128 || i++ % 2 == 0) ? 1 : 17;
      g.add(std::string(shape.name) + "-" + path_name(path), [&](Case& c) {
        fuzzing::apply_model_shape(c, shape);
        c.num_tokens = T;
        c.query_path = path;
        c.cache_rows = 64;
        c.positions = PositionsRecipe::kRandom;
        c.values = ValueRecipe::kMixed;
        production_layouts(c);
      });
    }
  }
  // GLM-5's shared layers: no indexer (its outputs must stay untouched).
  for (const ModelShape& shape : kModelShapes) {
    if (shape.indexer_rope != RopeStyle::kInterleaved) continue;
    g.add(std::string(shape.name) + "-shared-layer-bf16-packed-alias", [&](Case& c) {
      fuzzing::apply_model_shape(c, shape);
      c.num_tokens = 5;
      c.has_indexer = false;
      c.alias = AliasMode::kExactFront;
      production_layouts(c);
    });
  }
  // Positions beyond vLLM's test (8192) on a real shape, fp8 path at q_scale 1.
  g.add("glm-5-tp4-fp8-packed-positions-near-8193", [](Case& c) {
    fuzzing::apply_model_shape(c, kModelShapes[6]);
    c.num_tokens = 3;
    c.query_path = QueryPath::kFp8Packed;
    c.cache_rows = 8193;
    c.positions = PositionsRecipe::kNearEnd;
  });
}

void add_tails(Grid& g) {
  const QueryPath paths[] = {QueryPath::kFp8Packed, QueryPath::kBf16Packed, QueryPath::kBf16Separate};
  for (int64_t T : {0, 1, 15, 16, 17, 33}) {
    for (QueryPath path : paths) {
      g.add("tokens-" + std::to_string(T) + "-" + path_name(path), [&](Case& c) {
        c.num_tokens = T;
        c.query_path = path;
      });
    }
  }
}

void add_layouts(Grid& g) {
  g.add("q-pe-padded", [](Case& c) { c.q_pe_layout = Layout::kPaddedRows; });
  g.add("q-pe-wide-row", [](Case& c) { c.q_pe_layout = Layout::kWideRowView; });
  g.add("ql-nope-padded", [](Case& c) { c.ql_nope_layout = Layout::kPaddedRows; });
  g.add("ql-nope-head-major", [](Case& c) { c.ql_nope_layout = Layout::kHeadMajor; });
  g.add("ql-nope-head-major-fp8", [](Case& c) {
    c.ql_nope_layout = Layout::kHeadMajor;
    c.query_path = QueryPath::kFp8Packed;
  });
  g.add("index-q-padded", [](Case& c) { c.index_q_layout = Layout::kPaddedRows; });
  g.add("weights-padded", [](Case& c) { c.weights_layout = Layout::kPaddedRows; c.row_padding = 5; });
  g.add("weights-column-stride-2", [](Case& c) { c.weights_column_stride = 2; });
  g.add("weights-column-stride-3-bf16", [](Case& c) {
    c.weights_column_stride = 3;
    c.weights_dtype = FloatType::kBf16;
    c.indexer_heads = 5;
  });
  g.add("caches-padded", [](Case& c) {
    c.mqa_cache_layout = c.indexer_cache_layout = Layout::kPaddedRows;
    c.row_padding = 3;
  });
  g.add("outputs-padded", [](Case& c) {
    c.query_out_layout = c.index_q_fp8_layout = c.weights_out_layout = Layout::kPaddedRows;
    c.row_padding = 7;
  });
  g.add("outputs-padded-fp8", [](Case& c) {
    c.query_out_layout = c.index_q_fp8_layout = c.weights_out_layout = Layout::kPaddedRows;
    c.query_path = QueryPath::kFp8Packed;
    c.row_padding = 1;
  });
  g.add("everything-padded-separate", [](Case& c) {
    c.q_pe_layout = c.ql_nope_layout = c.index_q_layout = c.weights_layout = Layout::kPaddedRows;
    c.mqa_cache_layout = c.indexer_cache_layout = Layout::kPaddedRows;
    c.query_out_layout = c.index_q_fp8_layout = c.weights_out_layout = Layout::kPaddedRows;
    c.query_path = QueryPath::kBf16Separate;
    c.row_padding = 2;
  });
}

void add_alias(Grid& g) {
  for (int64_t T : {1, 17}) {
    const std::string t = "-t" + std::to_string(T);
    g.add("alias" + t, [&](Case& c) { c.alias = AliasMode::kExactFront; c.num_tokens = T; });
    g.add("alias-padded" + t, [&](Case& c) {
      c.alias = AliasMode::kExactFront;
      c.query_out_layout = Layout::kPaddedRows;
      c.num_tokens = T;
    });
    g.add("alias-no-indexer" + t, [&](Case& c) {
      c.alias = AliasMode::kExactFront;
      c.has_indexer = false;
      c.num_tokens = T;
    });
  }
}

void add_dtypes_and_styles(Grid& g) {
  g.add("interleaved", [](Case& c) { c.indexer_rope = RopeStyle::kInterleaved; });
  g.add("rope-dim-2", [](Case& c) { c.rope_dim = 2; });
  g.add("rope-dim-equals-index-dim", [](Case& c) { c.rope_dim = c.index_dim; c.indexer_rope = RopeStyle::kInterleaved; });
  g.add("bf16-caches", [](Case& c) { c.mqa_cache_dtype = c.indexer_cache_dtype = FloatType::kBf16; });
  g.add("bf16-mqa-cache-fp8", [](Case& c) { c.mqa_cache_dtype = FloatType::kBf16; c.query_path = QueryPath::kFp8Packed; });
  g.add("bf16-weights-in", [](Case& c) { c.weights_dtype = FloatType::kBf16; });
  g.add("bf16-weights-out", [](Case& c) { c.weights_out_dtype = FloatType::kBf16; c.values = ValueRecipe::kSpecials; });
  g.add("bf16-weights-in-and-out", [](Case& c) { c.weights_dtype = c.weights_out_dtype = FloatType::kBf16; });
  g.add("no-indexer-fp8", [](Case& c) { c.has_indexer = false; c.query_path = QueryPath::kFp8Packed; });
  g.add("no-indexer-separate", [](Case& c) { c.has_indexer = false; c.query_path = QueryPath::kBf16Separate; });
}

void add_recipes(Grid& g) {
  const QueryPath paths[] = {QueryPath::kFp8Packed, QueryPath::kBf16Packed};
  for (unsigned v = 0; v < enum_count<ValueRecipe>(); ++v) {
    const ValueRecipe recipe = static_cast<ValueRecipe>(v);
    for (QueryPath path : paths) {
      g.add(std::string("values-") + name_of(recipe) + "-" + path_name(path), [&](Case& c) {
        c.values = recipe;
        c.query_path = path;
        c.indexer_rope = path == QueryPath::kFp8Packed ? RopeStyle::kNeox : RopeStyle::kInterleaved;
      });
    }
  }
  // The log2f band needs an f32 indexer cache and full-size rows.
  g.add("values-scale-band-real-dims", [](Case& c) {
    c.values = ValueRecipe::kScaleBand;
    c.index_dim = 128, c.rope_dim = 64, c.nope_dim = 64;
    c.num_tokens = 16;
  });
  for (unsigned p = 0; p < enum_count<PositionsRecipe>(); ++p) {
    const PositionsRecipe recipe = static_cast<PositionsRecipe>(p);
    g.add(std::string("positions-") + name_of(recipe), [&](Case& c) {
      c.positions = recipe;
      c.values = ValueRecipe::kLargePositions;
    });
  }
  g.add("cache-one-row", [](Case& c) { c.cache_rows = 1; });
}

void add_profiles_and_scales(Grid& g) {
  struct QScale {
    const char* name;
    uint32_t bits;
  };
  // Powers of two are valid under both profiles; the others only under qcheck.
  const QScale powers[] = {{"1", 0x3F800000u}, {"0.5", 0x3F000000u}, {"2^-10", 0x3A800000u}, {"2^10", 0x44800000u}};
  const QScale others[] = {{"0.37", 0x3EBD70A4u}, {"1+ulp", 0x3F800001u}, {"min-normal", 0x00800000u}};
  for (const QScale& q : powers) {
    for (const char* profile : {"qcheck", "vllm-triton"}) {
      g.add(std::string("fp8-q-scale-") + q.name + "-" + profile, [&](Case& c) {
        c.query_path = QueryPath::kFp8Packed;
        c.q_scale_bits = q.bits;
        c.profile = profile;
        c.values = ValueRecipe::kMagnitudes;
      });
    }
  }
  for (const QScale& q : others) {
    g.add(std::string("fp8-q-scale-") + q.name, [&](Case& c) {
      c.query_path = QueryPath::kFp8Packed;
      c.q_scale_bits = q.bits;
      c.values = ValueRecipe::kSpecials;
    });
  }
  for (QueryPath path : {QueryPath::kBf16Packed, QueryPath::kBf16Separate}) {
    g.add(std::string("vllm-triton-") + path_name(path), [&](Case& c) {
      c.profile = "vllm-triton";
      c.query_path = path;
      c.values = ValueRecipe::kMixed;
    });
  }
  g.add("vllm-triton-scale-band", [](Case& c) {
    c.profile = "vllm-triton";
    c.values = ValueRecipe::kScaleBand;
    c.index_dim = 128, c.rope_dim = 64;
  });
}

void add_heads(Grid& g) {
  g.add("one-head-each", [](Case& c) { c.mqa_heads = 1; c.indexer_heads = 1; });
  g.add("heads-33-indexer-2", [](Case& c) { c.mqa_heads = 33; c.indexer_heads = 2; c.num_tokens = 3; });
  g.add("heads-2-indexer-17", [](Case& c) { c.mqa_heads = 2; c.indexer_heads = 17; c.num_tokens = 3; });
  g.add("large-dims", [](Case& c) {
    c.index_dim = 512, c.rope_dim = 64, c.nope_dim = 1024;
    c.num_tokens = 2, c.mqa_heads = 3, c.indexer_heads = 3;
  });
}

}  // namespace

std::vector<NamedCase> fused_q_seeds() {
  Grid g;
  add_model_shapes(g);
  add_tails(g);
  add_layouts(g);
  add_alias(g);
  add_dtypes_and_styles(g);
  add_recipes(g);
  add_profiles_and_scales(g);
  add_heads(g);
  // Scales that do not follow D and NI (any fp32 bits are valid there).
  Case odd = small_case();
  odd.values = ValueRecipe::kScaleEdges;
  odd.softmax_scale_bits = 0x3F800001u;
  odd.head_scale_bits = 0x00000001u;
  odd.seed = seed_of("odd-weight-scales-bits");
  g.cases.push_back({"odd-weight-scales-bits", odd});
  return g.cases;
}

std::vector<NamedCase> example_cases() {
  std::vector<NamedCase> out;
  auto add = [&](const std::string& name, const std::function<void(Case&)>& change) {
    Case c = small_case();
    change(c);
    set_default_scales(c);
    c.seed = seed_of("example-" + name);
    out.push_back({name, c});
  };
  add("glm-5-tp4-bf16-packed-alias", [](Case& c) {
    fuzzing::apply_model_shape(c, kModelShapes[6]);
    c.num_tokens = 4;
    c.alias = AliasMode::kExactFront;
    production_layouts(c);
  });
  add("deepseek-v3.2-tp8-fp8-packed", [](Case& c) {
    fuzzing::apply_model_shape(c, kModelShapes[3]);
    c.num_tokens = 2;
    c.query_path = QueryPath::kFp8Packed;
    production_layouts(c);
  });
  add("small-scale-band", [](Case& c) { c.values = ValueRecipe::kScaleBand; c.index_dim = 64, c.rope_dim = 64; });
  add("small-specials-bf16-weights-out", [](Case& c) {
    c.values = ValueRecipe::kSpecials;
    c.weights_out_dtype = FloatType::kBf16;
  });
  add("tail-t33-separate", [](Case& c) { c.num_tokens = 33; c.query_path = QueryPath::kBf16Separate; });
  return out;
}

std::vector<NamedBytes> numerics_seeds() {
  using fuzzing::NumericsInput;
  using fuzzing::RowOperation;
  std::vector<NamedBytes> out;
  // Special values followed by ordinary ones, so rows cross a vector boundary.
  std::vector<uint32_t> f32 = f32_specials();
  for (int i = 0; i < 21; ++i) f32.push_back(0x3F800000u + static_cast<uint32_t>(i) * 0x00123457u);
  std::vector<uint16_t> bf16 = bf16_specials();
  for (int i = 0; i < 13; ++i) bf16.push_back(static_cast<uint16_t>(0x3F80 + i * 0x0123));
  const RowOperation operations[] = {RowOperation::kF32FromBf16, RowOperation::kBf16FromF32,
                                     RowOperation::kQuantize, RowOperation::kAmax, RowOperation::kRope};
  for (RowOperation op : operations) {
    for (unsigned variant = 0; variant < 3; ++variant) {
      NumericsInput in;
      in.operation = op;
      in.nan_rule = static_cast<Bf16Nan>(variant % 3);
      in.overflow = static_cast<E4m3Overflow>(variant % 2);
      in.style = static_cast<RopeStyle>(variant % 2);
      in.minus_terms = static_cast<Contraction>(variant % 3);
      in.plus_terms = static_cast<Contraction>((variant + 1) % 3);
      in.input_misalignment = variant * 5;
      in.output_misalignment = variant * 3;
      in.divisor_bits = variant == 0 ? 0x3F800000u : variant == 1 ? 0x3EBD70A4u : 0x3A800000u;
      if (op == RowOperation::kF32FromBf16) {
        in.bf16 = bf16;
      } else {
        in.f32 = f32;
        if (op == RowOperation::kRope) in.f32.resize(in.f32.size() / 4 * 4);
      }
      out.push_back({std::string(fuzzing::name_of(op)) + "-" + std::to_string(variant),
                     fuzzing::encode_numerics_input(in)});
    }
  }
  // Found by this target (fuzz-smoke, 2026-11-29): RoPE of a row whose
  // partners are both NaN; which NaN's payload the sum keeps depends on the
  // operand order the compiler picks for a commutative add.
  NumericsInput nan_pair;
  nan_pair.operation = RowOperation::kRope;
  nan_pair.style = RopeStyle::kNeox;
  nan_pair.minus_terms = Contraction::kFuseSin;
  nan_pair.plus_terms = Contraction::kNone;
  nan_pair.f32 = {0xFFFF43F0u, 0x7FC00000u, 0xFFFFFFFFu, 0x0A3FDB05u};  // x0, x1, cos, sin
  out.push_back({"rope-two-nan-partners", fuzzing::encode_numerics_input(nan_pair)});
  return out;
}

std::vector<NamedBytes> case_decode_seeds() {
  std::vector<NamedBytes> out;
  const std::vector<NamedCase> seeds = fused_q_seeds();
  for (size_t i = 0; i < seeds.size(); i += seeds.size() / 4) {
    out.push_back({"binary-" + seeds[i].name, encode_case(seeds[i].c)});
    const std::string json = case_to_json(seeds[i].c);
    out.push_back({"json-" + seeds[i].name, std::vector<uint8_t>(json.begin(), json.end())});
  }
  std::vector<uint8_t> truncated = encode_case(seeds[0].c);
  truncated.resize(truncated.size() / 2);
  out.push_back({"binary-truncated", truncated});
  std::vector<uint8_t> version = encode_case(seeds[0].c);
  version[4] = 2;
  out.push_back({"binary-version-2", version});
  const std::string unknown = R"({"num_tokens": 1, "mqa_heads": 1, "indexer_heads": 1, "index_dim": 16,)"
                              R"( "rope_dim": 2, "nope_dim": 8, "query_path": "fp8-packed", "colour": 3})";
  out.push_back({"json-unknown-field", std::vector<uint8_t>(unknown.begin(), unknown.end())});
  // Found by this target (fuzz-smoke, 2026-11-29): a number too large for any
  // JSON number type makes nlohmann throw out_of_range, not parse_error.
  const std::string overflow = R"({"num_tokens": 1, "seed": 84e59317352044662983})";
  out.push_back({"json-number-overflow", std::vector<uint8_t>(overflow.begin(), overflow.end())});
  // The .npy reader reads the same bytes (fuzz/exchange/npy.h): arrays as numpy.save
  // writes them, and one cut short.
  std::vector<uint8_t> words;
  for (int i = 0; i < 12; ++i) words.push_back(uint8_t(i * 7));
  out.push_back({"npy-u2-2x3", encode_npy(NpyArray{"<u2", {2, 3}, words})});
  out.push_back({"npy-f4-3", encode_npy(NpyArray{"<f4", {3}, words})});
  out.push_back({"npy-u1-empty", encode_npy(NpyArray{"|u1", {0}, {}})});
  std::vector<uint8_t> cut = encode_npy(NpyArray{"<i8", {1}, std::vector<uint8_t>(words.begin(), words.begin() + 8)});
  cut.resize(cut.size() - 3);
  out.push_back({"npy-truncated", cut});
  return out;
}

}  // namespace qcheck::corpus
