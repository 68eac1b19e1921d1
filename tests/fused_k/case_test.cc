// fused_k's case (ops/fused_k/case) and op (ops/fused_k/op.h): drawn cases
// are valid and give the same bytes twice; validation names the field and
// its limit; the vocabulary lists the case's fields and the tensors its
// launches have; the generic binary and JSON forms carry a case both ways.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "core/op/any_case.h"
#include "core/op/any_case_json.h"
#include "core/op/any_mutate.h"
#include "core/op/any_shrink.h"
#include "ops/fused_k/case/case_launch.h"
#include "ops/fused_k/case/fused_k_case.h"
#include "ops/fused_k/op.h"
#include "ops/fused_k/oracle/fused_k_oracle.h"

namespace qcheck::fused_k {
namespace {

TEST(FusedKCase, TheDefaultCaseAndDrawnCasesAreValidAndTheOracleTakesThem) {
  std::vector<FusedKCase> cases = {FusedKCase{}};
  for (uint64_t seed = 1; seed <= 300; ++seed) cases.push_back(draw_fused_k_case(seed));
  for (const FusedKCase& c : cases) {
    ASSERT_EQ(validate_fused_k_case(c), "") << describe(c);
    CaseLaunch l = build_fused_k_launch(c);
    ASSERT_EQ(run_fused_k_oracle(rebased(l.args, l.bytes.data()), qcheck_fused_k_rules()), "") << describe(c);
  }
}

TEST(FusedKCase, ACaseGivesTheSameBytesTwiceAndAnotherSeedOthers) {
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    const FusedKCase c = draw_fused_k_case(seed);
    EXPECT_EQ(draw_fused_k_case(seed), c);
    const CaseLaunch a = build_fused_k_launch(c), b = build_fused_k_launch(c);
    ASSERT_EQ(a.bytes, b.bytes) << describe(c);
    FusedKCase other = c;
    other.seed += 1000;
    if (c.num_tokens > 0) {
      EXPECT_NE(build_fused_k_launch(other).bytes, a.bytes) << describe(c);
    }
  }
}

// Each change makes an invalid case; the error names the field and the limit.
// The bytes cases make, as a golden: one digest over the arenas of seeds
// 1 .. 60. The same with every compiler (gcc in the plain build, clang in the
// sanitized one, nvcc's host compiler for the GPU tests) and machine; it
// changes only when the generator does, deliberately.
TEST(FusedKCase, TheBytesOfDrawnCasesAreTheGolden) {
  XXH64_state_t* state = XXH64_createState();
  XXH64_reset(state, 0);
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    const CaseLaunch l = build_fused_k_launch(draw_fused_k_case(seed));
    XXH64_update(state, l.bytes.data(), l.bytes.size());
  }
  const uint64_t digest = XXH64_digest(state);
  XXH64_freeState(state);
  EXPECT_EQ(digest, 0xba3cf4d6b155c038ull) << std::hex << "0x" << digest;
}

TEST(FusedKCase, ValidationNamesTheFieldAndItsLimit) {
  const struct {
    std::function<void(FusedKCase&)> change;
    const char* error;
  } wrong[] = {
      {[](FusedKCase& c) { c.num_tokens = -1; }, "num_tokens = -1 is outside [0, 131072]"},
      {[](FusedKCase& c) { c.num_tokens = 1 << 20; }, "num_tokens = 1048576 is outside [0, 131072]"},
      {[](FusedKCase& c) { c.index_k = c.kv = c.q_norm = c.topk_fill = false; }, "all off"},
      {[](FusedKCase& c) { c.index_dim = 513; }, "index_dim = 513 is outside [1, 512]"},
      {[](FusedKCase& c) { c.index_rope_dim = 32; }, "index_rope_dim = 32 is not rope_cache.width = 64"},
      {[](FusedKCase& c) { c.kv = false, c.index_rope_dim = 7; }, "rope_cache.width = 7 is not an even number"},
      {[](FusedKCase& c) { c.kv = false, c.index_dim = 48, c.index_rope_dim = 50; },
       "index_rope_dim = 50 is more than index_dim = 48"},
      {[](FusedKCase& c) { c.indexer_layout = IndexerKLayout::kShuffled, c.indexer_block_size = 8; },
       "indexer_cache.block_size = 8"},
      {[](FusedKCase& c) { c.indexer_layout = static_cast<IndexerKLayout>(2); }, "indexer_layout = 2 is not one"},
      {[](FusedKCase& c) { c.index_fp8 = static_cast<IndexKFp8>(2); }, "index_fp8 = 2 is not one"},
      {[](FusedKCase& c) { c.num_tokens = 65, c.indexer_blocks = 1; },
       "indexer_blocks = 1 holds 64 slots, fewer than num_tokens = 65"},
      {[](FusedKCase& c) { c.mla_blocks = 0; }, "mla_blocks = 0 is outside [1, 16777216]"},
      {[](FusedKCase& c) { c.mla_block_size = 2048; }, "mla_block_size = 2048 is outside [1, 1024]"},
      {[](FusedKCase& c) { c.mla_format = MlaCacheFormat::kFp8, c.k_scale = 0; }, "k_scale is not a positive normal"},
      {[](FusedKCase& c) { c.ln_eps = 0xBF800000u; }, "ln_eps is not a finite number >= 0"},
      {[](FusedKCase& c) { c.q_dim = 8193; }, "q_dim = 8193 is outside [1, 8192]"},
      {[](FusedKCase& c) { c.topk_width = 0; }, "topk_width = 0 is outside [1, 1048576]"},
      {[](FusedKCase& c) { c.input_row_padding = 257; }, "input_row_padding = 257 is outside [0, 256]"},
      {[](FusedKCase& c) { c.skip_percent = 101; }, "skip_percent = 101 is outside [0, 100]"},
      {[](FusedKCase& c) { c.mla_blocks = 1 << 24, c.mla_block_size = 1024; }, "more than 17179869184"},
  };
  for (const auto& w : wrong) {
    FusedKCase c;
    w.change(c);
    const std::string error = validate_fused_k_case(c);
    EXPECT_NE(error.find(w.error), std::string::npos) << "got: " << error << "\nwanted: " << w.error;
  }
}

TEST(FusedKOp, TheVocabularyListsTheCaseFieldsAndTheTensorsItsLaunchesHave) {
  const Vocabulary& v = fused_k_op().vocabulary();
  EXPECT_STREQ(fused_k_op().name(), "fused_k");
  std::set<std::string> names;
  for (const FieldMeta& f : v.fields) EXPECT_TRUE(names.insert(f.name).second) << f.name << " twice";
  EXPECT_EQ(to_any_case(FusedKCase{}).fields.size(), v.fields.size());
  std::set<std::string> listed, seen;
  for (const TensorMeta& t : v.tensors) listed.insert(t.name);
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const CaseLaunch planned = plan_fused_k_launch(draw_fused_k_case(seed));
    for (const Arena::Tensor& t : planned.arena.tensors()) {
      EXPECT_TRUE(listed.count(t.name)) << t.name << " is not in the vocabulary";
      seen.insert(t.name);
    }
  }
  EXPECT_EQ(seen, listed) << "a listed tensor no launch has";
  // The defaults, read back from JSON text that gives no field, are the default case.
  AnyCase read;
  ASSERT_EQ(any_case_from_json("{\"op\": \"fused_k\"}", {&fused_k_op()}, fused_k_op(), &read), "");
  FusedKCase c;
  ASSERT_EQ(from_any_case(read, &c), "");
  EXPECT_EQ(c, FusedKCase{});
}

TEST(FusedKOp, BinaryAndJsonFormsCarryACaseBothWays) {
  const std::vector<const Op*> ops = {&fused_k_op()};
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    const FusedKCase c = draw_fused_k_case(seed);
    const std::vector<uint8_t> bytes = encode_any_case(to_any_case(c));
    AnyCase decoded;
    ASSERT_EQ(decode_any_case(bytes.data(), bytes.size(), ops, &decoded), "");
    FusedKCase back;
    ASSERT_EQ(from_any_case(decoded, &back), "");
    ASSERT_EQ(back, c) << describe(c);
    const std::string json = any_case_to_json(to_any_case(c), true);
    ASSERT_EQ(nlohmann::json::parse(json)["op"], "fused_k");
    AnyCase from_json;
    ASSERT_EQ(any_case_from_json(json, ops, fused_k_op(), &from_json), "");
    ASSERT_EQ(from_any_case(from_json, &back), "");
    ASSERT_EQ(back, c) << json;
  }
  // A wrong value names its field.
  AnyCase bad;
  EXPECT_NE(any_case_from_json("{\"op\": \"fused_k\", \"mla_format\": \"fp16\"}", ops, fused_k_op(), &bad).find(
                "mla_format"),
            std::string::npos);
  std::vector<uint8_t> bytes = encode_any_case(to_any_case(FusedKCase{}));
  FusedKCase defaults;
  AnyCase decoded;
  ASSERT_EQ(decode_any_case(bytes.data(), bytes.size(), ops, &decoded), "");
  ASSERT_EQ(from_any_case(decoded, &defaults), "");
  EXPECT_EQ(defaults, FusedKCase{});
}

// The generic shrinker on fused_k's fields, with a failure worked out by
// hand: "index-K on with index_dim >= 17". Integers go toward 0 as far as
// validity and the failure allow (index_dim 17; index_rope_dim 2, the least
// even width; one rope row and block; no tokens, no padding), booleans the
// failure does not need to false, enumerations to their first choice; bits
// and the seed stay.
TEST(FusedKOp, TheShrinkerKeepsTheFailureAndMakesEveryOtherFieldSmallest) {
  FusedKCase start = draw_fused_k_case(7);
  start.index_k = true, start.kv = false, start.index_dim = 200, start.index_rope_dim = 10;
  start.indexer_layout = IndexerKLayout::kShuffled, start.indexer_block_size = 64, start.index_dim = 208;
  ASSERT_EQ(validate_fused_k_case(start), "");
  const auto same = [](const AnyCase& a) {
    FusedKCase c;
    return from_any_case(a, &c).empty() && validate_fused_k_case(c).empty() && c.index_k && c.index_dim >= 17;
  };
  const AnyShrinkResult r = shrink_any_case(to_any_case(start), same);
  FusedKCase small;
  ASSERT_EQ(from_any_case(r.best, &small), "");
  EXPECT_EQ(small.index_dim, 17);
  EXPECT_EQ(small.index_rope_dim, 2);
  EXPECT_EQ(small.num_tokens, 0);
  EXPECT_TRUE(small.index_k);
  EXPECT_FALSE(small.kv || small.q_norm || small.topk_fill || small.index_slots || small.index_k_out);
  EXPECT_EQ(small.indexer_layout, IndexerKLayout::kFlat);  // shuffled needs D % 16 == 0: flat lets D reach 17
  EXPECT_EQ(small.rope_rows, 1);
  EXPECT_EQ(small.indexer_block_size, 1);
  EXPECT_EQ(small.indexer_blocks, 1);
  EXPECT_EQ(small.input_row_padding + small.output_row_padding + small.indexer_block_padding, 0);
  EXPECT_EQ(small.q_dim, 1);
  EXPECT_EQ(small.ln_eps, start.ln_eps);
  EXPECT_EQ(small.seed, start.seed);
  EXPECT_GT(r.accepted, 10);
  // A failure nothing smaller keeps: the case stays as it is.
  const AnyShrinkResult none = shrink_any_case(to_any_case(small), same);
  EXPECT_EQ(none.accepted, 0);
  EXPECT_EQ(none.best, r.best);
}

// The generic mutator on fused_k's fields: each result changes one to three
// fields (never zero), encodes and decodes to itself, depends only on the
// case and the seed, and often enough stays valid for a fuzzer's time to go
// to cases rather than refusals.
TEST(FusedKOp, TheMutatorChangesOneToThreeFieldsDeterministically) {
  AnyCase c = to_any_case(draw_fused_k_case(5));
  int64_t valid = 0;
  constexpr int kRuns = 3000;
  for (uint64_t seed = 0; seed < kRuns; ++seed) {
    const AnyCase m = mutate_any_case(c, seed);
    ASSERT_EQ(m, mutate_any_case(c, seed));
    int changed = 0;
    for (size_t i = 0; i < m.fields.size(); ++i) changed += !(m.fields[i] == c.fields[i]);
    ASSERT_GE(changed, 1) << "seed " << seed;
    ASSERT_LE(changed, 3) << "seed " << seed;
    const std::vector<uint8_t> bytes = encode_any_case(m);
    AnyCase back;
    ASSERT_EQ(decode_any_case(bytes.data(), bytes.size(), {&fused_k_op()}, &back), "");
    ASSERT_EQ(back, m);
    FusedKCase k;
    ASSERT_EQ(from_any_case(m, &k), "");
    const bool ok = validate_fused_k_case(k).empty();
    valid += ok;
    if (ok && seed % 7 == 0) c = m;  // walk on from a valid case, as a fuzzer keeps only those
  }
  std::printf("mutator: %lld of %d results valid\n", static_cast<long long>(valid), kRuns);
  EXPECT_GT(valid, kRuns / 4);
}

}  // namespace
}  // namespace qcheck::fused_k
