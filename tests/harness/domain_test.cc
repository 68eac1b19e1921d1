// The domain model (fuzz/domain): every field it names refuses a case
// outside with its own reason and repairs it; its JSON form reads back as
// written and names a bad key; a plugin's C declaration means the same
// cases; the minimizer proposes nothing outside.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <qcheck/qcheck_plugin.h>
#include "fuzz/backends/plugin_domain.h"
#include "fuzz/case/tensor_plan.h"
#include "fuzz/domain/domain.h"
#include "fuzz/domain/domain_json.h"
#include "fuzz/minimize/minimize.h"
#include "fuzz/verdict/known.h"

namespace qcheck {
namespace {

Domain parsed(const std::string& json) {
  Domain d;
  const std::string why = domain_from_json(json, &d);
  EXPECT_EQ(why, "") << json;
  return d;
}

// A valid case inside the default domain, with the indexer, on the bf16
// packed path: T = 17, H = 3, NI = 2, D = 32, R = 8, L = 16, P = 40.
Case base() {
  Case c = small_case();
  EXPECT_EQ(validate_case(c), "");
  return c;
}

struct FieldCase {
  const char* domain;         // JSON
  void (*outside)(Case&);     // moves base() outside the domain
  const char* reason;         // outside_domain's words
};

// One entry per field the domain names: the reason is the expected text,
// written by hand.
const FieldCase kFields[] = {
    {R"({"query_paths": ["bf16-packed"]})", [](Case& c) { c.query_path = QueryPath::kFp8Packed; },
     "query_path fp8-packed (the domain allows bf16-packed)"},
    {R"({"indexer": [true]})", [](Case& c) { c.has_indexer = false; },
     "has_indexer false (the domain allows cases with the indexer only)"},
    {R"({"indexer": [false]})", [](Case&) {}, "has_indexer true (the domain allows cases without the indexer only)"},
    {R"({"alias": ["none"]})", [](Case& c) { c.alias = AliasMode::kExactFront; },
     "alias exact-front (the domain allows ql_nope apart only)"},
    {R"({"indexer_ropes": ["neox"]})", [](Case& c) { c.indexer_rope = RopeStyle::kInterleaved; },
     "indexer_rope interleaved (the domain allows neox)"},
    {R"({"mqa_cache_dtypes": ["f32"]})", [](Case& c) { c.mqa_cache_dtype = FloatType::kBf16; },
     "mqa_cache_dtype bf16 (the domain allows f32)"},
    {R"({"indexer_cache_dtypes": ["bf16"]})", [](Case& c) { c.indexer_cache_dtype = FloatType::kF32; },
     "indexer_cache_dtype f32 (the domain allows bf16)"},
    {R"({"weights_dtypes": ["f32"]})", [](Case& c) { c.weights_dtype = FloatType::kBf16; },
     "weights_dtype bf16 (the domain allows f32)"},
    {R"({"weights_out_dtypes": ["bf16"]})", [](Case& c) { c.weights_out_dtype = FloatType::kF32; },
     "weights_out_dtype f32 (the domain allows bf16)"},
    {R"({"contiguous": ["q_pe"]})", [](Case& c) { c.q_pe_layout = Layout::kPaddedRows; },
     "q_pe_layout padded-rows (the domain allows contiguous only)"},
    {R"({"contiguous": ["ql_nope"]})", [](Case& c) { c.ql_nope_layout = Layout::kHeadMajor; },
     "ql_nope_layout head-major (the domain allows contiguous only)"},
    {R"({"contiguous": ["query_out"]})", [](Case& c) { c.query_out_layout = Layout::kPaddedRows; },
     "query_out_layout padded-rows (the domain allows contiguous only)"},
    {R"({"contiguous": ["index_weights"]})", [](Case& c) { c.weights_column_stride = 3; },
     "weights_column_stride 3 (the domain allows 1 only (index_weights contiguous))"},
    {R"({"unit_inner_stride": ["index_weights"]})", [](Case& c) { c.weights_column_stride = 2; },
     "weights_column_stride 2 (the domain allows 1 only (index_weights with unit inner stride))"},
    {R"({"dims": {"num_tokens": {"max": 16}}})", [](Case&) {}, "num_tokens 17 (the domain allows up to 16)"},
    {R"({"dims": {"num_tokens": {"min": 32, "max": 64}}})", [](Case&) {},
     "num_tokens 17 (the domain allows 32..64)"},
    {R"({"dims": {"mqa_heads": {"multiple_of": 2}}})", [](Case&) {},
     "mqa_heads 3 (the domain allows a multiple of 2)"},
    {R"({"dims": {"indexer_heads": {"values": [4, 8]}}})", [](Case&) {},
     "indexer_heads 2 (the domain allows 4 or 8)"},
    {R"({"dims": {"index_dim": {"values": [64, 128]}}})", [](Case&) {},
     "index_dim 32 (the domain allows 64 or 128)"},
    {R"({"dims": {"rope_dim": {"values": [16]}}})", [](Case&) {}, "rope_dim 8 (the domain allows 16)"},
    {R"({"dims": {"rope_dim": {"power_of_two": true}}})", [](Case& c) { c.rope_dim = 10; },
     "rope_dim 10 (the domain allows a power of two)"},
    {R"({"dims": {"nope_dim": {"min": 32}}})", [](Case&) {}, "nope_dim 16 (the domain allows at least 32)"},
    {R"({"dims": {"cache_rows": {"max": 32}}})", [](Case&) {}, "cache_rows 40 (the domain allows up to 32)"},
    {R"({"relations": ["mqa_heads <= 1 * indexer_heads"]})", [](Case&) {},
     "relation mqa_heads <= indexer_heads does not hold (mqa_heads 3, indexer_heads 2)"},
    {R"({"relations": ["H < 2 * NI"]})", [](Case& c) { c.mqa_heads = 4; },
     "relation mqa_heads < 2 * indexer_heads does not hold (mqa_heads 4, indexer_heads 2)"},
    {R"({"relations": ["mqa_heads == 2 * indexer_heads"]})", [](Case&) {},
     "relation mqa_heads == 2 * indexer_heads does not hold (mqa_heads 3, indexer_heads 2)"},
    {R"({"relations": ["nope_dim >= 4 * rope_dim"]})", [](Case&) {},
     "relation nope_dim >= 4 * rope_dim does not hold (nope_dim 16, rope_dim 8)"},
    {R"({"relations": ["num_tokens > cache_rows"]})", [](Case&) {},
     "relation num_tokens > cache_rows does not hold (num_tokens 17, cache_rows 40)"},
    {R"({"relations": ["mqa_heads % indexer_heads == 0"]})", [](Case&) {},
     "relation mqa_heads % indexer_heads == 0 does not hold (mqa_heads 3, indexer_heads 2)"},
};

TEST(Domain, EveryFieldRefusesWithItsReasonAndRepairs) {
  for (const FieldCase& f : kFields) {
    const Domain d = parsed(f.domain);
    Case c = base();
    f.outside(c);
    ASSERT_EQ(validate_case(c), "") << f.domain;
    EXPECT_EQ(outside_domain(d, c), f.reason) << f.domain;
    EXPECT_EQ(outside_domain(Domain{}, c), "") << "the default domain allows every case: " << f.domain;
    fit_to_domain(d, c);
    EXPECT_EQ(outside_domain(d, c), "") << f.domain << " after the repair: " << describe(c);
    EXPECT_EQ(validate_case(c), "") << f.domain << " after the repair: " << describe(c);
  }
}

// The repair moves a field to the nearest allowed value and touches
// nothing it need not.
TEST(Domain, RepairTakesTheNearestValue) {
  Case c = base();
  c.num_tokens = 100;
  fit_to_domain(parsed(R"({"dims": {"num_tokens": {"max": 64}}})"), c);
  EXPECT_EQ(c.num_tokens, 64);
  c = base();
  c.rope_dim = 12;
  fit_to_domain(parsed(R"({"dims": {"rope_dim": {"power_of_two": true}}})"), c);
  EXPECT_EQ(c.rope_dim, 8);  // 12 is 4 from 8 and 4 from 16: the smaller on a tie
  c = base();
  fit_to_domain(parsed(R"({"dims": {"indexer_heads": {"values": [4, 8]}}})"), c);
  EXPECT_EQ(c.indexer_heads, 4);
  EXPECT_EQ(c.head_scale_bits, default_head_scale_bits(4)) << "NI changed: the default head scale follows it";
  EXPECT_EQ(c.mqa_heads, 3);
  // A relation moves its left side: H <= 1 * NI with NI = 2.
  c = base();
  fit_to_domain(parsed(R"({"relations": ["mqa_heads <= indexer_heads"]})"), c);
  EXPECT_EQ(c.mqa_heads, 2);
  // ... to a value its own rule allows: H a multiple of 4, H >= 2 * NI.
  c = base();
  fit_to_domain(parsed(R"({"dims": {"mqa_heads": {"multiple_of": 4}}, "relations": ["H >= 2 * NI"]})"), c);
  EXPECT_EQ(c.mqa_heads, 4);
  // A rope the domain fixes above D widens D to the nearest allowed D >= R.
  c = base();
  fit_to_domain(parsed(R"({"dims": {"rope_dim": {"values": [64]}, "index_dim": {"multiple_of": 48}}})"), c);
  EXPECT_EQ(c.rope_dim, 64);
  EXPECT_EQ(c.index_dim, 96);
  EXPECT_EQ(validate_case(c), "");
  // A relation no value can meet is refused and left as it was, never a
  // division by zero: nothing is a multiple of T = 0.
  c = base();
  c.num_tokens = 0;
  ASSERT_EQ(validate_case(c), "");
  const Domain by_tokens = parsed(R"({"relations": ["mqa_heads % num_tokens == 0"]})");
  EXPECT_EQ(outside_domain(by_tokens, c),
            "relation mqa_heads % num_tokens == 0 does not hold (mqa_heads 3, num_tokens 0)");
  fit_to_domain(by_tokens, c);
  EXPECT_EQ(c.mqa_heads, 3);
  EXPECT_EQ(c.num_tokens, 0);
  // Without the indexer its fields are not asked.
  c = base();
  c.has_indexer = false;
  c.weights_column_stride = 2;
  EXPECT_EQ(outside_domain(parsed(R"({"unit_inner_stride": ["index_weights"], "dims": {"index_dim": {"values": [128]}}})"), c), "");
}

TEST(Domain, DimRuleSearch) {
  DimRule r;
  r.power_of_two = true;
  r.min = 4;
  r.max = 64;
  EXPECT_EQ(r.at_most(100), 64);
  EXPECT_EQ(r.at_most(3), 0);
  EXPECT_EQ(r.at_least(5), 8);
  EXPECT_EQ(r.at_least(65), 0);
  EXPECT_EQ(r.nearest(1), 4);
  EXPECT_EQ(r.nearest(48), 32);  // 16 from both: the smaller
  EXPECT_EQ(r.text(), "4..64, a power of two");
  DimRule m;
  m.multiple_of = 16;
  EXPECT_EQ(m.nearest(20), 16);
  EXPECT_EQ(m.nearest(25), 32);
  EXPECT_EQ(m.at_most(15), 0);
  DimRule v;
  v.values = {64, 128, 192};
  v.max = 150;
  EXPECT_EQ(v.nearest(190), 128) << "192 is listed but above max";
  EXPECT_EQ(v.text(), "64, 128 or 192, up to 150");
}

TEST(Domain, JsonReadsBackAsWritten) {
  const std::string canonical =
      R"({"query_paths":["fp8-packed","bf16-packed"],"indexer":[true],"alias":["none"],"indexer_ropes":["neox"],)"
      R"("mqa_cache_dtypes":["f32"],"indexer_cache_dtypes":["bf16"],"weights_dtypes":["f32"],)"
      R"("weights_out_dtypes":["bf16"],"contiguous":["q_pe","index_q"],"unit_inner_stride":["index_weights"],)"
      R"("dims":{"num_tokens":{"min":1,"max":65535},"index_dim":{"power_of_two":true,"multiple_of":16},)"
      R"("rope_dim":{"values":[64]}},"relations":["mqa_heads <= 4 * indexer_heads","nope_dim % rope_dim == 0"]})";
  const Domain d = parsed(canonical);
  EXPECT_EQ(domain_to_json(d), canonical);
  EXPECT_EQ(d.dim(Dim::kRopeDim).values, std::vector<int64_t>{64});
  EXPECT_EQ(d.query_paths, 0b011u);
  EXPECT_EQ(domain_to_json(Domain{}), "{}");
  EXPECT_TRUE(parsed("{}").any());
}

TEST(Domain, BadJsonNamesTheKey) {
  const std::pair<const char*, const char*> bad[] = {
      {R"({"rope": ["neox"]})", "domain: unknown key 'rope' (known: query_paths,"},
      {R"({"query_paths": ["bf16"]})", "domain: query_paths[0]: \"bf16\" is not a query path (one of fp8-packed"},
      {R"({"query_paths": []})", "domain: query_paths: expected a non-empty list"},
      {R"({"indexer": ["yes"]})", "domain: indexer[0]: \"yes\" is not true or false"},
      {R"({"contiguous": ["positions"]})", "domain: contiguous[0]: \"positions\" is not a tensor (one of q_pe,"},
      {R"({"dims": {"heads": {"max": 4}}})", "domain: dims.heads: not a dimension"},
      {R"({"dims": {"rope_dim": {"max": 0}}})", "domain: dims.rope_dim.max: 0 is not a whole number in 1..2^40"},
      {R"({"dims": {"rope_dim": {"min": 8, "max": 4}}})", "domain: dims.rope_dim: min 8 is above max 4"},
      {R"({"dims": {"rope_dim": {"pow2": true}}})", "domain: dims.rope_dim.pow2: unknown key"},
      {R"({"relations": ["H <= NI + 1"]})", "domain: relations[0]: relation 'H <= NI + 1': expected"},
      {R"({"relations": ["H <= 0 * NI"]})", "domain: relations[0]: relation 'H <= 0 * NI'"},
      {"[1]", "domain: expected a JSON object"},
      {"{", "domain: not JSON"},
  };
  for (const auto& [json, start] : bad) {
    Domain d;
    const std::string why = domain_from_json(json, &d);
    EXPECT_EQ(why.rfind(start, 0), 0u) << json << " -> " << why;
  }
}

// The C declaration of qcheck_plugin.h and the JSON form mean the same cases.
TEST(Domain, PluginDeclarationReadsIntoTheModel) {
  qcheck_plugin_domain declared{};
  declared.struct_size = sizeof declared;
  declared.query_paths = 1u << QCHECK_PLUGIN_BF16_PACKED;
  declared.indexer = 2;
  declared.cache_dtypes = 1u << QCHECK_PLUGIN_F32;
  declared.aliasing = 1;
  declared.contiguous_only = 1;
  declared.rope_dims[0] = 64;
  declared.index_dims[0] = 64;
  declared.index_dims[1] = 128;
  declared.max_mqa_heads = 128;
  declared.max_tokens = 65535;
  const Domain expected = parsed(
      R"({"query_paths": ["bf16-packed"], "indexer": [true], "alias": ["none"], "mqa_cache_dtypes": ["f32"],)"
      R"( "indexer_cache_dtypes": ["f32"], "contiguous": ["q_pe", "ql_nope", "index_q", "index_weights", "mqa_cache",)"
      R"( "indexer_cache", "query_out", "index_q_fp8", "index_weights_out"],)"
      R"( "dims": {"rope_dim": {"values": [64]}, "index_dim": {"values": [64, 128]}, "mqa_heads": {"max": 128},)"
      R"( "num_tokens": {"max": 65535}}})");
  EXPECT_EQ(domain_to_json(domain_of_plugin(declared)), domain_to_json(expected));
  qcheck_plugin_domain any{};
  any.struct_size = sizeof any;
  EXPECT_TRUE(domain_of_plugin(any).any());
}

// The minimizer never proposes a case outside the domain: a failure that
// shows on any case with T >= 2 shrinks R to its smallest without a domain,
// and keeps R = 32 and H even within one (H 4 -> 1 and 3 are outside; the
// repair makes 1 into 2).
TEST(Domain, MinimizerProposesNothingOutside) {
  Case start = base();
  start.rope_dim = 32;
  start.index_dim = 64;
  start.mqa_heads = 4;
  ASSERT_EQ(validate_case(start), "");
  const Domain d = parsed(R"({"dims": {"rope_dim": {"values": [32]}, "mqa_heads": {"multiple_of": 2}}})");
  int outside = 0;
  const Evaluate evaluate = [&](const Case& c) {
    outside += outside_domain(d, c).empty() ? 0 : 1;
    Observation o;
    if (c.num_tokens >= 2) {
      o.exit_code = 1;
      o.failure = "query_out/rope part/wrong-value";
      o.signatures = {o.failure};
    }
    return o;
  };
  const Observation target = evaluate(start);
  MinimizeOptions free_options;
  free_options.budget_seconds = 30;
  const MinimizeResult free = minimize(start, target, evaluate, free_options);
  EXPECT_LT(free.minimized.rope_dim, 32) << "without a domain R shrinks (the check below can fail)";
  EXPECT_GT(outside, 0);

  outside = 0;
  MinimizeOptions options = free_options;
  options.outside = [&d](const Case& c) { return outside_domain(d, c); };
  options.fit = [&d](Case& c) { fit_to_domain(d, c); };
  const MinimizeResult kept = minimize(start, target, evaluate, options);
  EXPECT_EQ(outside, 0) << "candidates outside the domain were evaluated";
  EXPECT_GT(kept.outside_domain, 0);
  EXPECT_EQ(kept.minimized.rope_dim, 32);
  EXPECT_EQ(kept.minimized.mqa_heads, 2);
  EXPECT_EQ(kept.minimized.num_tokens, 2);
  EXPECT_EQ(outside_domain(d, kept.minimized), "");
}

}  // namespace
}  // namespace qcheck

namespace qcheck {
namespace {

TEST(KnownBugs, PatternsMatchAsGlobs) {
  EXPECT_TRUE(matches_pattern("index_weights_out/*", "index_weights_out/weights/wrong-value"));
  EXPECT_TRUE(matches_pattern("*/unwritten", "query_out/nope front/unwritten"));
  EXPECT_TRUE(matches_pattern("query_out/*/sign-of-zero", "query_out/rope tail/sign-of-zero"));
  EXPECT_FALSE(matches_pattern("query_out/*/sign-of-zero", "query_out/rope tail/wrong-value"));
  EXPECT_FALSE(matches_pattern("index_q_fp8/*", "index_weights_out/weights/wrong-value"));
  EXPECT_TRUE(matches_pattern("kernel raised ZeroDivisionError", "kernel raised ZeroDivisionError"));
  EXPECT_FALSE(matches_pattern("kernel raised Zero", "kernel raised ZeroDivisionError"));
  EXPECT_TRUE(matches_pattern("*", ""));
}

// Groups are where the outputs differ: one bug zeroing weights is one group
// whatever class its first element shows; two bugs in two outputs are two
// places; a known bug's signatures leave the group of what remains.
TEST(KnownBugs, FindingsGroupByWhereTheyDifferAndKnownOnesAreSetAside) {
  const Case c = small_case();
  const std::vector<KnownBug> none;
  EXPECT_EQ(classify_finding(none, c, {"index_weights_out/weights/sign-of-zero"}).group, "index_weights_out/weights");
  EXPECT_EQ(classify_finding(none, c, {"index_weights_out/weights/wrong-value", "index_weights_out/weights/expected-nan-got-number"}).group,
            "index_weights_out/weights");
  const std::vector<std::string> two = {"query_out/rope tail/wrong-value", "index_weights_out/weights/wrong-value",
                                        "index_weights_out/weights/sign-of-zero"};
  EXPECT_EQ(classify_finding(none, c, two).group, "index_weights_out/weights + query_out/rope tail");
  EXPECT_EQ(classify_finding(none, c, two).known, -1);

  std::vector<KnownBug> known;
  ASSERT_EQ(known_bugs_from_json(R"({"known": [{"signature": "index_weights_out/*", "note": "stride assumed 1"},
      {"signature": "*/unwritten", "domain": {"dims": {"num_tokens": {"min": 100}}}}]})", &known), "");
  ASSERT_EQ(known.size(), 2u);
  EXPECT_EQ(known[0].note, "stride assumed 1");
  // The second bug shows beside the known one: a new finding, grouped by what is new.
  const FindingClass beside = classify_finding(known, c, two);
  EXPECT_EQ(beside.known, -1);
  EXPECT_EQ(beside.group, "query_out/rope tail");
  // The known one alone: counted under its entry.
  const FindingClass alone = classify_finding(known, c, {"index_weights_out/weights/wrong-value"});
  EXPECT_EQ(alone.known, 0);
  EXPECT_EQ(alone.group, "index_weights_out/weights");
  // A domain predicate: unwritten is known only from T = 100 on (small_case has T = 17).
  EXPECT_EQ(classify_finding(known, c, {"query_out/nope front/unwritten"}).known, -1);
  Case long_case = c;
  long_case.num_tokens = 100;
  EXPECT_EQ(classify_finding(known, long_case, {"query_out/nope front/unwritten"}).known, 1);
  // A raised exception is its own group.
  EXPECT_EQ(classify_finding(none, c, {"kernel raised ZeroDivisionError"}).group, "kernel raised ZeroDivisionError");
}

TEST(KnownBugs, BadJsonNamesTheEntry) {
  std::vector<KnownBug> known;
  EXPECT_EQ(known_bugs_from_json(R"({"known": [{"note": "x"}]})", &known),
            "known bugs: known[0].signature: missing or empty (a pattern such as \"index_weights_out/*\")");
  EXPECT_EQ(known_bugs_from_json(R"({"known": [{"signature": "a", "why": "x"}]})", &known),
            "known bugs: known[0].why: unknown key (signature, domain, note, op)");
  EXPECT_EQ(known_bugs_from_json(R"({"known": [{"signature": "a", "domain": {"rope": 1}}]})", &known).rfind(
                "known bugs: known[0].domain: domain: unknown key 'rope'", 0),
            0u);
  EXPECT_EQ(known_bugs_from_json("[]", &known).rfind("known bugs: expected {\"known\"", 0), 0u);
}

}  // namespace
}  // namespace qcheck
