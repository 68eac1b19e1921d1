// The judge (fuzz/verdict/judge.h): acceptance sets and --profile auto (and, at the
// end, kernel against kernel, fuzz/verdict/against.h, which judges under auto), proven on
// outputs assembled by hand from the oracle's sets under several profiles
// and patterns: rows mixed between patterns, codes moved inside and outside
// div.full's 2 ulp, one element no profile gives.
#include "fuzz/verdict/judge.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "fuzz/verdict/against.h"
#include "fuzz/verdict/compare.h"
#include "fuzz/verdict/verdict.h"
#include "numerics/conversions.h"
#include "numerics/quotient.h"
#include "tests/harness/case_samples.h"

namespace qcheck {
namespace {

TensorSet expected_under(const Case& c, const Profile& p) {
  std::string error;
  TensorSet set = expected_tensors(c, p, scalar_row_ops(), Poison::kA, &error);
  EXPECT_EQ(error, "") << p.name;
  return set;
}

Profile named(const std::string& name) {
  Profile p;
  EXPECT_TRUE(find_profile(name, &p)) << name;
  return p;
}

Profile with_pattern(Profile p, Contraction minus, Contraction plus) {
  p.mqa_fp8_r1 = p.mqa_bf16_r1 = p.indexer_minus = minus;
  p.mqa_fp8_r2 = p.mqa_bf16_r2 = p.indexer_plus = plus;
  return p;
}

Judgement judge(const Case& c, const std::string& profile, const TensorSet& got) {
  Judgement j;
  EXPECT_EQ(judge_runs(c, profile, scalar_row_ops(), got, got, 20, nullptr, nullptr, &j), "") << profile;
  return j;
}

bool same_outputs(const TensorSet& a, const TensorSet& b) {
  for (size_t i = 0; i < a.buffers.size(); ++i) {
    if (!a.plan.buffers[i].is_output) continue;
    if (std::memcmp(a.buffers[i].payload(), b.buffers[i].payload(), size_t(a.plan.buffers[i].payload_bytes)) != 0)
      return false;
  }
  return true;
}

void copy_row(const TensorSet& from, TensorSet& to, const TensorGeometry& g, int64_t t, int64_t h) {
  for (int64_t i = 0; i < g.width; ++i) {
    std::memcpy(to.element(g, t, h, i), from.element(g, t, h, i), size_t(element_bytes(g.type)));
  }
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& line : lines) s += line + "\n";
  return s;
}

Case fp8_case(uint32_t q_scale_bits) {
  Case c = test::small_case();
  c.query_path = QueryPath::kFp8Packed;
  c.q_scale_bits = q_scale_bits;
  return c;
}

// Cases whose values the profiles' differences show on: RoPE cancellation
// (contraction), the UE8M0 band (log2f ceiling), special values (NaN, 464,
// Inf: saturation and NaN propagation), on both query paths. On ordinary
// noise most profiles give the same bits: their differences are rare there.
std::vector<Case> telling_cases() {
  std::vector<Case> cases;
  for (ValueRecipe recipe : {ValueRecipe::kCancellation, ValueRecipe::kScaleBand, ValueRecipe::kSpecials}) {
    for (Case c : {test::small_case(), fp8_case(0x3F800000u)}) {
      c.values = recipe;
      c.num_tokens = 64;
      cases.push_back(c);
    }
  }
  return cases;
}

// Every named profile's own outputs are explained by that profile, and auto
// lists exactly the profiles whose expected bits are those outputs.
TEST(Judge, AutoNamesEveryProfileThatGivesTheOutputs) {
  for (const Case& c : telling_cases()) {
    for (const std::string& maker : profile_names()) {
      const TensorSet got = expected_under(c, named(maker));
      const Judgement j = judge(c, kAutoProfile, got);
      std::vector<std::string> want;
      for (const std::string& name : profile_names()) {
        if (same_outputs(expected_under(c, named(name)), got)) want.push_back(name);
      }
      EXPECT_EQ(j.explaining, want) << maker << "\n" << joined(j.explanation);
      EXPECT_TRUE(j.report.passed()) << maker;
      ASSERT_FALSE(j.explanation.empty());
      EXPECT_EQ(j.explanation[0].rfind("auto: explained bit for bit by ", 0), 0u) << j.explanation[0];
    }
  }
}

// Every pair of named profiles differs on one of the telling cases (else
// auto could not tell them apart).
TEST(Judge, TheNamedProfilesDifferOnTellingCases) {
  const std::vector<std::string> names = profile_names();
  for (size_t a = 0; a < names.size(); ++a) {
    for (size_t b = a + 1; b < names.size(); ++b) {
      bool differ = false;
      for (const Case& c : telling_cases()) {
        Case tiny = c;
        if (names[a] == "flashmla" || names[b] == "flashmla") {
          // The floor on the scale shows only for rows with amax below about 0.027.
          tiny.edits.push_back(ValueEdit{TensorId::kIndexQ, 0, -1, -1, 0, -1, 0x3C00});  // 2^-7
        }
        differ = differ || !same_outputs(expected_under(tiny, named(names[a])), expected_under(tiny, named(names[b])));
      }
      EXPECT_TRUE(differ) << names[a] << " and " << names[b];
    }
  }
}

TEST(Judge, AutoPointsAtTheFirstElementNoProfileExplains) {
  const Case c = test::small_case();
  TensorSet got = expected_under(c, qcheck_profile());
  const TensorGeometry& g = *got.find(TensorId::kIndexQFp8);
  // Element [2, 1, 5]: a code no profile gives there.
  uint8_t* code = got.element(g, 2, 1, 5);
  std::vector<TensorSet> sets;
  for (const std::string& name : profile_names()) sets.push_back(expected_under(c, named(name)));
  uint8_t planted = 0;
  for (int candidate = 1; candidate < 0x7F; ++candidate) {
    bool any = false;
    for (const TensorSet& s : sets) any = any || s.element(g, 2, 1, 5)[0] == candidate;
    if (!any) {
      planted = uint8_t(candidate);
      break;
    }
  }
  *code = planted;
  const Judgement j = judge(c, kAutoProfile, got);
  EXPECT_TRUE(j.explaining.empty());
  EXPECT_FALSE(j.report.passed());
  const std::string text = joined(j.explanation);
  EXPECT_NE(text.find("auto: no profile explains the outputs bit for bit"), std::string::npos) << text;
  EXPECT_NE(text.find("first element no profile explains: index_q_fp8[2, 1, 5]"), std::string::npos) << text;
  EXPECT_NE(text.find("expected: qcheck "), std::string::npos) << text;
  // The one changed code: qcheck comes closest on that tensor.
  EXPECT_NE(text.find("index_q_fp8 qcheck (1 mismatches)"), std::string::npos) << text;
  EXPECT_EQ(j.profile, "qcheck");
  EXPECT_EQ(j.report.total, 1);
}

TEST(Judge, AnyFmaAcceptsOnePatternPerRowNotAMixWithinARow) {
  // The bf16 paths: e4m3's three mantissa bits hide most contraction
  // differences, bf16's eight show them on cancelling pairs.
  Case separate = test::small_case();
  separate.query_path = QueryPath::kBf16Separate;
  for (Case c : {test::small_case(), separate}) {
    c.values = ValueRecipe::kCancellation;
    c.num_tokens = 64;
    c.rope_dim = c.index_dim = 64;  // many r1 terms per row
    const TensorSet own = expected_under(c, qcheck_profile());
    const TensorSet other = expected_under(c, with_pattern(qcheck_profile(), Contraction::kNone, Contraction::kFuseSin));
    ASSERT_FALSE(same_outputs(own, other));
    TensorSet got = own;
    for (const TensorGeometry& g : got.plan.tensors) {
      if (g.role != TensorRole::kOutput) continue;
      for (int64_t t = 0; t < g.rows; ++t) {
        for (int64_t h = 0; h < g.cols; ++h) {
          if ((t + h) % 2 == 1) copy_row(other, got, g, t, h);  // the weight goes with its codes
        }
      }
    }
    EXPECT_FALSE(judge(c, "qcheck", got).report.passed());
    const Judgement j = judge(c, "qcheck+any-fma", got);
    EXPECT_TRUE(j.report.passed()) << report_text(j.report);
    const std::string text = joined(j.explanation);
    EXPECT_NE(text.find("none/fuse-sin ("), std::string::npos) << text;  // with its first rows named
    EXPECT_NE(text.find("qcheck+any-fma's patterns"), std::string::npos) << text;
    // auto: no named profile gives these rows, the same with any pattern does.
    const Judgement automatic = judge(c, kAutoProfile, got);
    EXPECT_TRUE(automatic.report.passed());
    ASSERT_FALSE(automatic.explaining.empty());
    EXPECT_EQ(automatic.explaining[0], "qcheck+any-fma") << joined(automatic.explanation);
    for (const std::string& name : automatic.explaining) EXPECT_NE(name.find("+any-fma"), std::string::npos);
    EXPECT_NE(joined(automatic.explanation).find("auto: no named profile explains the outputs bit for bit; with any "
                                                 "FMA pattern per row: qcheck+any-fma"),
              std::string::npos)
        << joined(automatic.explanation);

    // The r1 terms of one row, half from each pattern: no single pattern
    // gives that row.
    std::vector<TensorSet> patterns;
    for (Contraction m : {Contraction::kNone, Contraction::kFuseCos, Contraction::kFuseSin}) {
      for (Contraction p : {Contraction::kNone, Contraction::kFuseCos, Contraction::kFuseSin}) {
        patterns.push_back(expected_under(c, with_pattern(qcheck_profile(), m, p)));
      }
    }
    const TensorGeometry& q = *got.find(TensorId::kQueryOut);
    const int64_t rope_start = q.width - c.rope_dim, half = c.rope_dim / 2;
    const auto differs = [&](int64_t t, int64_t h, int64_t i) {
      return std::memcmp(own.element(q, t, h, i), other.element(q, t, h, i), size_t(element_bytes(q.type))) != 0;
    };
    bool planted = false;
    for (int64_t t = 0; t < q.rows && !planted; ++t) {
      for (int64_t h = 0; h < q.cols && !planted; ++h) {
        bool first = false, second = false;
        for (int64_t i = 0; i < c.rope_dim; i += 2) (i < half ? first : second) |= differs(t, h, rope_start + i);
        if (!first || !second) continue;
        TensorSet mixed = own;
        for (int64_t i = 0; i < half; i += 2) {
          std::memcpy(mixed.element(q, t, h, rope_start + i), other.element(q, t, h, rope_start + i),
                      size_t(element_bytes(q.type)));
        }
        bool explained = false;
        for (const TensorSet& s : patterns) {
          bool row_equal = true;
          for (int64_t i = 0; i < q.width; ++i) {
            row_equal = row_equal && std::memcmp(mixed.element(q, t, h, i), s.element(q, t, h, i),
                                                 size_t(element_bytes(q.type))) == 0;
          }
          explained = explained || row_equal;
        }
        if (explained) continue;
        planted = true;
        EXPECT_FALSE(judge(c, "qcheck+any-fma", mixed).report.passed()) << "row " << t << ", " << h;
      }
    }
    EXPECT_TRUE(planted) << "no row where the two halves' patterns give a row no pattern gives";
  }
}

// div.full with a q_scale that is not a power of two: a code of a quotient within 2 ulp of the IEEE
// one is accepted, one code further is not.
TEST(Judge, DivFullAcceptsTheCodesOfQuotientsWithinTwoUlp) {
  // q_scale = RN(1 / 1.0625), not a power of two: a power-of-two x gives a
  // quotient within an ulp of an e4m3 midpoint (1.0625 lies between the
  // codes 1 and 1.125), so the bounds' codes differ from the IEEE one.
  const float q_scale = 1.0f / 1.0625f;
  uint32_t q_bits;
  std::memcpy(&q_bits, &q_scale, 4);
  std::vector<uint16_t> near_boundary;
  for (uint32_t x = 0x3C00; x < 0x4300 && near_boundary.size() < 4; ++x) {
    const float v = spec::f32_from_bf16(uint16_t(x));
    const uint8_t centre = spec::e4m3_from_f32(v / q_scale, E4m3Overflow::kSatFinite);
    const uint8_t high = spec::e4m3_from_f32(spec::mqa_quotient(v, q_scale, Division::kIeeePlus2Ulp), E4m3Overflow::kSatFinite);
    const uint8_t low = spec::e4m3_from_f32(spec::mqa_quotient(v, q_scale, Division::kIeeeMinus2Ulp), E4m3Overflow::kSatFinite);
    if (high != centre || low != centre) near_boundary.push_back(uint16_t(x));
  }
  ASSERT_EQ(near_boundary.size(), 4u);
  Case c = fp8_case(q_bits);
  c.profile = "vllm-triton";
  for (size_t k = 0; k < near_boundary.size(); ++k) {
    c.edits.push_back(ValueEdit{TensorId::kQlNope, int64_t(k), 1, 0, 0, 1, near_boundary[k]});
  }
  const Profile p = named("vllm-triton");
  const TensorSet centre = expected_under(c, p);
  Profile bound = p;
  bound.mqa_division = Division::kIeeeMinus2Ulp;
  const TensorSet low = expected_under(c, bound);
  bound.mqa_division = Division::kIeeePlus2Ulp;
  const TensorSet high = expected_under(c, bound);
  const TensorGeometry& g = *centre.find(TensorId::kQueryOut);
  TensorSet got = centre;
  for (int64_t k = 0; k < 4; ++k) {
    const uint8_t want = centre.element(g, k, 0, 0)[0];
    const uint8_t moved = low.element(g, k, 0, 0)[0] != want ? low.element(g, k, 0, 0)[0] : high.element(g, k, 0, 0)[0];
    ASSERT_NE(moved, want) << k;
    got.element(g, k, 0, 0)[0] = moved;
  }
  Judgement j = judge(c, "vllm-triton", got);
  EXPECT_TRUE(j.report.passed()) << report_text(j.report);
  EXPECT_FALSE(judge(c, "qcheck", got).report.passed());  // IEEE division, exact
  // One code beyond the bound: a mismatch at that element.
  const uint8_t beyond_high = uint8_t(high.element(g, 5, 1, 3)[0] + 1);
  got.element(g, 5, 1, 3)[0] = (beyond_high & 0x7F) == 0x7F ? uint8_t(beyond_high - 3) : beyond_high;
  j = judge(c, "vllm-triton", got);
  ASSERT_EQ(j.report.total, 1) << report_text(j.report);
  EXPECT_EQ(j.report.first[0].token, 5);
  EXPECT_EQ(j.report.first[0].head, 1);
  EXPECT_EQ(j.report.first[0].dim, 3);
}

// The verdict carries auto's findings into its text and JSON.
TEST(Judge, TheVerdictPrintsAutosFindings) {
  // Special values: torch-eager's cast does not saturate, so no other
  // profile gives its outputs.
  Case c = fp8_case(0x3F800000u);
  c.values = ValueRecipe::kSpecials;
  c.num_tokens = 64;
  c.profile = "torch-eager";
  Verdict v = run_verdict(c, *find_backend("cpu-simd"), VerdictOptions{kAutoProfile});
  ASSERT_TRUE(v.outcome.is_ok()) << v.outcome.reason;
  EXPECT_TRUE(v.passed());
  EXPECT_EQ(v.explaining, std::vector<std::string>{"torch-eager"});
  EXPECT_EQ(v.judged_under, "torch-eager");
  EXPECT_NE(verdict_text(v, c).find("auto: explained bit for bit by torch-eager\n"), std::string::npos)
      << verdict_text(v, c);
  EXPECT_NE(verdict_json(v, c).find("\"profiles\": [\n    \"torch-eager\"\n  ]"), std::string::npos)
      << verdict_json(v, c);
}

}  // namespace
}  // namespace qcheck

namespace qcheck {
namespace {

TEST(Against, TwoKernelsAgreeOrTheReportSaysWhere) {
  const Case c = test::small_case();
  AgainstResult r = run_against(c, *find_backend("cpu-simd"), *find_backend("cpu-model"), VerdictOptions{});
  ASSERT_TRUE(r.compared);
  EXPECT_TRUE(r.difference.passed()) << report_text(r.difference);
  EXPECT_EQ(r.exit_code(), 0);
  EXPECT_EQ(r.first.profile, "auto");
  EXPECT_FALSE(r.second.explaining.empty());
  // The planted NeoX/interleaved swap: the kernels differ in index_q_fp8,
  // and the second's own verdict fails.
  r = run_against(c, *find_backend("cpu-model"), *find_backend("cpu-model-bug-swapped-indexer-rope"), VerdictOptions{});
  ASSERT_TRUE(r.compared);
  EXPECT_FALSE(r.difference.passed());
  EXPECT_EQ(r.difference.primary_signature().tensor, "index_q_fp8");
  EXPECT_TRUE(r.first.passed());
  EXPECT_FALSE(r.second.passed());
  EXPECT_TRUE(r.second.explaining.empty());
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_NE(against_text(r, c).find("cpu-model-bug-swapped-indexer-rope: no profile explains it"), std::string::npos)
      << against_text(r, c);
}

}  // namespace
}  // namespace qcheck
