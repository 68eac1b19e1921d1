// The fused_q target's structure-aware mutator (fuzz/mutator/case_mutator.h)
// and the pieces around it: every case it makes is valid and within its size
// budget, its mutations reach every value of every structural field, repair
// turns arbitrary field values into valid cases, and the numerics input
// layout round-trips. Plain unit tests (label cpu): they run in every build.
#include <gtest/gtest.h>

#include <algorithm>

#include <map>
#include <set>
#include <string>

#include "core/random/prng.h"
#include "fuzz/case/case_names.h"
#include "fuzz/case/tensor_plan.h"
#include "fuzz/mutator/bin_table.h"
#include "fuzz/mutator/case_mutator.h"
#include "fuzz/mutator/compile_key.h"
#include "fuzz/mutator/semantic_bins.h"
#include "fuzz/targets/numerics_input.h"

namespace qcheck::fuzzing {
namespace {

void expect_within(const Case& c, const SizeCap& cap) {
  EXPECT_EQ(validate_case(c), "") << describe(c);
  EXPECT_LE(plan_tensors(c).total_bytes(), cap.bytes) << describe(c);
  EXPECT_LE(c.num_tokens, cap.tokens);
  EXPECT_LE(c.mqa_heads, cap.heads);
  EXPECT_LE(c.indexer_heads, cap.heads);
  EXPECT_LE(c.index_dim, cap.index_dim);
  EXPECT_LE(c.nope_dim, cap.nope_dim);
  EXPECT_LE(c.cache_rows, cap.cache_rows);
}

TEST(CaseMutator, SeedCasesAreValidAndUsualSized) {
  for (uint64_t seed = 0; seed < 2000; ++seed) {
    Xoshiro256 rng(seed);
    expect_within(seed_case(rng), kDefaultBudget.usual);
    if (HasFailure()) FAIL() << "seed " << seed;
  }
}

// Chains of mutations (each result mutated again), as libFuzzer does.
template <typename Visit>
void mutation_chains(const SizeBudget& budget, int chains, int length, Visit visit) {
  for (int chain = 0; chain < chains; ++chain) {
    Xoshiro256 rng(mix_keys({0xC4A14ull, static_cast<uint64_t>(chain)}));
    Case c = seed_case(rng, budget);
    for (int step = 0; step < length; ++step) {
      mutate_case(c, rng, budget);
      visit(c);
    }
  }
}

TEST(CaseMutator, MutationsStayValidAndMostlyUsualSized) {
  int large = 0, total = 0;
  mutation_chains(kDefaultBudget, 40, 250, [&](const Case& c) {
    expect_within(c, kDefaultBudget.large);
    ++total;
    if (plan_tensors(c).total_bytes() > kDefaultBudget.usual.bytes) ++large;
  });
  ASSERT_FALSE(HasFailure());
  // One mutation in 32 may go large and a large case stays large half the
  // time: well under a quarter of all cases.
  EXPECT_LT(large * 4, total) << large << " large cases of " << total;
  EXPECT_GT(large, 0) << "the mutator never makes a large case";
}

// The limit cases (case_mutator.h): each template reaches its limit in every
// draw, stays valid, and fits the 8 GiB a case may hold.
TEST(CaseMutator, LimitCasesReachTheirLimits) {
  EXPECT_FALSE(limit_case_due(0));
  EXPECT_FALSE(limit_case_due(63));
  EXPECT_TRUE(limit_case_due(64));
  EXPECT_FALSE(limit_case_due(65));
  EXPECT_TRUE(limit_case_due(2048));
  EXPECT_FALSE(limit_case_due(6144));
  EXPECT_TRUE(limit_case_due(8192));
  for (int64_t index = 0; index < 60; ++index) {
    Xoshiro256 rng(mix_keys({0x11D17ull, static_cast<uint64_t>(index)}));
    const Case c = limit_case(rng, index);
    ASSERT_EQ(validate_case(c), "") << describe(c);
    const TensorPlan plan = plan_tensors(c);
    ASSERT_LE(plan.total_bytes(), CaseLimits::kMaxMemoryBytes) << describe(c);
    switch (index % 3) {
      case 0:
        EXPECT_GE(c.num_tokens, 65535) << describe(c);
        break;
      case 1:
        EXPECT_GE(c.num_tokens, 512) << describe(c);
        EXPECT_EQ(c.index_dim, 128);
        EXPECT_EQ(c.rope_dim, 64);
        break;
      default: {
        // One view spans past 2^32 elements: its last element's offset.
        int64_t widest = 0;
        for (const TensorGeometry& g : plan.tensors) {
          widest = std::max(widest, g.element_offset(g.rows - 1, g.cols - 1, g.width - 1) - g.offset);
        }
        EXPECT_GE(widest, int64_t(1) << 32) << describe(c);
        EXPECT_LE(c.num_tokens, 72);
      }
    }
  }
}

// The race cases (race_cases.cc): never due with a limit case, and each one
// valid, within 16 MiB, with many token blocks, contiguous views and the
// dims a kernel stages through shared memory.
TEST(CaseMutator, RaceCasesAimAtManyBlocksOnTheStagedDims) {
  EXPECT_TRUE(race_case_due(4));
  EXPECT_TRUE(race_case_due(12));
  EXPECT_FALSE(race_case_due(8));
  EXPECT_TRUE(race_case_due(508));
  EXPECT_FALSE(race_case_due(516));
  EXPECT_TRUE(race_case_due(520));
  EXPECT_FALSE(race_case_due(64));
  for (int64_t e = 0; e < 100000; ++e) {
    if (race_case_due(e)) {
      ASSERT_FALSE(limit_case_due(e)) << e;
    }
  }
  Xoshiro256 rng(mix_keys({0x7261636Eull}));
  Case c;
  EXPECT_FALSE(next_race_case(kDefaultBudget, false, 4, rng, &c)) << "a backend that cannot race";
  EXPECT_FALSE(next_race_case(kUsualBudget, true, 4, rng, &c)) << "the usual budget";
  EXPECT_FALSE(next_race_case(kLimitBudget, true, 9, rng, &c)) << "not due";
  std::set<int64_t> rope_dims, index_dims, paths;
  int f32_caches = 0;
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(next_race_case(kLimitBudget, true, 4, rng, &c));
    ASSERT_EQ(validate_case(c), "") << describe(c);
    EXPECT_LE(plan_tensors(c).total_bytes(), uint64_t(16) << 20) << describe(c);
    EXPECT_GE(c.num_tokens, 512) << describe(c);
    EXPECT_LT(c.num_tokens, 1024) << describe(c);
    EXPECT_EQ(c.q_pe_layout, Layout::kContiguous);
    EXPECT_EQ(c.index_q_layout, Layout::kContiguous);
    EXPECT_EQ(c.query_out_layout, Layout::kContiguous);
    rope_dims.insert(c.rope_dim);
    index_dims.insert(c.index_dim);
    paths.insert(static_cast<int>(c.query_path));
    f32_caches += c.indexer_cache_dtype == FloatType::kF32;
  }
  EXPECT_EQ(rope_dims, (std::set<int64_t>{32, 64}));
  EXPECT_EQ(index_dims, (std::set<int64_t>{64, 128}));
  EXPECT_EQ(paths.size(), 3u);
  EXPECT_GT(f32_caches, 50);
  EXPECT_LT(f32_caches, 150);
}

TEST(CaseMutator, TinyBudgetIsRespected) {
  mutation_chains(kTinyBudget, 20, 200, [&](const Case& c) { expect_within(c, kTinyBudget.large); });
}

TEST(CaseMutator, MutationsReachEveryStructuralValue) {
  std::map<std::string, std::set<int64_t>> seen;
  mutation_chains(kDefaultBudget, 20, 500, [&](const Case& c) {
    seen["query_path"].insert(static_cast<int>(c.query_path));
    seen["has_indexer"].insert(c.has_indexer);
    seen["indexer_rope"].insert(static_cast<int>(c.indexer_rope));
    seen["mqa_cache_dtype"].insert(static_cast<int>(c.mqa_cache_dtype));
    seen["indexer_cache_dtype"].insert(static_cast<int>(c.indexer_cache_dtype));
    seen["weights_dtype"].insert(static_cast<int>(c.weights_dtype));
    seen["weights_out_dtype"].insert(static_cast<int>(c.weights_out_dtype));
    seen["q_pe_layout"].insert(static_cast<int>(c.q_pe_layout));
    seen["ql_nope_layout"].insert(static_cast<int>(c.ql_nope_layout));
    seen["query_out_layout"].insert(static_cast<int>(c.query_out_layout));
    seen["alias"].insert(static_cast<int>(c.alias));
    seen["positions"].insert(static_cast<int>(c.positions));
    seen["values"].insert(static_cast<int>(c.values));
    seen["profile"].insert(c.profile == "qcheck" ? 0 : 1);
    if (c.num_tokens > 0) seen["T % 16"].insert(c.num_tokens % 16);
    seen["H parity"].insert(c.mqa_heads % 2);
    seen["R == 2"].insert(c.rope_dim == 2);
    seen["R == D"].insert(c.rope_dim == c.index_dim);
    seen["column stride > 1"].insert(c.weights_column_stride > 1);
    seen["T == 0"].insert(c.num_tokens == 0);
    seen["real dims"].insert(c.index_dim == 128 && c.rope_dim == 64 && c.nope_dim == 512);
    seen["P > 8192"].insert(c.cache_rows > 8192);
    seen["fp8 q_scale not a power of two"].insert(c.query_path == QueryPath::kFp8Packed &&
                                                  (c.q_scale_bits & 0x7FFFFFu) != 0);
  });
  const std::map<std::string, size_t> expected = {
      {"query_path", 3}, {"has_indexer", 2}, {"indexer_rope", 2}, {"mqa_cache_dtype", 2},
      {"indexer_cache_dtype", 2}, {"weights_dtype", 2}, {"weights_out_dtype", 2}, {"q_pe_layout", 3},
      {"ql_nope_layout", 3}, {"query_out_layout", 2}, {"alias", 2}, {"positions", 4}, {"values", 12},
      {"profile", 2}, {"T % 16", 16}, {"H parity", 2}, {"R == 2", 2}, {"R == D", 2},
      {"column stride > 1", 2}, {"T == 0", 2}, {"real dims", 2}, {"P > 8192", 2},
      {"fp8 q_scale not a power of two", 2}};
  for (const auto& [field, count] : expected) EXPECT_EQ(seen[field].size(), count) << field;
}

TEST(CaseMutator, RepairMakesArbitraryFieldsValid) {
  Xoshiro256 rng(0xBAD5EEDull);
  for (int i = 0; i < 3000; ++i) {
    Case c;
    c.num_tokens = static_cast<int64_t>(rng.next());
    c.mqa_heads = static_cast<int64_t>(rng.next());
    c.indexer_heads = static_cast<int64_t>(rng.next() % 5000) - 10;
    c.index_dim = static_cast<int64_t>(rng.next());
    c.rope_dim = static_cast<int64_t>(rng.next() % 2000) - 5;
    c.nope_dim = static_cast<int64_t>(rng.next());
    c.query_path = static_cast<QueryPath>(rng.below(256));
    c.indexer_rope = static_cast<RopeStyle>(rng.below(256));
    c.weights_out_dtype = static_cast<FloatType>(rng.below(256));
    c.q_pe_layout = static_cast<Layout>(rng.below(256));
    c.ql_nope_layout = static_cast<Layout>(rng.below(5));
    c.index_q_layout = static_cast<Layout>(rng.below(5));
    c.alias = static_cast<AliasMode>(rng.below(3));
    c.values = static_cast<ValueRecipe>(rng.below(256));
    c.cache_rows = static_cast<int64_t>(rng.next());
    c.row_padding = static_cast<int64_t>(rng.next());
    c.weights_column_stride = -static_cast<int64_t>(rng.below(100));
    c.q_scale_bits = static_cast<uint32_t>(rng.next());
    c.profile = rng.one_in(2) ? "vllm-triton" : "no-such-profile";
    c.query_path = rng.one_in(3) ? QueryPath::kFp8Packed : c.query_path;
    c.memory_limit_bytes = rng.next();
    repair_case(c, kDefaultBudget.usual);
    expect_within(c, kDefaultBudget.usual);
    if (HasFailure()) FAIL() << "iteration " << i;
  }
}

// A memory cap too small for any case (the capi fuzzer decoded 8192 bytes)
// is raised by the repair, so mutation and cross-over still give valid cases.
TEST(CaseMutator, RepairRaisesAMemoryCapNoCaseFits) {
  for (uint64_t seed = 0; seed < 200; ++seed) {
    Xoshiro256 rng(seed);
    Case c = seed_case(rng);
    c.memory_limit_bytes = 8192;
    Case m = c;
    mutate_case(m, rng);
    EXPECT_EQ(validate_case(m), "") << describe(m);
    EXPECT_EQ(validate_case(cross_over(c, m, rng)), "");
    if (HasFailure()) FAIL() << "seed " << seed;
  }
}

// Scales follow the shape (softmax_scale = RN(D^-0.5), head_scale =
// RN(NI^-0.5)): every seed case, every mutation and cross-over of such cases
// unless a mutation picked the scale bits themselves, and a large case that
// a tiny budget's repair shrinks (D and NI halved after the mutation).
TEST(CaseMutator, ScalesFollowTheShape) {
  for (uint64_t seed = 0; seed < 2000; ++seed) {
    Xoshiro256 rng(seed);
    const Case c = seed_case(rng, seed % 2 ? kTinyBudget : kDefaultBudget);
    ASSERT_TRUE(scales_follow_shape(c)) << "seed " << seed << ": " << describe(c);
  }
  int mutations = 0, explicit_scales = 0, children = 0;
  for (uint64_t chain = 0; chain < 40; ++chain) {
    Xoshiro256 rng(mix_keys({0x5CA1Eull, chain}));
    Case c = seed_case(rng, kTinyBudget);
    for (int step = 0; step < 100 && scales_follow_shape(c); ++step) {
      const Case before = c;
      mutate_case(c, rng, kTinyBudget);
      ++mutations;
      if (scales_follow_shape(c)) continue;
      // Only a mutation of the scale bits themselves may leave the shape's scales.
      ASSERT_TRUE(c.softmax_scale_bits != default_softmax_scale_bits(c.index_dim) ||
                  c.head_scale_bits != default_head_scale_bits(c.indexer_heads));
      ++explicit_scales;
      EXPECT_TRUE(c.softmax_scale_bits != before.softmax_scale_bits || c.head_scale_bits != before.head_scale_bits)
          << "the scales stopped following the shape without a mutation of them:\n"
          << describe(before) << "\n->\n" << describe(c);
    }
    Xoshiro256 other(chain);
    const Case a = seed_case(other, kTinyBudget), b = seed_case(other, kDefaultBudget);
    EXPECT_TRUE(scales_follow_shape(cross_over(a, b, rng, kTinyBudget)));
    ++children;
  }
  EXPECT_GT(mutations, 500);
  EXPECT_LT(explicit_scales * 10, mutations) << "explicit scales are a rare mutation";
  // A real model's shape (D = 128, NI = 64) mutated under the tiny budget:
  // the repair halves NI and D, and the scales follow.
  Case large = small_case();
  large.index_dim = 128;
  large.rope_dim = 64;
  large.indexer_heads = 64;
  large.num_tokens = 64;
  set_default_scales(large);
  int shrunk_and_following = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    Xoshiro256 rng(seed);
    Case c = large;
    mutate_case(c, rng, kTinyBudget);
    ASSERT_LE(c.index_dim, kTinyBudget.large.index_dim);
    const bool picked = c.softmax_scale_bits != large.softmax_scale_bits || c.head_scale_bits != large.head_scale_bits;
    EXPECT_TRUE(scales_follow_shape(c) || picked) << "the scales of D = 128, NI = 64 kept after the repair:\n"
                                                  << describe(c);
    shrunk_and_following += scales_follow_shape(c) && c.index_dim < 128;
  }
  EXPECT_GT(shrunk_and_following, 150);
}

TEST(CaseMutator, CrossOverMixesBothParentsAndStaysValid) {
  int from_a = 0, from_b = 0;
  for (uint64_t i = 0; i < 300; ++i) {
    Xoshiro256 rng(i);
    const Case a = seed_case(rng), b = seed_case(rng);
    const Case child = cross_over(a, b, rng);
    expect_within(child, kDefaultBudget.large);
    from_a += child.seed == a.seed && a.seed != b.seed;
    from_b += child.seed == b.seed && a.seed != b.seed;
  }
  EXPECT_GT(from_a, 50);
  EXPECT_GT(from_b, 50);
}

TEST(CaseMutator, SameSeedSameMutation) {
  Xoshiro256 r1(42), r2(42);
  Case a = seed_case(r1), b = seed_case(r2);
  for (int i = 0; i < 100; ++i) {
    mutate_case(a, r1);
    mutate_case(b, r2);
  }
  EXPECT_TRUE(a == b) << describe(a) << "\n" << describe(b);
}

// The compile key as Triton's default specialization sees the case: the
// expected texts are written from the rule (compile_key.h), not read back.
TEST(CompileKey, NamesWhatTritonSpecializesOn) {
  Case c = small_case();  // T = 17, H = 3, NI = 2, D = 32, R = 8, L = 16, P = 40, all contiguous
  const std::string key = compile_key(c);
  EXPECT_EQ(key.rfind("bf16-packed indexer neox alias=none | positions int64 [n] (1) a16 | ", 0), 0u) << key;
  // q_pe [T, 3, 8] contiguous: strides 24, 8, 1.
  EXPECT_NE(key.find(" | q_pe bf16 [n,3,8] (n,n,1) a16"), std::string::npos) << key;
  // index_q [T, 2, 32]: strides 64, 32, 1 (multiples of 16).
  EXPECT_NE(key.find(" | index_q bf16 [n,2,32] (16,16,1) a16"), std::string::npos) << key;
  // The caches [P, R] with P = 40 rows of 8.
  EXPECT_NE(key.find(" | mqa_cache f32 [n,8] (n,1) a16"), std::string::npos) << key;

  auto same = [&](auto edit) {
    Case d = small_case();
    edit(d);
    EXPECT_EQ(validate_case(d), "");
    return compile_key(d) == key;
  };
  EXPECT_TRUE(same([](Case& d) { d.num_tokens = 18; }));  // T: another "n"
  EXPECT_TRUE(same([](Case& d) { d.cache_rows = 41; }));
  EXPECT_TRUE(same([](Case& d) { d.values = ValueRecipe::kSpecials; }));
  EXPECT_TRUE(same([](Case& d) { d.q_scale_bits = 0x3EBD70A4u; }));
  EXPECT_TRUE(same([](Case& d) { d.seed = 99; }));
  EXPECT_FALSE(same([](Case& d) { d.num_tokens = 16; }));  // T % 16 == 0
  EXPECT_FALSE(same([](Case& d) { d.num_tokens = 1; }));
  EXPECT_FALSE(same([](Case& d) { d.mqa_heads = 4; }));  // a constexpr in production kernels
  EXPECT_FALSE(same([](Case& d) { d.weights_out_dtype = FloatType::kBf16; }));  // a pointer's element type
  EXPECT_FALSE(same([](Case& d) { d.index_q_layout = Layout::kPaddedRows; d.row_padding = 1; }));  // strides 67, 33
  EXPECT_FALSE(same([](Case& d) { d.indexer_rope = RopeStyle::kInterleaved; }));
}

TEST(CompileKey, WarmMutationsKeepTheKeyAndStillChangeTheCase) {
  int changed = 0, total = 0;
  std::set<int64_t> tokens;
  for (uint64_t chain = 0; chain < 60; ++chain) {
    Xoshiro256 rng(mix_keys({0x7761726Dull, chain}));
    Case c = seed_case(rng, kUsualBudget);
    const std::string key = compile_key(c);
    for (int step = 0; step < 50; ++step) {
      Case before = c;
      mutate_case_warm(c, rng, kUsualBudget);
      expect_within(c, kUsualBudget.usual);
      ASSERT_EQ(compile_key(c), key) << describe(before) << "\n" << describe(c);
      Case seed_only = before;
      seed_only.seed = c.seed;
      changed += !(seed_only == c);
      ++total;
      tokens.insert(c.num_tokens);
    }
  }
  EXPECT_GT(changed, total / 2);  // mostly more than the seed
  EXPECT_GT(tokens.size(), 20u);  // T moves within its class
}

TEST(NumericsInput, EncodeDecodeRoundTrip) {
  NumericsInput in;
  in.operation = RowOperation::kRope;
  in.nan_rule = Bf16Nan::kKeepSignQuiet;
  in.overflow = E4m3Overflow::kNan;
  in.style = RopeStyle::kInterleaved;
  in.minus_terms = Contraction::kFuseSin;
  in.plus_terms = Contraction::kNone;
  in.input_misalignment = 13;
  in.output_misalignment = 6;
  in.divisor_bits = 0x3EBD70A4u;
  in.f32 = {0x7FC00000u, 0x3F800000u, 0x80000000u, 0x00000001u, 1, 2, 3, 4};
  const std::vector<uint8_t> bytes = encode_numerics_input(in);
  ASSERT_EQ(bytes.size(), kNumericsHeaderBytes + 4 * in.f32.size());
  const NumericsInput back = decode_numerics_input(bytes.data(), bytes.size());
  EXPECT_EQ(back.operation, in.operation);
  EXPECT_EQ(back.nan_rule, in.nan_rule);
  EXPECT_EQ(back.overflow, in.overflow);
  EXPECT_EQ(back.style, in.style);
  EXPECT_EQ(back.minus_terms, in.minus_terms);
  EXPECT_EQ(back.plus_terms, in.plus_terms);
  EXPECT_EQ(back.input_misalignment, 13u);
  EXPECT_EQ(back.output_misalignment, 6u);
  EXPECT_EQ(back.divisor_bits, in.divisor_bits);
  EXPECT_EQ(back.f32, in.f32);
  // Short inputs decode to an empty row; rope rows keep a multiple of 4.
  EXPECT_TRUE(decode_numerics_input(bytes.data(), 3).f32.empty());
  EXPECT_EQ(decode_numerics_input(bytes.data(), bytes.size() - 4).f32.size(), 4u);
}

TEST(SemanticBins, CaseBinsAreMarkedAndReported) {
  const int before = bins_reached();
  Case c;
  c.num_tokens = 17;
  c.mqa_heads = 33;
  c.indexer_heads = 2;
  mark_case_bins(c);
  EXPECT_GT(bins_reached(), before);
  EXPECT_EQ(bin_count(), kTotalBins);
  const std::string report = bins_report();
  // The reached list comes before "| missing:" on each group's line.
  const size_t line = report.find("indexer heads");
  ASSERT_NE(line, std::string::npos) << report;
  const std::string text = report.substr(line, report.find('\n', line) - line);
  EXPECT_LT(text.find("H>2*NI"), text.find("missing")) << text;
  int total = 0;
  for (const BinGroupSpec& g : kBinGroups) total += g.count;
  EXPECT_EQ(total, kTotalBins);
}

}  // namespace
}  // namespace qcheck::fuzzing
