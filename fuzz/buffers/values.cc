#include "fuzz/buffers/values.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

#include "core/random/prng.h"
#include "fuzz/buffers/noise_lanes.h"
#include "fuzz/buffers/value_rows.h"
#include "numerics/conversions.h"
#include "numerics/float_bits.h"
#include "numerics/row_ops.h"

namespace qcheck {
namespace {

// Stream salts: one per tensor and per kind of choice.
enum Salt : uint64_t {
  kSaltPositions = 1,
  kSaltMqaCache = 2,
  kSaltIndexerCache = 3,
  kSaltQPe = 4,
  kSaltQlNope = 5,
  kSaltIndexQ = 6,
  kSaltWeights = 7,
  kSaltRecipe = 8,
  kSaltCacheKind = 9,
  kSaltLargeOffset = 10,
  kSaltRepeated = 11,
  kSaltContraction = 12,
  kSaltTieRow = 13,
};

int64_t position_of(const Case& c, int64_t t) {
  const int64_t P = c.cache_rows;
  Xoshiro256 rng(mix_keys({c.seed, kSaltPositions, static_cast<uint64_t>(t)}));
  switch (c.positions) {
    case PositionsRecipe::kArangeModP: return t % P;
    case PositionsRecipe::kRandom: return static_cast<int64_t>(rng.below(static_cast<uint64_t>(P)));
    case PositionsRecipe::kNearEnd:
      return P - 1 -
             static_cast<int64_t>(rng.below(static_cast<uint64_t>(std::min<int64_t>(P, 4))));
    case PositionsRecipe::kRepeated: {
      // Three positions, fixed by the seed, chosen per token.
      const uint64_t pick = rng.below(3);
      return static_cast<int64_t>(mix_keys({c.seed, kSaltRepeated, pick}) %
                                  static_cast<uint64_t>(P));
    }
  }
  return 0;
}

// The recipe of one row: the case's, or under kMixed one chosen per row.
// `token` is recipe_keys(c, salt, row).
ValueRecipe row_recipe(const Case& c, const KeyMix& token, int64_t col) {
  if (c.values != ValueRecipe::kMixed) return c.values;
  static constexpr ValueRecipe kChoices[] = {ValueRecipe::kNormal,      ValueRecipe::kMagnitudes,
                                             ValueRecipe::kSpecials,    ValueRecipe::kScaleEdges,
                                             ValueRecipe::kZeroRows,    ValueRecipe::kScaleBand,
                                             ValueRecipe::kCancellation};
  return kChoices[token.then(static_cast<uint64_t>(col)).value() % 7];
}

KeyMix recipe_keys(const Case& c, uint64_t salt, int64_t row) {
  return KeyMix({c.seed, kSaltRecipe, salt, static_cast<uint64_t>(row)});
}

// kContraction and kTie: crafted rows of the recipes of those names (value_rows.h).
enum class CacheRowKind { kNoise, kRotary, kRotaryLarge, kBand, kContraction, kTie };

CacheRowKind cache_row_kind(const Case& c, bool indexer, int64_t p, bool referenced) {
  if (!referenced) return CacheRowKind::kNoise;
  const bool band_possible = indexer && c.indexer_cache_dtype == FloatType::kF32;
  const FloatType dtype = indexer ? c.indexer_cache_dtype : c.mqa_cache_dtype;
  switch (c.values) {
    case ValueRecipe::kLargePositions: return CacheRowKind::kRotaryLarge;
    case ValueRecipe::kContraction:
      return dtype == FloatType::kF32 ? CacheRowKind::kContraction : CacheRowKind::kRotary;
    case ValueRecipe::kTies: return CacheRowKind::kTie;
    case ValueRecipe::kScaleBand:
      return band_possible ? CacheRowKind::kBand : CacheRowKind::kRotary;
    case ValueRecipe::kMixed:
      switch (mix_keys({c.seed, kSaltCacheKind, indexer ? 1u : 0u, static_cast<uint64_t>(p)}) % 4) {
        case 0: return band_possible ? CacheRowKind::kBand : CacheRowKind::kRotary;
        case 1: return CacheRowKind::kRotaryLarge;
        default: return CacheRowKind::kRotary;
      }
    default: return CacheRowKind::kRotary;
  }
}

int band_m_of_row(const Case& c, int64_t p) {
  // m = 1 mostly, 2 sometimes (both inside the band for many exponents).
  return mix_keys({c.seed, kSaltCacheKind, 7u, static_cast<uint64_t>(p)}) % 4 == 0 ? 2 : 1;
}

// What rounds the values a cache's rows meet last.
RowTarget cache_target(const Case& c, bool indexer) {
  if (indexer) return RowTarget::kE4m3RowScale;
  return c.query_path == QueryPath::kFp8Packed ? RowTarget::kE4m3QScale : RowTarget::kBf16;
}

// The designs of a contraction row's pairs (the cache and the rows that
// read it use the same ones).
std::vector<ContractionPair> contraction_designs(const Case& c, bool indexer, int64_t p) {
  std::vector<ContractionPair> designs(static_cast<size_t>(c.rope_dim / 2));
  const KeyMix row = KeyMix({c.seed, kSaltContraction, indexer ? 1u : 0u, static_cast<uint64_t>(p)});
  for (size_t i = 0; i < designs.size(); ++i) {
    Xoshiro256 rng(row.then(i).value());
    designs[i] = contraction_pair(cache_target(c, indexer), rng);
  }
  return designs;
}

// Each cache row's contraction designs, by position: solved once for the
// rows the tokens reference, empty for the others (and for every row but a
// contraction row's).
using CacheDesigns = std::vector<std::vector<ContractionPair>>;

CacheDesigns cache_designs(const Case& c, bool indexer, const std::vector<uint8_t>& referenced) {
  CacheDesigns designs;
  if (c.values != ValueRecipe::kContraction) return designs;  // (the one recipe with such rows)
  designs.resize(referenced.size());
  for (size_t p = 0; p < referenced.size(); ++p) {
    if (cache_row_kind(c, indexer, static_cast<int64_t>(p), referenced[p] != 0) == CacheRowKind::kContraction) {
      designs[p] = contraction_designs(c, indexer, static_cast<int64_t>(p));
    }
  }
  return designs;
}

// base^(-2i/R) for i < R/2: the rotary frequencies, the same for every row.
std::vector<double> rotary_frequencies(const Case& c, bool indexer) {
  const double base = indexer ? kIndexerRopeBase : kMqaRopeBase;
  std::vector<double> frequency(static_cast<size_t>(c.rope_dim / 2));
  for (size_t i = 0; i < frequency.size(); ++i) {
    frequency[i] = std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(c.rope_dim));
  }
  return frequency;
}

// Cos/sin of one cache row in f32 (cos in [0, R/2), sin after).
void cache_row_values(const Case& c, bool indexer, int64_t p, CacheRowKind kind,
                      const std::vector<double>& frequency, const CacheDesigns& contraction, float* row) {
  const int64_t R = c.rope_dim, half = R / 2;
  Xoshiro256 rng(
      mix_keys({c.seed, indexer ? kSaltIndexerCache : kSaltMqaCache, static_cast<uint64_t>(p)}));
  if (kind == CacheRowKind::kNoise) {
    for (int64_t i = 0; i < R; ++i) row[i] = static_cast<float>(rng.symmetric_unit());
    return;
  }
  if (kind == CacheRowKind::kContraction) {
    const std::vector<ContractionPair>& designs = contraction[static_cast<size_t>(p)];
    for (int64_t i = 0; i < half; ++i) {
      const ContractionPair& d = designs[static_cast<size_t>(i)];
      row[i] = d.sin_mode ? d.z : kContractionV;
      row[half + i] = d.sin_mode ? kContractionV : d.z;
    }
    return;
  }
  if (kind == CacheRowKind::kTie) {  // s = 0; c = 1 on even pairs, 1 + m * 2^-7 (m odd) on odd ones
    Xoshiro256 tie(mix_keys({c.seed, kSaltTieRow, indexer ? 1u : 0u, static_cast<uint64_t>(p)}));
    for (int64_t i = 0; i < half; ++i) {
      row[i] = i % 2 == 0 ? 1.0f : 1.0f + static_cast<float>(2 * tie.below(64) + 1) / 128.0f;
      row[half + i] = 0.0f;
    }
    return;
  }
  if (kind == CacheRowKind::kBand) {
    const float cos = float_from_bits(0x3F800000u + static_cast<uint32_t>(band_m_of_row(c, p)));
    for (int64_t i = 0; i < half; ++i) {
      row[i] = cos;
      row[half + i] = 0.0f;
    }
    return;
  }
  double position = static_cast<double>(p);
  if (kind == CacheRowKind::kRotaryLarge) {
    const uint64_t span = (uint64_t(1) << 24) - (uint64_t(1) << 20);
    position +=
        static_cast<double>((uint64_t(1) << 20) + mix_keys({c.seed, kSaltLargeOffset}) % span);
  }
  for (int64_t i = 0; i < half; ++i) {
    const double angle = position * frequency[static_cast<size_t>(i)];
    row[i] = static_cast<float>(std::cos(angle));
    row[half + i] = static_cast<float>(std::sin(angle));
  }
  if (c.values == ValueRecipe::kSpecials) {
    for (int64_t i = 0; i < R; ++i) {
      if (rng.one_in(16))
        row[i] = float_from_bits(f32_specials()[rng.below(f32_specials().size())]);
    }
  }
}

// Writes one cache. The rows' RoPE context is read back from the tensor
// later, so it holds the stored (rounded) values.
void fill_cache(const Case& c, TensorSet& set, TensorId id, FloatType dtype,
                const std::vector<uint8_t>& referenced, const CacheDesigns& contraction) {
  const TensorGeometry* g = set.find(id);
  if (g == nullptr) return;
  const bool indexer = id == TensorId::kIndexerCache;
  std::vector<float> row(static_cast<size_t>(c.rope_dim));
  const std::vector<double> frequency = rotary_frequencies(c, indexer);
  std::vector<uint16_t> bf16_row(row.size());
  for (int64_t p = 0; p < g->rows; ++p) {
    cache_row_values(c, indexer, p, cache_row_kind(c, indexer, p, referenced[p] != 0), frequency, contraction,
                     row.data());
    uint8_t* out = set.element(*g, p, 0, 0);  // a cache row is contiguous
    if (dtype == FloatType::kF32) {
      std::memcpy(out, row.data(), row.size() * 4);
    } else {
      // bf16 of the f32 values; specials keep their class (NaN stays NaN).
      // The SIMD rows give the spec's bits (tests/reference).
      simd_row_ops().bf16_from_f32_row(row.data(), bf16_row.data(), row.size(), Bf16Nan::k7FFF);
      std::memcpy(out, bf16_row.data(), bf16_row.size() * 2);
    }
  }
}

// Cos/sin (f32) of cache row p as stored; `bits` is scratch for a bf16 row.
void read_cache_row(const TensorSet& set, const TensorGeometry& g, int64_t p, std::vector<uint16_t>& bits,
                    float* out) {
  const uint8_t* in = set.element(g, p, 0, 0);  // a cache row is contiguous
  if (g.type == ElementType::kF32) {
    std::memcpy(out, in, static_cast<size_t>(g.width) * 4);
    return;
  }
  bits.resize(static_cast<size_t>(g.width));
  std::memcpy(bits.data(), in, bits.size() * 2);
  simd_row_ops().f32_from_bf16_row(bits.data(), out, bits.size());
}

// Rows of a bf16 input; `cache` (null for ql_nope) gives each row the cos/sin
// of its position for the recipes that aim at RoPE, `contraction` the
// designs of its contraction rows. The rows go in groups: each row's draws
// up to its noise are planned (plan_row_noise), the noise of the group is
// drawn side by side (noise_lanes.h), then each row is filled as alone,
// taking its noise from the group's.
void fill_rows(const Case& c, TensorSet& set, TensorId id, uint64_t salt, const TensorGeometry* cache,
               const CacheDesigns& contraction, RopeStyle style, const std::vector<int64_t>& positions) {
  const TensorGeometry* g = set.find(id);
  if (g == nullptr) return;
  const int64_t width = g->width, R = c.rope_dim;
  const bool fp8 = c.query_path == QueryPath::kFp8Packed;
  const bool indexer = id == TensorId::kIndexQ;
  const RowTarget target = indexer               ? RowTarget::kE4m3RowScale
                           : fp8                 ? RowTarget::kE4m3QScale
                           : id == TensorId::kQPe ? RowTarget::kBf16
                                                 : RowTarget::kNone;
  const int q_scale_exponent = q_scale_exponent_of(c.q_scale_bits);
  // Each token's RoPE context.
  std::vector<float> cos_sin;
  std::vector<int> band_m;
  if (cache != nullptr) {
    cos_sin.resize(static_cast<size_t>(g->rows * R));
    band_m.resize(static_cast<size_t>(g->rows));
    std::vector<uint16_t> cache_bits;
    for (int64_t t = 0; t < g->rows; ++t) {
      read_cache_row(set, *cache, positions[t], cache_bits, cos_sin.data() + t * R);
      if (indexer) band_m[t] = indexer_band_m(c, positions[t]);
    }
  }
  auto rope_of = [&](int64_t t) {
    RowRope rope;
    rope.target = target;
    rope.q_scale_exponent = q_scale_exponent;
    if (cache != nullptr) {
      rope.cos = cos_sin.data() + t * R;
      rope.sin = rope.cos + R / 2;
      rope.rope_width = R;
      rope.style = style;
      rope.band_m = indexer ? band_m[t] : 0;
      if (!contraction.empty() && !contraction[static_cast<size_t>(positions[t])].empty()) {
        rope.contraction = contraction[static_cast<size_t>(positions[t])].data();
      }
    }
    return rope;
  };
  // A token's key prefixes (its rows' streams and, under kMixed, recipes),
  // hashed once for all its heads.
  int64_t keyed_token = -1;
  KeyMix stream_keys({}), recipe_keys_of_token({});
  auto key_token = [&](int64_t t) {
    if (t == keyed_token) return;
    keyed_token = t;
    stream_keys = KeyMix({c.seed, salt, static_cast<uint64_t>(t)});
    recipe_keys_of_token = recipe_keys(c, salt, t);
  };
  constexpr int kGroup = NoiseLanes::kMaxRows;
  std::vector<uint16_t> bits(static_cast<size_t>(kGroup * width));
  std::vector<Xoshiro256> streams;
  streams.reserve(kGroup);
  const int64_t rows = g->rows * g->cols;
  for (int64_t first = 0; first < rows; first += kGroup) {
    const int n = static_cast<int>(std::min<int64_t>(kGroup, rows - first));
    ValueRecipe recipe[kGroup];
    ReadyNoise ready[kGroup];
    int lane[kGroup];
    NoiseLanes lanes;
    streams.clear();
    for (int r = 0; r < n; ++r) {
      const int64_t t = (first + r) / g->cols, h = (first + r) % g->cols;
      key_token(t);
      recipe[r] = row_recipe(c, recipe_keys_of_token, h);
      streams.emplace_back(stream_keys.then(static_cast<uint64_t>(h)).value());
      lane[r] = -1;
      if (plan_row_noise(recipe[r], streams[r], rope_of(t), &ready[r])) {
        lane[r] = lanes.rows++;
        lanes.set_state(lane[r], ready[r].start);
        lanes.scale[lane[r]] = ready[r].scale;
        lanes.out[lane[r]] = bits.data() + r * width;
      }
    }
    draw_noise_lanes(lanes, width);
    for (int r = 0; r < n; ++r) {
      const int64_t t = (first + r) / g->cols, h = (first + r) % g->cols;
      uint16_t* row = bits.data() + r * width;
      RowRope rope = rope_of(t);
      if (lane[r] >= 0) {
        std::memcpy(ready[r].end, lanes.state[lane[r]], sizeof ready[r].end);
        rope.noise = &ready[r];
      }
      fill_bf16_row(recipe[r], streams[r], rope, row, width);
      std::memcpy(set.element(*g, t, h, 0), row, static_cast<size_t>(width) * 2);
    }
  }
}

void fill_weights(const Case& c, TensorSet& set) {
  const TensorGeometry* g = set.find(TensorId::kIndexWeights);
  if (g == nullptr) return;
  for (int64_t t = 0; t < g->rows; ++t) {
    const KeyMix recipes = recipe_keys(c, kSaltWeights, t);
    for (int64_t h = 0; h < g->cols; ++h) {
      Xoshiro256 rng(
          mix_keys({c.seed, kSaltWeights, static_cast<uint64_t>(t), static_cast<uint64_t>(h)}));
      const uint32_t bits = weight_bits(row_recipe(c, recipes, h), rng);
      uint8_t* out = set.element(*g, t, h, 0);
      if (g->type == ElementType::kF32) {
        std::memcpy(out, &bits, 4);
      } else {
        // A NaN keeps its sign and top payload (made quiet so it stays NaN).
        const uint16_t b16 = is_nan_bits(bits)
                                 ? static_cast<uint16_t>((bits >> 16) | 0x0040)
                                 : spec::bf16_from_f32(float_from_bits(bits), Bf16Nan::k7FFF);
        std::memcpy(out, &b16, 2);
      }
    }
  }
}

// The case's value edits, in order, over the generated values (a valid case:
// validate_case checked every edit against the plan).
void apply_edits(const Case& c, TensorSet& set) {
  for (const ValueEdit& e : c.edits) {
    const TensorGeometry* g = set.find(e.tensor);
    if (g == nullptr) continue;
    const int bytes = element_bytes(g->type);
    const int64_t row_end = e.rows == -1 ? g->rows : e.row + e.rows;
    const int64_t head_begin = e.head == -1 ? 0 : e.head, head_end = e.head == -1 ? g->cols : e.head + 1;
    const int64_t element_end = e.elements == -1 ? g->width : e.element + e.elements;
    for (int64_t row = e.row; row < row_end; ++row) {
      for (int64_t head = head_begin; head < head_end; ++head) {
        for (int64_t i = e.element; i < element_end; ++i) {
          std::memcpy(set.element(*g, row, head, i), &e.bits, static_cast<size_t>(bytes));  // little-endian
        }
      }
    }
  }
}

}  // namespace

int indexer_band_m(const Case& c, int64_t position) {
  if (cache_row_kind(c, true, position, true) != CacheRowKind::kBand) return 0;
  return band_m_of_row(c, position);
}

void generate_inputs(const Case& c, TensorSet& set, InputTimes* times) {
  std::optional<InputTimer> timer(std::in_place, times, InputPart::kWeights);
  const TensorGeometry* pg = set.find(TensorId::kPositions);
  std::vector<int64_t> positions(static_cast<size_t>(c.num_tokens));
  std::vector<uint8_t> referenced(static_cast<size_t>(c.cache_rows), 0);
  for (int64_t t = 0; t < c.num_tokens; ++t) {
    positions[t] = position_of(c, t);
    referenced[positions[t]] = 1;
    std::memcpy(set.element(*pg, t, 0, 0), &positions[t], 8);
  }
  timer.emplace(times, InputPart::kCaches);
  const CacheDesigns mqa_designs = cache_designs(c, false, referenced);
  const CacheDesigns indexer_designs = cache_designs(c, true, referenced);
  fill_cache(c, set, TensorId::kMqaCache, c.mqa_cache_dtype, referenced, mqa_designs);
  fill_cache(c, set, TensorId::kIndexerCache, c.indexer_cache_dtype, referenced, indexer_designs);
  timer.emplace(times, InputPart::kRows);
  // The MQA rope is always interleaved (SEMANTICS.md, task 1).
  fill_rows(c, set, TensorId::kQPe, kSaltQPe, set.find(TensorId::kMqaCache), mqa_designs, RopeStyle::kInterleaved,
            positions);
  fill_rows(c, set, TensorId::kQlNope, kSaltQlNope, nullptr, {}, RopeStyle::kInterleaved, positions);
  fill_rows(c, set, TensorId::kIndexQ, kSaltIndexQ, set.find(TensorId::kIndexerCache), indexer_designs,
            c.indexer_rope, positions);
  timer.emplace(times, InputPart::kWeights);
  fill_weights(c, set);
  apply_edits(c, set);
}

}  // namespace qcheck
