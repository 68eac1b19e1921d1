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

#include "fuzz/cpu_model.h"
#include "fuzz/verdict.h"
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
