// The generated inputs, byte for byte, as a golden: a digest over every
// buffer of the tensor sets of 2,400 cases (sample_case over every value
// recipe, with f32 and bf16 caches, and the real model dims). Input
// generation may get faster, never different: a case and its seed must give
// the same bytes as when it was saved (the corpus, the regressions, every
// finding's replay line). The expected digest was taken from the generator
// of commit 0d6e459, before its speed-up; a change that moves one byte of
// one case fails here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "fuzz/buffers/tensors.h"
#include "fuzz/case/case_names.h"
#include "tests/harness/case_samples.h"

namespace qcheck {
namespace {

constexpr int kCasesPerRecipe = 200;

// XXH64 chained over the cases of each recipe (taken at 0d6e459).
constexpr const char* kGoldenPerRecipe =
    "normal fa14dc4ccd345fc0\n"
    "magnitudes 7b25cd22bcfb1e4c\n"
    "specials 8c9f0a26567cb157\n"
    "scale-edges ecb3eadbc04d1bc1\n"
    "zero-rows 918212113086142b\n"
    "scale-band 09bccfd59e0b7a3c\n"
    "cancellation 7b6078ed282c7581\n"
    "large-positions a1c00d340263b1d7\n"
    "mixed e1180e21752140d2\n"
    "nan-rows 74187e45b7a156f0\n"
    "contraction ecad3e91d8ee0bf4\n"
    "ties 5a483def1eccf101\n";

// The cases: sample_case(i) with recipe r, and every other one with both
// caches in f32 (the contraction and band recipes need them) or the real
// dims (D 128, R 64, L 512: the rows the campaign's usual cases have).
Case golden_case(int i, ValueRecipe recipe) {
  Case c = test::sample_case(static_cast<uint64_t>(i));
  c.values = recipe;
  if (i % 2 == 1) {
    c.mqa_cache_dtype = FloatType::kF32;
    c.indexer_cache_dtype = FloatType::kF32;
  }
  if (i % 5 == 0) {
    c.index_dim = 128;
    c.rope_dim = 64;
    c.nope_dim = 512;
    c.num_tokens = std::min<int64_t>(c.num_tokens, 6);
  }
  return c;
}

uint64_t set_digest(const TensorSet& set, uint64_t seed) {
  uint64_t h = seed;
  for (const GuardedBuffer& b : set.buffers) h = XXH64(b.data(), b.size(), h);
  return h;
}

TEST(ValuesGolden, EveryRecipeGivesTheBytesItGaveBefore) {
  int cases = 0;
  std::string per_recipe;
  for (unsigned r = 0; r < enum_count<ValueRecipe>(); ++r) {
    const ValueRecipe recipe = static_cast<ValueRecipe>(r);
    uint64_t h = 0;
    for (int i = 0; i < kCasesPerRecipe; ++i) {
      const Case c = golden_case(i, recipe);
      ASSERT_EQ(validate_case(c), "") << name_of(recipe) << " case " << i;
      h = set_digest(build_tensor_set(c, Poison::kA), h);
      ++cases;
    }
    char line[64];
    std::snprintf(line, sizeof line, "%s %016llx\n", name_of(recipe), static_cast<unsigned long long>(h));
    per_recipe += line;
  }
  EXPECT_EQ(cases, kCasesPerRecipe * static_cast<int>(enum_count<ValueRecipe>()));
  // Per recipe, so a failure names the recipe that moved.
  EXPECT_EQ(per_recipe, kGoldenPerRecipe) << "the generated inputs changed";
}

}  // namespace
}  // namespace qcheck
