#include "fuzz/mutator/case_mutator.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz/case/case_fields.h"
#include "fuzz/case/case_names.h"
#include "fuzz/case/tensor_plan.h"
#include "numerics/profile.h"
#include "ops/fused_q/shapes/model_shapes.h"

namespace qcheck::fuzzing {
namespace {

constexpr uint32_t kInterestingF32[] = {
    0x3F800000u,  // 1.0 (production q_scale)
    0x3EBD70A4u,  // 0.37 (vLLM's test q_scale)
    0x3F000000u, 0x40000000u, 0x3A800000u, 0x44800000u,  // 0.5, 2, 2^-10, 2^10
    0x3F800001u, 0x3F7FFFFFu,                             // 1 + ulp, 1 - ulp
    0x00800000u, 0x7F7FFFFFu,                             // smallest normal, FLT_MAX
    0x43E00000u, 0x3B124925u,                             // 448, RN(1/448)
    0x3DB504F3u, 0x3E3504F3u, 0x3E000000u,                // 128^-0.5, 32^-0.5, 64^-0.5
    0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u,   // +-0, +-Inf (weight scales only)
    0x7FC00000u, 0x00000001u, 0xBF800000u,                // NaN, a subnormal, -1
};

// Values that exercise block edges (16 tokens per program), odd counts and
// the first multiple-block sizes.
constexpr int64_t kInterestingTokens[] = {0, 1, 2, 3, 15, 16, 17, 31, 32, 33, 47, 48, 63, 64};
constexpr int64_t kInterestingHeads[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17};
// Rare large values: several token blocks, heads beyond one warp's worth,
// real-model D and L, caches past vLLM's test positions (8192).
constexpr int64_t kLargeTokens[] = {65, 127, 128, 129, 255, 256, 1000};
constexpr int64_t kLargeHeads[] = {31, 32, 33, 63, 64, 65, 127, 128};
constexpr int64_t kLargeIndexDims[] = {128, 256, 512};
constexpr int64_t kLargeNopeDims[] = {512, 1024};
constexpr int64_t kLargeCacheRows[] = {8191, 8192, 8193, 65536};
constexpr int64_t kInterestingCacheRows[] = {1, 2, 16, 17, 64};
constexpr int64_t kInterestingColumnStrides[] = {1, 2, 3, 17, 64};
constexpr int64_t kInterestingPaddings[] = {1, 2, 3, 7, 8, 64, 128, 256};

template <typename Enum>
Enum random_enum(Xoshiro256& rng) {
  return static_cast<Enum>(rng.below(enum_count<Enum>()));
}

// A layout allowed for the field (validate_case's sets).
Layout random_layout(Xoshiro256& rng, bool head_major, bool wide_row) {
  std::vector<Layout> allowed = {Layout::kContiguous, Layout::kPaddedRows};
  if (head_major) allowed.push_back(Layout::kHeadMajor);
  if (wide_row) allowed.push_back(Layout::kWideRowView);
  return allowed[rng.below(allowed.size())];
}

bool layout_allowed(Layout layout, bool head_major, bool wide_row) {
  return layout == Layout::kContiguous || layout == Layout::kPaddedRows ||
         (head_major && layout == Layout::kHeadMajor) || (wide_row && layout == Layout::kWideRowView);
}

int64_t round_up(int64_t value, int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

int64_t mutate_tokens(Xoshiro256& rng, bool large) {
  if (large) return rng.one_in(2) ? rng.pick(kLargeTokens) : rng.between(65, 1024);
  return rng.one_in(2) ? rng.pick(kInterestingTokens) : rng.between(1, 64);
}

int64_t mutate_heads(Xoshiro256& rng, bool large) {
  if (large) return rng.pick(kLargeHeads);
  return rng.one_in(2) ? rng.pick(kInterestingHeads) : rng.between(1, 16);
}

void mutate_dims(Case& c, Xoshiro256& rng, bool large) {
  switch (rng.below(4)) {
    case 0:  // D (R may shrink with it in repair); mostly small: time per input grows with it
      c.index_dim = large ? rng.pick(kLargeIndexDims) : 16 * (rng.one_in(4) ? rng.between(5, 8) : rng.between(1, 4));
      break;
    case 1:  // R: 2 (one pair: NeoX equals interleaved), small, D (no pass-through)
      switch (rng.below(4)) {
        case 0: c.rope_dim = 2; break;
        case 1: c.rope_dim = c.index_dim; break;
        case 2: c.rope_dim = std::min<int64_t>(64, c.index_dim); break;
        default: c.rope_dim = 2 * rng.between(1, std::max<int64_t>(1, c.index_dim / 2)); break;
      }
      break;
    case 2:  // L
      c.nope_dim = large ? rng.pick(kLargeNopeDims) : 8 * (rng.one_in(4) ? rng.between(9, 16) : rng.between(1, 8));
      break;
    default: {  // a real model's dims: rare, they are large
      if (large) {
        apply_model_shape(c, kModelShapes[rng.below(kModelShapeCount)]);
        c.num_tokens = std::min<int64_t>(c.num_tokens, rng.between(1, 17));
      } else {
        c.index_dim = 16 * rng.between(1, 4);
        c.rope_dim = 2 * rng.between(1, c.index_dim / 2);
      }
      break;
    }
  }
}

void mutate_layout(Case& c, Xoshiro256& rng) {
  switch (rng.below(11)) {
    case 0: c.q_pe_layout = random_layout(rng, false, true); break;
    case 1: c.ql_nope_layout = random_layout(rng, true, false); break;
    case 2: c.index_q_layout = random_layout(rng, false, false); break;
    case 3: c.weights_layout = random_layout(rng, false, false); break;
    case 4: c.mqa_cache_layout = random_layout(rng, false, false); break;
    case 5: c.indexer_cache_layout = random_layout(rng, false, false); break;
    case 6: c.query_out_layout = random_layout(rng, false, false); break;
    case 7: c.index_q_fp8_layout = random_layout(rng, false, false); break;
    case 8: c.weights_out_layout = random_layout(rng, false, false); break;
    case 9: c.weights_column_stride = rng.one_in(2) ? rng.pick(kInterestingColumnStrides) : rng.between(1, 64); break;
    default: c.row_padding = rng.one_in(2) ? rng.pick(kInterestingPaddings) : rng.between(1, 256); break;
  }
}

void mutate_dtype(Case& c, Xoshiro256& rng) {
  FloatType* fields[] = {&c.mqa_cache_dtype, &c.indexer_cache_dtype, &c.weights_dtype, &c.weights_out_dtype};
  FloatType& f = *fields[rng.below(4)];
  f = f == FloatType::kF32 ? FloatType::kBf16 : FloatType::kF32;
}

uint32_t mutate_f32(Xoshiro256& rng, bool positive_normal) {
  size_t count = 0;
  const uint32_t* list = interesting_f32_bits(&count);
  if (positive_normal) count = 15;  // the first 15 entries are positive normals
  switch (rng.below(3)) {
    case 0: return list[rng.below(count)];
    case 1: return static_cast<uint32_t>(rng.next());
    default: return 0x3F800000u + (static_cast<uint32_t>(rng.between(-20, 20)) << 23);  // 2^k
  }
}

// A value recipe, and most of the time what the recipes aimed at a rounding
// boundary need: the contraction recipe f32 caches (a bf16 cos or sin times
// a bf16 x is exact: no FMA pattern can matter), it and the ties recipe a
// q_scale that is a power of two (the fp8 path's division is then exact, so
// the boundary they solve for stays where it is).
void set_values(Case& c, Xoshiro256& rng) {
  // A third of the time one of the recipes aimed at the rules that only some
  // values decide (rule_reach.h: without them those rules go untested).
  static constexpr ValueRecipe kAimed[] = {ValueRecipe::kNanRows, ValueRecipe::kContraction, ValueRecipe::kTies};
  c.values = rng.one_in(3) ? rng.pick(kAimed) : random_enum<ValueRecipe>(rng);
  const bool aimed = c.values == ValueRecipe::kContraction || c.values == ValueRecipe::kTies;
  if (!aimed || rng.one_in(4)) return;
  if (c.values == ValueRecipe::kContraction) {
    c.mqa_cache_dtype = FloatType::kF32;
    c.indexer_cache_dtype = FloatType::kF32;
  }
  if ((c.q_scale_bits & 0x7FFFFFu) != 0) c.q_scale_bits = 0x3F800000u + (static_cast<uint32_t>(rng.between(-4, 4)) << 23);
}

// Field kinds with their weights: dims and the structural switches come up
// most, the seed often (new values, same structure).
void mutate_one(Case& c, Xoshiro256& rng, bool* large) {
  const bool go_large = rng.one_in(kRareLargeOneIn);
  *large = *large || go_large;
  switch (rng.below(20)) {
    case 0: case 1: c.num_tokens = mutate_tokens(rng, go_large); break;
    case 2: c.mqa_heads = mutate_heads(rng, go_large); break;
    case 3: c.indexer_heads = mutate_heads(rng, go_large); break;
    case 4: case 5: mutate_dims(c, rng, go_large); break;
    case 6:
      c.cache_rows = go_large ? rng.pick(kLargeCacheRows)
                              : (rng.one_in(2) ? rng.pick(kInterestingCacheRows) : rng.between(1, 128));
      break;
    case 7: c.query_path = random_enum<QueryPath>(rng); break;
    case 8: c.has_indexer = !c.has_indexer; break;
    case 9: c.indexer_rope = c.indexer_rope == RopeStyle::kNeox ? RopeStyle::kInterleaved : RopeStyle::kNeox; break;
    case 10: mutate_dtype(c, rng); break;
    case 11: case 12: mutate_layout(c, rng); break;
    case 13:
      if (c.alias == AliasMode::kNone) {  // the alias needs its path and layout
        c.alias = AliasMode::kExactFront;
        c.query_path = QueryPath::kBf16Packed;
        c.ql_nope_layout = Layout::kContiguous;
      } else {
        c.alias = AliasMode::kNone;
      }
      break;
    case 14: c.positions = random_enum<PositionsRecipe>(rng); break;
    case 15: case 16: set_values(c, rng); break;
    case 17:
      if (rng.one_in(3)) {
        (rng.one_in(2) ? c.softmax_scale_bits : c.head_scale_bits) = mutate_f32(rng, false);
      } else {
        c.q_scale_bits = mutate_f32(rng, true);
      }
      break;
    case 18: c.seed = rng.one_in(4) ? rng.below(16) : rng.next(); break;
    default: c.profile = c.profile == "qcheck" ? "vllm-triton" : "qcheck"; break;
  }
}

// Shrinks the case until its tensors fit: tokens first (the fuzzer's target
// is structure, not volume), then cache rows, heads, and dims.
void fit_budget(Case& c, uint64_t max_bytes) {
  for (int step = 0; step < 200 && plan_tensors(c).total_bytes() > max_bytes; ++step) {
    if (c.num_tokens > 17) {
      c.num_tokens = std::max<int64_t>(17, c.num_tokens / 2);
    } else if (c.cache_rows > 64) {
      c.cache_rows = std::max<int64_t>(64, c.cache_rows / 4);
    } else if (c.mqa_heads > 16 || c.indexer_heads > 16) {
      c.mqa_heads = std::max<int64_t>(1, c.mqa_heads / 2);
      c.indexer_heads = std::max<int64_t>(1, c.indexer_heads / 2);
    } else if (c.row_padding > 8) {
      c.row_padding = 8;
    } else if (c.num_tokens > 1) {
      c.num_tokens /= 2;
    } else if (c.nope_dim > 8) {
      c.nope_dim = std::max<int64_t>(8, round_up(c.nope_dim / 2, 8));
    } else if (c.index_dim > 16) {
      c.index_dim = std::max<int64_t>(16, round_up(c.index_dim / 2, 16));
      c.rope_dim = std::min(c.rope_dim, c.index_dim);
    } else {
      break;  // the smallest case fits any sensible budget
    }
  }
}

// Pointers to every field of a Case in the canonical order (case_fields.h),
// so cross-over needs no list of its own.
struct FieldSlots {
  struct Slot {
    void* pointer;
    size_t bytes;  // 0 for the text and edits fields
    bool edits = false;
  };
  std::vector<Slot> slots;
  void integer(const char*, int64_t& v, bool) { slots.push_back({&v, sizeof v}); }
  template <typename Enum>
  void enumeration(const char*, Enum& v, bool) { slots.push_back({&v, sizeof v}); }
  void boolean(const char*, bool& v) { slots.push_back({&v, sizeof v}); }
  void bits32(const char*, uint32_t& v) { slots.push_back({&v, sizeof v}); }
  void u64(const char*, uint64_t& v) { slots.push_back({&v, sizeof v}); }
  void text(const char*, std::string& v) { slots.push_back({&v, 0}); }
  void edits(const char*, std::vector<ValueEdit>& v) { slots.push_back({&v, 0, true}); }
};

}  // namespace

const SizeBudget* case_size_budget(const char* name) {
  if (std::strcmp(name, "default") == 0) return &kDefaultBudget;
  if (std::strcmp(name, "usual") == 0) return &kUsualBudget;
  if (std::strcmp(name, "tiny") == 0) return &kTinyBudget;
  if (std::strcmp(name, "limit") == 0) return &kLimitBudget;
  return nullptr;
}

const uint32_t* interesting_f32_bits(size_t* count) {
  *count = sizeof(kInterestingF32) / sizeof(kInterestingF32[0]);
  return kInterestingF32;
}

void repair_case(Case& c, const SizeCap& cap) {
  // Enums (a raw byte mutation may leave them out of range).
  if (!in_range(c.query_path)) c.query_path = QueryPath::kBf16Packed;
  if (!in_range(c.indexer_rope)) c.indexer_rope = RopeStyle::kNeox;
  for (FloatType* f : {&c.mqa_cache_dtype, &c.indexer_cache_dtype, &c.weights_dtype, &c.weights_out_dtype}) {
    if (!in_range(*f)) *f = FloatType::kF32;
  }
  if (!in_range(c.alias)) c.alias = AliasMode::kNone;
  if (!in_range(c.positions)) c.positions = PositionsRecipe::kArangeModP;
  if (!in_range(c.values)) c.values = ValueRecipe::kNormal;
  if (!layout_allowed(c.q_pe_layout, false, true)) c.q_pe_layout = Layout::kContiguous;
  if (!layout_allowed(c.ql_nope_layout, true, false)) c.ql_nope_layout = Layout::kContiguous;
  for (Layout* l : {&c.index_q_layout, &c.weights_layout, &c.mqa_cache_layout, &c.indexer_cache_layout,
                    &c.query_out_layout, &c.index_q_fp8_layout, &c.weights_out_layout}) {
    if (!layout_allowed(*l, false, false)) *l = Layout::kContiguous;
  }
  // Dims (fused_q_args.h DimLimits; the harness's CaseLimits), kept far
  // below the limits: the budget decides the size anyway.
  c.num_tokens = std::clamp<int64_t>(c.num_tokens, 0, cap.tokens);
  c.mqa_heads = std::clamp<int64_t>(c.mqa_heads, 1, std::min(cap.heads, DimLimits::kMaxHeads));
  c.indexer_heads = std::clamp<int64_t>(c.indexer_heads, 1, std::min(cap.heads, DimLimits::kMaxIndexerHeads));
  c.index_dim = round_up(std::clamp<int64_t>(c.index_dim, 16, std::min(cap.index_dim, DimLimits::kMaxIndexDim)), 16);
  c.rope_dim = std::clamp<int64_t>(c.rope_dim, 2, c.index_dim) & ~int64_t(1);
  c.nope_dim = round_up(std::clamp<int64_t>(c.nope_dim, 8, std::min(cap.nope_dim, DimLimits::kMaxNopeDim)), 8);
  c.cache_rows = std::clamp<int64_t>(c.cache_rows, 1, cap.cache_rows);
  c.row_padding = std::clamp<int64_t>(c.row_padding, 1, CaseLimits::kMaxRowPadding);
  c.weights_column_stride = std::clamp<int64_t>(c.weights_column_stride, 1, CaseLimits::kMaxWeightsColumnStride);
  // The alias exists only on the bf16 packed path, with ql_nope taking
  // query_out's strides.
  if (c.alias == AliasMode::kExactFront) {
    if (c.query_path != QueryPath::kBf16Packed) c.alias = AliasMode::kNone;
    else c.ql_nope_layout = Layout::kContiguous;
  }
  Profile profile;
  if (c.profile.size() > CaseLimits::kMaxProfileNameLength || !find_profile(c.profile, &profile)) {
    c.profile = "qcheck";
    find_profile(c.profile, &profile);
  }
  // q_scale: positive, finite, normal.
  uint32_t q = c.q_scale_bits & 0x7FFFFFFFu;
  const uint32_t exponent = q >> 23;
  if (exponent == 0) q |= 0x00800000u;
  if (exponent == 0xFF) q &= ~0x40000000u;  // 2^128.. -> 2^0..: finite
  c.q_scale_bits = q;
  if (c.memory_limit_bytes < 1 || c.memory_limit_bytes > CaseLimits::kMaxMemoryBytes) {
    c.memory_limit_bytes = CaseLimits::kDefaultMemoryBytes;
  }
  fit_budget(c, std::min<uint64_t>(cap.bytes, c.memory_limit_bytes));
  // A memory cap below what even the smallest case needs (a decoded
  // memory_limit_bytes of 8192, say) is raised to what the case needs.
  c.memory_limit_bytes = std::max<uint64_t>(c.memory_limit_bytes, plan_tensors(c).total_bytes());
  // Edits that no longer fit the shrunk or changed case go.
  if (c.edits.size() > CaseLimits::kMaxEdits) c.edits.resize(CaseLimits::kMaxEdits);
  for (size_t i = c.edits.size(); i-- > 0;) {
    if (!validate_edit(c, i).empty()) c.edits.erase(c.edits.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

Case seed_case(Xoshiro256& rng, const SizeBudget& budget) {
  Case c;
  c.num_tokens = rng.one_in(2) ? rng.pick(kInterestingTokens) : rng.between(1, 40);
  c.mqa_heads = rng.between(1, 5);
  c.indexer_heads = rng.between(1, 5);
  c.index_dim = 16 * rng.between(1, 4);
  c.rope_dim = 2 * rng.between(1, c.index_dim / 2);
  c.nope_dim = 8 * rng.between(1, 4);
  c.cache_rows = rng.between(1, 64);
  c.query_path = random_enum<QueryPath>(rng);
  c.has_indexer = !rng.one_in(4);
  c.indexer_rope = random_enum<RopeStyle>(rng);
  c.mqa_cache_dtype = random_enum<FloatType>(rng);
  c.indexer_cache_dtype = random_enum<FloatType>(rng);
  c.weights_dtype = random_enum<FloatType>(rng);
  c.weights_out_dtype = random_enum<FloatType>(rng);
  c.q_pe_layout = random_layout(rng, false, true);
  c.ql_nope_layout = random_layout(rng, true, false);
  c.index_q_layout = random_layout(rng, false, false);
  c.weights_layout = random_layout(rng, false, false);
  c.weights_column_stride = rng.between(1, 3);
  c.row_padding = rng.between(1, 9);
  if (c.query_path == QueryPath::kBf16Packed && rng.one_in(3)) c.alias = AliasMode::kExactFront;
  c.positions = random_enum<PositionsRecipe>(rng);
  c.q_scale_bits = mutate_f32(rng, true);
  set_values(c, rng);  // after q_scale: a recipe may bring a power of two along
  c.seed = rng.next();
  c.profile = rng.one_in(4) ? "vllm-triton" : "qcheck";
  repair_case(c, budget.usual);
  set_default_scales(c);  // after the repair, which may shrink D and NI
  return c;
}

void mutate_case(Case& c, Xoshiro256& rng, const SizeBudget& budget) {
  const bool follows = scales_follow_shape(c);  // before any repair changes D or NI
  repair_case(c, budget.large);  // sizes are computed below: dims must be in range first
  const uint32_t softmax = c.softmax_scale_bits, head = c.head_scale_bits;
  // A large case stays large half the time; otherwise the repair shrinks it.
  bool large = plan_tensors(c).total_bytes() > budget.usual.bytes && rng.one_in(2);
  const int changes = 1 + static_cast<int>(rng.below(3));
  for (int i = 0; i < changes; ++i) mutate_one(c, rng, &large);
  repair_case(c, large ? budget.large : budget.usual);
  // Scales that followed D and NI keep following them through the mutation
  // and the repair (which may shrink both), unless a mutation picked new
  // scale bits on purpose: explicit other scales are a case of their own.
  if (follows && c.softmax_scale_bits == softmax && c.head_scale_bits == head) set_default_scales(c);
}

Case cross_over(const Case& a, const Case& b, Xoshiro256& rng, const SizeBudget& budget) {
  const bool follows = scales_follow_shape(a) && scales_follow_shape(b);
  Case out = a, other = b;
  repair_case(out, budget.large);
  repair_case(other, budget.large);
  FieldSlots out_slots, other_slots;
  visit_case_fields(out, out_slots);
  visit_case_fields(other, other_slots);
  for (size_t i = 0; i < out_slots.slots.size(); ++i) {
    if (!rng.one_in(2)) continue;
    const FieldSlots::Slot& to = out_slots.slots[i];
    const FieldSlots::Slot& from = other_slots.slots[i];
    if (to.edits) {
      *static_cast<std::vector<ValueEdit>*>(to.pointer) = *static_cast<const std::vector<ValueEdit>*>(from.pointer);
    } else if (to.bytes == 0) {
      *static_cast<std::string*>(to.pointer) = *static_cast<const std::string*>(from.pointer);
    } else {
      std::memcpy(to.pointer, from.pointer, to.bytes);
    }
  }
  const bool large = plan_tensors(out).total_bytes() > budget.usual.bytes ||
                     plan_tensors(other).total_bytes() > budget.usual.bytes;
  repair_case(out, large ? budget.large : budget.usual);
  if (follows) set_default_scales(out);  // the child of two parents whose scales follow their shapes
  return out;
}

}  // namespace qcheck::fuzzing
