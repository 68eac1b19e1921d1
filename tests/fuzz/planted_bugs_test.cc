// Each planted bug of the CPU model, through the verdict: on the cases chosen
// to expose it, it fails with the Signatures (tensor, part, mismatch class)
// its deviation must produce and no others; on every case where it has no
// way to show (the tail bug with T % 16 == 0, the skipped copy under the
// alias, the log2f ceiling without band rows, ...) it passes.
//
// tests/harness only asserts that each planted model bug fails some case of
// its grid; the signatures and the silence are the model's own contract.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <iostream>
#include <ostream>
#include <string>
#include <vector>

#include "ops/fused_q/cpu_model/cpu_model.h"
#include "fuzz/verdict/verdict.h"
#include "numerics/float_bits.h"
#include "tests/fuzz/model_cases.h"

namespace qcheck::test {
namespace {

using MC = MismatchClass;

struct Exposure {
  Case c;
  std::vector<Signature> must_show;  // each of these has a count
  std::vector<Signature> may_show;   // these may too; nothing else may
};

struct BugCases {
  PlantedCpuBug bug;
  // False when the case gives the bug no way to show: it must pass then.
  std::function<bool(const Case&)> can_show;
  std::vector<Exposure> exposures;
  std::vector<Case> silent;  // cases outside the grid where it cannot show
};

// The signatures of a whole token left unwritten: every part of query_out on
// `path` and, with the indexer, every part of its two outputs.
std::vector<Signature> unwritten_token(bool indexer, QueryPath path) {
  std::vector<Signature> s;
  if (path == QueryPath::kBf16Separate) {
    s.push_back({"query_out", "rope", MC::kUnwritten});
  } else {
    s.push_back({"query_out", "nope front", MC::kUnwritten});
    s.push_back({"query_out", "rope tail", MC::kUnwritten});
  }
  if (indexer) {
    s.push_back({"index_q_fp8", "rope part", MC::kUnwritten});
    s.push_back({"index_q_fp8", "pass-through part", MC::kUnwritten});
    s.push_back({"index_weights_out", "weights", MC::kUnwritten});
  }
  return s;
}

// No token: nothing is written, so no bug can show.
Case no_tokens() {
  return model_case([](Case& c) { c.num_tokens = 0; });
}

// A cache of one row: every position is 0, where the rotation is the
// identity (cos 1, sin 0) for the noise recipe (kNormal holds no zero and
// no special, so x*1 + (+-x_partner)*0 is x whatever the pairing or sign).
bool only_position_zero(const Case& c) {
  return c.cache_rows == 1 && c.values == ValueRecipe::kNormal;
}

Case at_position_zero(const std::function<void(Case&)>& edit = [](Case&) {}) {
  return model_case([&](Case& c) {
    c.cache_rows = 1;
    edit(c);
  });
}

// Recipes that can hold rows of small amax (below 448 * 2^-14, or 1e-4):
// zero rows, magnitudes 2^k, scale edges at 448 * 2^-30 and at the floor,
// and the mix of them; the band recipe falls back to the edges off the band;
// all-NaN rows (the floor's scale), the ties recipe's amax down to
// 448 * 2^-22 and the contraction recipe's down to 440 * 2^-15.
bool small_amax_rows(const Case& c) {
  switch (c.values) {
    case ValueRecipe::kMagnitudes:
    case ValueRecipe::kScaleEdges:
    case ValueRecipe::kZeroRows:
    case ValueRecipe::kScaleBand:
    case ValueRecipe::kNanRows:
    case ValueRecipe::kContraction:
    case ValueRecipe::kTies:
    case ValueRecipe::kMixed: return true;
    default: return false;
  }
}

// Recipes whose inputs can exceed 464 after the division by q_scale (0.37 at
// the least in these tests): noise is below 3.47 in magnitude (four
// uniforms), so only magnitudes, specials, scale edges (the band recipe
// falls back to them for ql_nope), cancellation (x * c / s with |s| > 2^-8)
// and the mix can.
bool large_mqa_inputs(const Case& c) {
  switch (c.values) {
    case ValueRecipe::kNormal:
    case ValueRecipe::kZeroRows:
    case ValueRecipe::kLargePositions: return false;
    default: return true;
  }
}

Case with_head_scale(Case c, uint32_t bits) {
  c.head_scale_bits = bits;
  return c;
}

// Each element of an input (every token, head and dim) set to `bits`.
Case with_all(Case c, TensorId tensor, uint32_t bits) {
  ValueEdit e;
  e.tensor = tensor;
  e.rows = -1;
  e.bits = bits;
  c.edits.push_back(e);
  return c;
}

// The bugs of the RoPE and of the UE8M0 scale.
void add_rope_and_scale_bugs(std::vector<BugCases>& all) {
  // The sign on the other term: r1 = x1*c + x2*s, r2 = x2*c - x1*s, the
  // rotation by -theta. Wrong values in the rope of every path; the
  // indexer is untouched.
  const auto mqa_rope_moves = [](const Case& c) { return c.num_tokens > 0 && !only_position_zero(c); };
  const std::vector<Signature> rope_values_fp8 = {{"query_out", "rope tail", MC::kOffByOne},
                                                  {"query_out", "rope tail", MC::kSignOfZero}};
  all.push_back(
      {PlantedCpuBug::kMqaSinSignFlipped, mqa_rope_moves,
       {{model_case([](Case&) {}), {{"query_out", "rope tail", MC::kWrongValue}},
         {{"query_out", "rope tail", MC::kOffByOne}}},
        {model_case([](Case& c) { c.query_path = QueryPath::kFp8Packed; }),
         {{"query_out", "rope tail", MC::kWrongValue}}, rope_values_fp8},
        {model_case([](Case& c) {
           c.query_path = QueryPath::kBf16Separate;
           c.has_indexer = false;
         }),
         {{"query_out", "rope", MC::kWrongValue}}, {{"query_out", "rope", MC::kOffByOne}}}},
       {at_position_zero(), at_position_zero([](Case& c) { c.query_path = QueryPath::kFp8Packed; }),
        no_tokens()}});

  // cos and sin trade places: at position 0 the rotation becomes
  // (x1, x2) -> (-x2, x1), so it shows everywhere but at T = 0.
  all.push_back(
      {PlantedCpuBug::kSwappedCosSin, [](const Case& c) { return c.num_tokens > 0; },
       {{model_case([](Case&) {}), {{"query_out", "rope tail", MC::kWrongValue}},
         {{"query_out", "rope tail", MC::kOffByOne}}},
        {at_position_zero([](Case& c) { c.query_path = QueryPath::kFp8Packed; }),
         {{"query_out", "rope tail", MC::kWrongValue}}, rope_values_fp8},
        {model_case([](Case& c) {
           c.query_path = QueryPath::kBf16Separate;
           c.mqa_cache_dtype = FloatType::kBf16;
         }),
         {{"query_out", "rope", MC::kWrongValue}}, {{"query_out", "rope", MC::kOffByOne}}}},
       {no_tokens()}});

  // NeoX pairs in the MQA rope: wrong partners, wrong values; R = 2 has
  // one pair, the same in both styles.
  all.push_back(
      {PlantedCpuBug::kMqaNeoxRope,
       [=](const Case& c) { return mqa_rope_moves(c) && c.rope_dim > 2; },
       {{model_case([](Case&) {}), {{"query_out", "rope tail", MC::kWrongValue}},
         {{"query_out", "rope tail", MC::kOffByOne}}},
        {model_case([](Case& c) {
           c.query_path = QueryPath::kFp8Packed;
           apply_layout_mix(LayoutMix::kProduction, c);
         }),
         {{"query_out", "rope tail", MC::kWrongValue}}, rope_values_fp8}},
       {model_case([](Case& c) {
          c.rope_dim = 2;
          c.index_dim = 16;
        }),
        at_position_zero(), no_tokens()}});

  // The scale rounded down halves it wherever s0 is not a power of two (every
  // row here): codes double, the row's largest saturate at 448 (so the row is
  // not off by one power of two), the weight halves. Zero rows keep their
  // zero codes; their weight still halves.
  const std::vector<Signature> halved_scale = {
      {"index_q_fp8", "rope part", MC::kWrongValue},
      {"index_q_fp8", "pass-through part", MC::kWrongValue},
      {"index_weights_out", "weights", MC::kRowPowerOfTwo}};
  const std::vector<Signature> halved_scale_may = {
      {"index_q_fp8", "rope part", MC::kOffByOne},
      {"index_q_fp8", "pass-through part", MC::kOffByOne},
      {"index_q_fp8", "rope part", MC::kRowPowerOfTwo},
      {"index_q_fp8", "pass-through part", MC::kRowPowerOfTwo}};
  const auto indexer_runs = [](const Case& c) { return c.has_indexer && c.num_tokens > 0; };
  all.push_back(
      {PlantedCpuBug::kFloorScale, indexer_runs,
       {{model_case([](Case&) {}), halved_scale, halved_scale_may},
        {model_case([](Case& c) {
           c.indexer_rope = RopeStyle::kInterleaved;
           c.weights_dtype = c.weights_out_dtype = FloatType::kBf16;
           c.values = ValueRecipe::kZeroRows;
         }),
         halved_scale, halved_scale_may}},
       {model_case([](Case& c) { c.has_indexer = false; }), no_tokens()}});

  // The floor on the scale: 2^-13 at the least instead of 2^-22. A row of
  // amax below 448 * 2^-14 gets a larger scale: its weight grows by a power
  // of two, its codes shrink (into e4m3's subnormals, or to zero).
  const std::vector<Signature> small_rows_may = {
      {"index_q_fp8", "rope part", MC::kRowPowerOfTwo},
      {"index_q_fp8", "pass-through part", MC::kRowPowerOfTwo},
      {"index_q_fp8", "rope part", MC::kWrongValue},
      {"index_q_fp8", "pass-through part", MC::kWrongValue},
      {"index_q_fp8", "rope part", MC::kOffByOne},
      {"index_q_fp8", "pass-through part", MC::kOffByOne}};
  const auto small_rows = [](const Case& c) {
    return c.has_indexer && c.num_tokens > 0 && small_amax_rows(c);
  };
  all.push_back(
      {PlantedCpuBug::kScaleFloorOnScale, small_rows,
       {{model_case([](Case& c) { c.values = ValueRecipe::kZeroRows; }),
         {{"index_weights_out", "weights", MC::kRowPowerOfTwo}}, {}},
        {model_case([](Case& c) { c.values = ValueRecipe::kMagnitudes; }),
         {{"index_weights_out", "weights", MC::kRowPowerOfTwo},
          {"index_q_fp8", "rope part", MC::kRowPowerOfTwo}},
         small_rows_may}},
       // Every row's amax above 0.027: noise (at least one of 16 or more
       // elements), specials (noise around them), large positions.
       {model_case([](Case& c) { c.values = ValueRecipe::kNormal; }),
        model_case([](Case& c) { c.values = ValueRecipe::kSpecials; }),
        model_case([](Case& c) { c.values = ValueRecipe::kCancellation; }),
        model_case([](Case& c) { c.values = ValueRecipe::kLargePositions; }),
        model_case([](Case& c) { c.has_indexer = false; })}});

  // The floor 1e-10: a row of amax below about 5.3e-5 (zero rows, small
  // magnitudes) gets a smaller scale, down to 2^-42 for an all-zero row.
  all.push_back(
      {PlantedCpuBug::kAmaxEps1e10, small_rows,
       {{model_case([](Case& c) { c.values = ValueRecipe::kZeroRows; }),
         {{"index_weights_out", "weights", MC::kRowPowerOfTwo}}, {}},
        {model_case([](Case& c) {
           c.values = ValueRecipe::kMagnitudes;
           c.weights_out_dtype = FloatType::kBf16;
         }),
         {{"index_weights_out", "weights", MC::kRowPowerOfTwo}}, small_rows_may}},
       {model_case([](Case& c) { c.values = ValueRecipe::kNormal; }),
        model_case([](Case& c) { c.values = ValueRecipe::kSpecials; }),
        model_case([](Case& c) { c.values = ValueRecipe::kLargePositions; }),
        model_case([](Case& c) { c.has_indexer = false; })}});

  // s0 itself as the scale: codes x / s0 are no longer exact scalings of
  // the right ones, weights w * s0 neither.
  all.push_back(
      {PlantedCpuBug::kNonPow2Scale, indexer_runs,
       {{model_case([](Case&) {}),
         {{"index_q_fp8", "rope part", MC::kWrongValue},
          {"index_q_fp8", "pass-through part", MC::kWrongValue},
          {"index_weights_out", "weights", MC::kWrongValue}},
         {{"index_q_fp8", "rope part", MC::kOffByOne},
          {"index_q_fp8", "pass-through part", MC::kOffByOne}}}},
       {model_case([](Case& c) { c.has_indexer = false; }), no_tokens()}});
}

// The bugs of the number conversions and of the weights' arithmetic.
void add_conversion_and_weights_bugs(std::vector<BugCases>& all) {
  const auto indexer_runs = [](const Case& c) { return c.has_indexer && c.num_tokens > 0; };
  // Overflow becomes NaN. Only the MQA fp8 path can overflow: an indexer
  // code is x / scale with scale >= RN(amax / 448), so |code| <= 448 (1 +
  // 2^-23) rounds to 448 at most, and an Inf row's scale is Inf (codes 0 or
  // NaN, never Inf): the indexer is silent even on specials.
  all.push_back(
      {PlantedCpuBug::kNonSaturatingE4m3,
       [](const Case& c) {
         return c.query_path == QueryPath::kFp8Packed && c.num_tokens > 0 && large_mqa_inputs(c);
       },
       {{model_case([](Case& c) {
           c.query_path = QueryPath::kFp8Packed;
           c.has_indexer = false;
           c.values = ValueRecipe::kSpecials;
         }),
         {{"query_out", "nope front", MC::kSpuriousNan}, {"query_out", "rope tail", MC::kSpuriousNan}},
         {}},
        {model_case([](Case& c) {
           c.query_path = QueryPath::kFp8Packed;
           c.values = ValueRecipe::kMagnitudes;
           c.q_scale_bits = kQScale037;
         }),
         {{"query_out", "nope front", MC::kSpuriousNan}, {"query_out", "rope tail", MC::kSpuriousNan}},
         {}}},
       {model_case([](Case& c) { c.values = ValueRecipe::kSpecials; }),
        model_case([](Case& c) {
          c.values = ValueRecipe::kMagnitudes;
          c.query_path = QueryPath::kBf16Separate;
        }),
        model_case([](Case& c) {
          c.query_path = QueryPath::kFp8Packed;
          c.q_scale_bits = kQScale037;
        })}});

  // A NaN keeps its sign. The model's fp32 arithmetic is the host's (x86:
  // a NaN operand's sign survives a division, and Inf / Inf gives the
  // default NaN 0xFFC00000, negative), RoPE results are canonical +NaN: a
  // negative NaN reaches the conversion from ql_nope (fp8 front), from
  // index_q's pass-through dims, and as Inf / Inf in an Inf row. Only the
  // specials (and the mix) hold NaN or Inf.
  all.push_back(
      {PlantedCpuBug::kE4m3NanSign,
       [](const Case& c) {
         return c.num_tokens > 0 &&
                (c.values == ValueRecipe::kSpecials || c.values == ValueRecipe::kMixed ||
                 c.values == ValueRecipe::kNanRows) &&
                (c.query_path == QueryPath::kFp8Packed || c.has_indexer);
       },
       {{model_case([](Case& c) {
           c.query_path = QueryPath::kFp8Packed;
           c.has_indexer = false;
           c.values = ValueRecipe::kSpecials;
         }),
         {{"query_out", "nope front", MC::kNanBits}}, {}},
        {model_case([](Case& c) { c.values = ValueRecipe::kSpecials; }),
         {{"index_q_fp8", "pass-through part", MC::kNanBits}},
         {{"index_q_fp8", "rope part", MC::kNanBits}}}},
       {model_case([](Case& c) {
          c.query_path = QueryPath::kBf16Separate;
          c.has_indexer = false;
          c.values = ValueRecipe::kSpecials;
        }),
        model_case([](Case& c) {
          c.query_path = QueryPath::kFp8Packed;
          c.values = ValueRecipe::kMagnitudes;
        })}});

  // Fast-math FTZ: only a subnormal fp32 operand or result shows, which the
  // specials (bf16 and f32 subnormals), the magnitudes (rows of 2^-120) and
  // value edits hold. Rows of the subnormal 0x007F (about 2^-126): the
  // rope's products and results are subnormal, flushed to zero.
  all.push_back(
      {PlantedCpuBug::kFastMathFtz,
       [](const Case& c) {
         return c.num_tokens > 0 &&
                (c.values == ValueRecipe::kSpecials || c.values == ValueRecipe::kMagnitudes ||
                 c.values == ValueRecipe::kMixed || !c.edits.empty());
       },
       {{with_all(model_case([](Case& c) {
                    c.query_path = QueryPath::kBf16Separate;
                    c.has_indexer = false;
                  }),
                  TensorId::kQPe, 0x007F),
         {{"query_out", "rope", MC::kWrongValue}},
         {{"query_out", "rope", MC::kOffByOne}, {"query_out", "rope", MC::kSignOfZero}}},
        // A subnormal weight (2^-127) on rows of 2^19 (scale 2^11): the
        // right weight is a normal number, the flushed one 0.
        {with_all(with_all(model_base_case(), TensorId::kIndexWeights, 0x00400000u), TensorId::kIndexQ,
                  0x4900u),
         {{"index_weights_out", "weights", MC::kWrongValue}}, {}},
        // The specials' subnormals: a rope result, an indexer code's sign
        // (a negative subnormal product flushed, -0 + 0 = +0), a weight.
        {model_case([](Case& c) { c.values = ValueRecipe::kSpecials; }),
         {{"query_out", "rope tail", MC::kWrongValue},
          {"index_q_fp8", "rope part", MC::kSignOfZero},
          {"index_weights_out", "weights", MC::kWrongValue}},
         {{"query_out", "rope tail", MC::kOffByOne}, {"query_out", "rope tail", MC::kSignOfZero}}}},
       {model_case([](Case& c) { c.values = ValueRecipe::kNormal; }),
        model_case([](Case& c) { c.values = ValueRecipe::kScaleEdges; }),
        model_case([](Case& c) { c.values = ValueRecipe::kCancellation; }),
        model_case([](Case& c) { c.values = ValueRecipe::kZeroRows; })}});

  // bf16 between RoPE and quantization: a double rounding moves a code by
  // one; an amax that rounds up past 448 * 2^k doubles the row's scale. On
  // the band rows (cos = 1 + m * 2^-23, an element 448 * 2^k) bf16 drops the
  // m: s0 becomes 2^k exactly, the scale half the right one.
  const std::vector<Signature> band_rows = {
      {"index_q_fp8", "rope part", MC::kRowPowerOfTwo},
      {"index_q_fp8", "pass-through part", MC::kRowPowerOfTwo},
      {"index_weights_out", "weights", MC::kRowPowerOfTwo}};
  all.push_back(
      {PlantedCpuBug::kBf16BeforeQuant,
       [=](const Case& c) { return indexer_runs(c) && !only_position_zero(c); },
       {{model_case([](Case&) {}), {{"index_q_fp8", "rope part", MC::kOffByOne}}, band_rows},
        // A bf16 element on an e4m3 tie rounds to even where the right
        // value (times 1 + m * 2^-23) rounds up: such a row is not off by
        // one power of two as a whole.
        {model_case([](Case& c) { c.values = ValueRecipe::kScaleBand; }), band_rows,
         {{"index_q_fp8", "rope part", MC::kWrongValue},
          {"index_q_fp8", "pass-through part", MC::kWrongValue},
          {"index_q_fp8", "rope part", MC::kOffByOne},
          {"index_q_fp8", "pass-through part", MC::kOffByOne}}}},
       // At position 0 the RoPE'd row is the input: already bf16.
       {at_position_zero(), model_case([](Case& c) { c.has_indexer = false; })}});

  // Another order of the weight's three products: one rounding apart.
  all.push_back(
      {PlantedCpuBug::kWeightsFoldedOrder, indexer_runs,
       {{model_case([](Case&) {}), {{"index_weights_out", "weights", MC::kOffByOne}}, {}},
        {model_case([](Case& c) {
           c.weights_dtype = FloatType::kBf16;
           c.values = ValueRecipe::kMagnitudes;
         }),
         {{"index_weights_out", "weights", MC::kOffByOne}}, {}}},
       {model_case([](Case& c) { c.has_indexer = false; }), no_tokens()}});

  // Without the scale each weight is off by the row's scale, a power of two.
  all.push_back(
      {PlantedCpuBug::kWeightsWithoutScale, indexer_runs,
       {{model_case([](Case&) {}), {{"index_weights_out", "weights", MC::kRowPowerOfTwo}}, {}},
        {model_case([](Case& c) {
           c.weights_out_dtype = FloatType::kBf16;
           c.query_path = QueryPath::kFp8Packed;
         }),
         {{"index_weights_out", "weights", MC::kRowPowerOfTwo}}, {}}},
       {model_case([](Case& c) { c.has_indexer = false; }), no_tokens()}});

  // The head_scale argument ignored: it shows only where the argument is not
  // RN(NI^-0.5) of the launch's NI. DeepSeek's 0.125 (64 heads) on NI = 2 is
  // no power of two away from 2^-0.5; twice the default is one.
  all.push_back(
      {PlantedCpuBug::kRecomputedHeadScale,
       [=](const Case& c) {
         return indexer_runs(c) && c.head_scale_bits != default_head_scale_bits(c.indexer_heads);
       },
       {{with_head_scale(model_base_case(), default_head_scale_bits(64)),
         {{"index_weights_out", "weights", MC::kWrongValue}}, {}},
        {with_head_scale(model_case([](Case& c) { c.weights_out_dtype = FloatType::kBf16; }),
                         bits_of(2.0f * float_from_bits(default_head_scale_bits(2)))),
         {{"index_weights_out", "weights", MC::kRowPowerOfTwo}}, {}}},
       // With the default head_scale (every case built by model_case) the
       // recomputed value is the argument's bits: equivalent there.
       {model_case([](Case& c) { c.indexer_heads = 7; }),
        model_case([](Case& c) {
          c.indexer_heads = 64;
          c.index_dim = 128;
        }),
        with_head_scale(model_case([](Case& c) { c.has_indexer = false; }), default_head_scale_bits(64))}});
}

// The bugs of the grid's coverage: which programs run.
void add_coverage_bugs(std::vector<BugCases>& all) {
  // The last of an odd number of MQA heads: rope and front unwritten (under
  // the alias the front is ql_nope already; on the separate path only the
  // rope exists).
  const std::vector<Signature> whole_head = {{"query_out", "nope front", MC::kUnwritten},
                                             {"query_out", "rope tail", MC::kUnwritten}};
  all.push_back(
      {PlantedCpuBug::kOddHeadsDropLast,
       [](const Case& c) { return c.num_tokens > 0 && c.mqa_heads % 2 == 1; },
       {{model_case([](Case&) {}), whole_head, {}},
        {model_case([](Case& c) { c.alias = AliasMode::kExactFront; }),
         {{"query_out", "rope tail", MC::kUnwritten}}, {}},
        {model_case([](Case& c) {
           c.query_path = QueryPath::kBf16Separate;
           c.mqa_heads = 5;
         }),
         {{"query_out", "rope", MC::kUnwritten}}, {}},
        {model_case([](Case& c) {
           c.query_path = QueryPath::kFp8Packed;
           c.mqa_heads = 1;
         }),
         whole_head, {}}},
       {model_case([](Case& c) { c.mqa_heads = 4; }),
        model_case([](Case& c) {
          c.mqa_heads = 2;
          c.query_path = QueryPath::kFp8Packed;
        })}});

  // The indexer's outputs written on a shared layer: zero codes and +0
  // weights where they must stay untouched.
  all.push_back(
      {PlantedCpuBug::kHasIndexerIgnored,
       [](const Case& c) { return c.num_tokens > 0 && !c.has_indexer; },
       {{model_case([](Case& c) { c.has_indexer = false; }),
         {{"index_q_fp8", "rope part", MC::kWrittenWhenDisabled},
          {"index_q_fp8", "pass-through part", MC::kWrittenWhenDisabled},
          {"index_weights_out", "weights", MC::kWrittenWhenDisabled}},
         {}},
        {model_case([](Case& c) {
           c.has_indexer = false;
           c.rope_dim = c.index_dim;  // no pass-through part
           c.weights_out_dtype = FloatType::kBf16;
           apply_layout_mix(LayoutMix::kPadded, c);
         }),
         {{"index_q_fp8", "rope part", MC::kWrittenWhenDisabled},
          {"index_weights_out", "weights", MC::kWrittenWhenDisabled}},
         {}}},
       {model_case([](Case&) {}),
        model_case([](Case& c) {
          c.has_indexer = false;
          c.num_tokens = 0;
        })}});

  // Heads from 2 * NI on never launched: unwritten, as a whole head; with no
  // indexer every head.
  all.push_back(
      {PlantedCpuBug::kMqaGridSizedByNi,
       [](const Case& c) {
         return c.num_tokens > 0 && c.mqa_heads > 2 * (c.has_indexer ? c.indexer_heads : 0);
       },
       {{model_case([](Case& c) { c.mqa_heads = 5; }), whole_head, {}},
        {model_case([](Case& c) {
           c.has_indexer = false;
           c.query_path = QueryPath::kFp8Packed;
         }),
         whole_head, {}},
        {model_case([](Case& c) {
           c.mqa_heads = 16;
           c.indexer_heads = 4;
           c.query_path = QueryPath::kBf16Separate;
           apply_layout_mix(LayoutMix::kProduction, c);
         }),
         {{"query_out", "rope", MC::kUnwritten}}, {}}},
       {model_case([](Case&) {}),  // H = 3 <= 2 * NI = 4
        model_case([](Case& c) {
          c.mqa_heads = 8;
          c.indexer_heads = 4;
        })}});
  // Rules only some values decide: the recipes aimed at them expose each
  // bug in one code (or, for the NaN row, a NaN weight); a case without the
  // part the bug lives in cannot show it.
  const auto with = [](ValueRecipe recipe, QueryPath path) {
    return model_case([=](Case& c) {
      c.values = recipe;
      c.query_path = path;
    });
  };
  const Signature rope_part{"index_q_fp8", "rope part", MC::kOffByOne};
  const Signature pass_part{"index_q_fp8", "pass-through part", MC::kOffByOne};
  const Signature weights_by_one{"index_weights_out", "weights", MC::kOffByOne};
  const Signature weights_wrong{"index_weights_out", "weights", MC::kWrongValue};
  const auto indexer_only = [](const Case& c) { return c.num_tokens > 0 && c.has_indexer; };
  const auto fp8_only = [](const Case& c) { return c.num_tokens > 0 && c.query_path == QueryPath::kFp8Packed; };
  const Case no_indexer = model_case([](Case& c) { c.has_indexer = false; });
  const Case bf16_path = model_case([](Case& c) { c.query_path = QueryPath::kBf16Packed; });
  all.push_back({PlantedCpuBug::kIndexerUnfused, indexer_only,
                 {{with(ValueRecipe::kContraction, QueryPath::kBf16Packed), {rope_part}, {weights_by_one, weights_wrong}}},
                 {no_indexer}});
  all.push_back({PlantedCpuBug::kMqaFp8R1Unfused, fp8_only,
                 {{with(ValueRecipe::kContraction, QueryPath::kFp8Packed),
                   {{"query_out", "rope tail", MC::kOffByOne}},
                   {{"query_out", "rope tail", MC::kSignOfZero}}}},
                 {bf16_path}});
  all.push_back({PlantedCpuBug::kE4m3TiesAwayIndexer, indexer_only,
                 {{with(ValueRecipe::kTies, QueryPath::kBf16Packed), {rope_part, pass_part}, {}}},
                 {no_indexer}});
  all.push_back({PlantedCpuBug::kE4m3TiesAwayMqa, fp8_only,
                 {{with(ValueRecipe::kTies, QueryPath::kFp8Packed),
                   {{"query_out", "nope front", MC::kOffByOne}, {"query_out", "rope tail", MC::kOffByOne}}, {}}},
                 {bf16_path}});
  all.push_back({PlantedCpuBug::kBf16TiesAwayMqa,
                 [](const Case& c) { return c.num_tokens > 0 && c.query_path != QueryPath::kFp8Packed; },
                 {{with(ValueRecipe::kTies, QueryPath::kBf16Packed), {{"query_out", "rope tail", MC::kOffByOne}}, {}},
                  {with(ValueRecipe::kTies, QueryPath::kBf16Separate), {{"query_out", "rope", MC::kOffByOne}}, {}}},
                 {model_case([](Case& c) { c.query_path = QueryPath::kFp8Packed; })}});
  all.push_back({PlantedCpuBug::kNanRowScaleNan, indexer_only,
                 {{with(ValueRecipe::kNanRows, QueryPath::kBf16Packed),
                   {{"index_weights_out", "weights", MC::kSpuriousNan}}, {}}},
                 {no_indexer}});
}

std::vector<BugCases> bug_cases() {
  std::vector<BugCases> all;
  // Truncation moves a bf16 one code towards zero: off-by-one. RoPE NaN
  // results are canonical (0x7FFFFFFF, spec::rope_term), which truncate to
  // the same 0x7FFF, so the rope shows no nan-bits.
  all.push_back(
      {PlantedCpuBug::kTruncatingBf16,
       [](const Case& c) {
         return c.query_path != QueryPath::kFp8Packed ||
                (c.has_indexer && c.weights_out_dtype == FloatType::kBf16);
       },
       {{model_case([](Case&) {}), {{"query_out", "rope tail", MC::kOffByOne}}, {}},
        {model_case([](Case& c) {
           c.query_path = QueryPath::kBf16Separate;
           c.has_indexer = false;
           c.values = ValueRecipe::kSpecials;
         }),
         {{"query_out", "rope", MC::kOffByOne}},
         {}},
        {model_case([](Case& c) {
           c.query_path = QueryPath::kFp8Packed;
           c.weights_out_dtype = FloatType::kBf16;
         }),
         {{"index_weights_out", "weights", MC::kOffByOne}},
         {}}},
       {model_case([](Case& c) { c.query_path = QueryPath::kFp8Packed; })}});

  // The tail block loses its last token: unwritten, in every output.
  all.push_back(
      {PlantedCpuBug::kSkipLastTailToken, [](const Case& c) { return c.num_tokens % 16 != 0; },
       {{model_case([](Case&) {}), unwritten_token(true, QueryPath::kBf16Packed), {}},
        {model_case([](Case& c) {
           c.num_tokens = 1;
           c.query_path = QueryPath::kFp8Packed;
         }),
         unwritten_token(true, QueryPath::kFp8Packed), {}},
        {model_case([](Case& c) {
           c.num_tokens = 15;
           c.query_path = QueryPath::kBf16Separate;
           c.has_indexer = false;
         }),
         unwritten_token(false, QueryPath::kBf16Separate), {}}},
       {model_case([](Case& c) { c.num_tokens = 16; }),
        model_case([](Case& c) { c.num_tokens = 48; })}});

  // The other pairing rotates the wrong elements: wrong values in the rope
  // part; the row's amax (so its scale, so every code and the weight) may
  // move with it.
  const std::vector<Signature> rope_moves_scale = {
      {"index_q_fp8", "pass-through part", MC::kWrongValue},
      {"index_q_fp8", "pass-through part", MC::kOffByOne},
      {"index_q_fp8", "rope part", MC::kOffByOne},
      {"index_weights_out", "weights", MC::kRowPowerOfTwo}};
  all.push_back(
      {PlantedCpuBug::kSwappedIndexerRope,
       [](const Case& c) { return c.has_indexer && c.rope_dim > 2; },
       {{model_case([](Case& c) { c.indexer_rope = RopeStyle::kNeox; }),
         {{"index_q_fp8", "rope part", MC::kWrongValue}}, rope_moves_scale},
        {model_case([](Case& c) { c.indexer_rope = RopeStyle::kInterleaved; }),
         {{"index_q_fp8", "rope part", MC::kWrongValue}}, rope_moves_scale}},
       // With R = 2 NeoX and interleaved are the same rotation.
       {model_case([](Case& c) {
          c.rope_dim = 2;
          c.index_dim = 16;
        }),
        model_case([](Case& c) { c.has_indexer = false; })}});

  // Half the scale on every band row: each code and the weight double.
  const std::vector<Signature> band_rows = {
      {"index_q_fp8", "rope part", MC::kRowPowerOfTwo},
      {"index_q_fp8", "pass-through part", MC::kRowPowerOfTwo},
      {"index_weights_out", "weights", MC::kRowPowerOfTwo}};
  all.push_back(
      {PlantedCpuBug::kLog2fScale,
       [](const Case& c) {
         // Band rows exist only in an f32 indexer cache (bf16 cannot hold
         // 1 + m * 2^-23), under the band recipe or the per-row mix.
         return c.has_indexer && c.indexer_cache_dtype == FloatType::kF32 &&
                (c.values == ValueRecipe::kScaleBand || c.values == ValueRecipe::kMixed);
       },
       {{model_case([](Case& c) { c.values = ValueRecipe::kScaleBand; }), band_rows, {}},
        {model_case([](Case& c) {
           c.values = ValueRecipe::kScaleBand;
           c.indexer_rope = RopeStyle::kInterleaved;
           c.weights_dtype = c.weights_out_dtype = FloatType::kBf16;
           c.query_path = QueryPath::kFp8Packed;
         }),
         band_rows, {}}},
       // No band rows: scale edges (amax at 448 * 2^k and one ulp either
       // side), magnitudes, specials, plain noise; the band recipe on a bf16
       // cache.
       {model_case([](Case& c) { c.values = ValueRecipe::kScaleEdges; }),
        model_case([](Case& c) { c.values = ValueRecipe::kMagnitudes; }),
        model_case([](Case& c) { c.values = ValueRecipe::kSpecials; }),
        model_case([](Case& c) { c.values = ValueRecipe::kLargePositions; }),
        model_case([](Case& c) { c.values = ValueRecipe::kNormal; }),
        model_case([](Case& c) {
          c.values = ValueRecipe::kScaleBand;
          c.indexer_cache_dtype = FloatType::kBf16;
        })}});

  // The front is never copied: query_out's nope front keeps the poison.
  all.push_back(
      {PlantedCpuBug::kSkipCopyUnaliased,
       [](const Case& c) {
         return c.query_path == QueryPath::kBf16Packed && c.alias == AliasMode::kNone;
       },
       {{model_case([](Case&) {}), {{"query_out", "nope front", MC::kUnwritten}}, {}},
        {model_case([](Case& c) {
           apply_layout_mix(LayoutMix::kProduction, c);
           c.num_tokens = 1;
         }),
         {{"query_out", "nope front", MC::kUnwritten}}, {}}},
       {model_case([](Case& c) { c.alias = AliasMode::kExactFront; }),
        model_case([](Case& c) { c.query_path = QueryPath::kFp8Packed; }),
        model_case([](Case& c) { c.query_path = QueryPath::kBf16Separate; })}});

  // Head h reads column h instead of h * stride: another head's weight or
  // padding (0xFD bytes, a large negative number).
  all.push_back(
      {PlantedCpuBug::kUnitWeightsColumn,
       [](const Case& c) {
         return c.has_indexer && c.indexer_heads > 1 && c.weights_column_stride > 1;
       },
       {{model_case([](Case& c) { c.weights_column_stride = 2; }),
         {{"index_weights_out", "weights", MC::kWrongValue}}, {}},
        {model_case([](Case& c) {
           c.weights_column_stride = 3;
           c.indexer_heads = 4;
           c.weights_dtype = FloatType::kBf16;
           c.weights_layout = Layout::kPaddedRows;
         }),
         {{"index_weights_out", "weights", MC::kWrongValue}}, {}}},
       // One indexer head reads only column 0, where both strides agree.
       {model_case([](Case& c) {
          c.weights_column_stride = 2;
          c.indexer_heads = 1;
        }),
        model_case([](Case& c) { c.weights_column_stride = 1; })}});
  add_rope_and_scale_bugs(all);
  add_conversion_and_weights_bugs(all);
  add_coverage_bugs(all);
  return all;
}

const BugCases* find_bug(const std::vector<BugCases>& all, PlantedCpuBug bug) {
  for (const BugCases& b : all) {
    if (b.bug == bug) return &b;
  }
  return nullptr;
}

bool listed(const std::vector<Signature>& list, const Signature& s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

class PlantedBugTest : public testing::TestWithParam<PlantedCpuBugInfo> {
 protected:
  std::string backend() const { return model_backend_name(GetParam().backend_suffix); }
};

TEST_P(PlantedBugTest, FailsWithItsSignaturesWhereItCanShow) {
  const auto all = bug_cases();
  const BugCases* b = find_bug(all, GetParam().bug);
  ASSERT_NE(b, nullptr) << "no exposing cases listed for " << backend();
  ASSERT_FALSE(b->exposures.empty());
  for (const Exposure& e : b->exposures) {
    ASSERT_TRUE(b->can_show(e.c)) << describe(e.c);
    const Verdict v = verdict_of(backend(), e.c);
    ASSERT_TRUE(v.outcome.is_ok()) << verdict_text(v, e.c);
    EXPECT_EQ(v.exit_code(), 1) << verdict_text(v, e.c);
    for (const Signature& s : e.must_show) {
      EXPECT_EQ(v.report.counts.count(s), 1u) << s.text() << " missing\n" << verdict_text(v, e.c);
    }
    for (const auto& [s, count] : v.report.counts) {
      EXPECT_TRUE(listed(e.must_show, s) || listed(e.may_show, s))
          << s.text() << " (" << count << ") not expected\n"
          << verdict_text(v, e.c);
    }
  }
}

TEST_P(PlantedBugTest, PassesWhereItCannotShow) {
  const auto all = bug_cases();
  const BugCases* b = find_bug(all, GetParam().bug);
  ASSERT_NE(b, nullptr);
  std::vector<Case> cases = model_grid();
  const size_t grid_size = cases.size();
  for (const Case& c : real_and_edge_dims()) cases.push_back(c);
  for (const Case& c : b->silent) {
    EXPECT_FALSE(b->can_show(c)) << describe(c);
    cases.push_back(c);
  }
  int silent = 0, could_show = 0, showed = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const Verdict v = verdict_of(backend(), c);
    ASSERT_TRUE(v.outcome.is_ok()) << verdict_text(v, c);
    if (b->can_show(c)) {
      if (i < grid_size) {
        ++could_show;
        showed += v.passed() ? 0 : 1;
      }
      continue;
    }
    ++silent;
    EXPECT_TRUE(v.passed()) << verdict_text(v, c);
  }
  std::cout << "[ info     ] " << backend() << ": passes " << silent
            << " cases where it cannot show; fails " << showed << " of " << could_show
            << " grid cases where it can\n";
  EXPECT_GT(silent, 0);
  EXPECT_GT(could_show, 0);
  EXPECT_GT(showed, 0);
}

std::vector<PlantedCpuBugInfo> planted_bugs_only() {
  std::vector<PlantedCpuBugInfo> bugs;
  for (const PlantedCpuBugInfo& info : planted_cpu_bugs()) {
    if (info.is_a_bug) bugs.push_back(info);
  }
  return bugs;
}

std::string test_name(const testing::TestParamInfo<PlantedCpuBugInfo>& info) {
  std::string name = info.param.backend_suffix;
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(CpuModel, PlantedBugTest, testing::ValuesIn(planted_bugs_only()),
                         test_name);

}  // namespace
}  // namespace qcheck::test

namespace qcheck {
// Names the variant in gtest's messages instead of dumping its bytes.
void PrintTo(const PlantedCpuBugInfo& info, std::ostream* os) { *os << info.backend_suffix; }
}  // namespace qcheck
