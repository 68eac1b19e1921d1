// fused_k through the doors (ops/fused_k/door): the CPU model of qcheck's
// kernel, run as a caller runs its kernel (on the arena from each poison),
// passes the verdict; planted bugs and stray writes fail it with the tensor
// and the class named; the two poisons share every input and differ
// everywhere else; the tensor views lie inside their tensors.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ops/fused_k/case/case_launch.h"
#include "ops/fused_k/cpu_model/fused_k_cpu_model.h"
#include "ops/fused_k/door/door.h"
#include "ops/fused_k/op.h"

namespace qcheck::fused_k {
namespace {

constexpr int64_t kTiny = int64_t(1) << 20;

FusedKCase drawn(uint64_t seed) {
  FusedKCase c;
  const std::string why = door_case_from_seed(seed, kTiny, &c);
  EXPECT_EQ(why, "");
  return c;
}

// The arena a kernel leaves: the model run on the arena of `poison`.
std::vector<uint8_t> model_run(const FusedKCase& c, int poison, planted::Bug bug = planted::kNone) {
  std::vector<uint8_t> arena = door_arena(c, poison);
  const std::string error = run_fused_k_cpu_model(rebased(plan_fused_k_launch(c).args, arena.data()), bug);
  EXPECT_EQ(error, "") << describe(c);
  return arena;
}

DoorVerdict judged(const FusedKCase& c, const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  return door_judge(c, "cpu-model", a.data(), b.data(), 0);
}

Arena::Tensor tensor_named(const FusedKCase& c, const std::string& name) {
  const CaseLaunch plan = plan_fused_k_launch(c);
  for (const Arena::Tensor& t : plan.arena.tensors()) {
    if (t.name == name) return t;
  }
  ADD_FAILURE() << "no tensor " << name;
  return {};
}

TEST(FusedKDoor, TheCpuModelPassesInBothRunsOfEveryDrawnCase) {
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    const FusedKCase c = drawn(seed);
    const DoorVerdict v = judged(c, model_run(c, 0), model_run(c, 1));
    EXPECT_EQ(v.exit_code, 0) << v.text;
    EXPECT_EQ(v.text.rfind("PASS: fused_k, cpu-model, under profile qcheck", 0), 0u) << v.text;
    EXPECT_TRUE(v.signatures.empty());
    EXPECT_NE(v.json.find("\"verdict\":\"pass\""), std::string::npos) << v.json;
  }
}

// The first drawn case on which the bug shows, and its verdict.
DoorVerdict first_finding(planted::Bug bug, FusedKCase* found) {
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    const FusedKCase c = drawn(seed);
    const DoorVerdict v = judged(c, model_run(c, 0, bug), model_run(c, 1, bug));
    if (v.exit_code != 0) {
      *found = c;
      return v;
    }
  }
  return DoorVerdict{};
}

TEST(FusedKDoor, PlantedBugsFailWithTheirTensorAndClassNamed) {
  const struct {
    planted::Bug bug;
    std::string signature;
  } expected[] = {
      {planted::kQTailDropped, "q_c_out/q_c_out/"},  // (its sum is wrong too: the written elements differ)
      {planted::kKScaleMultiplied, "mla_cache/mla_cache/differs"},
      {planted::kIndexSlotsIgnored, "indexer_cache/indexer_cache/differs"},  // (and MLA slots past its end: guards)
      {planted::kTopkWidthAsStride, "topk/topk/"},
  };
  for (const auto& e : expected) {
    FusedKCase c;
    const DoorVerdict v = first_finding(e.bug, &c);
    ASSERT_EQ(v.exit_code, 1) << planted::name_of(e.bug) << " was not found in 400 cases";
    EXPECT_TRUE(std::any_of(v.signatures.begin(), v.signatures.end(),
                            [&](const std::string& s) { return s.rfind(e.signature, 0) == 0; }))
        << planted::name_of(e.bug) << ": " << v.text;
    EXPECT_NE(v.text.find("FAIL: fused_k, cpu-model"), std::string::npos) << v.text;
    EXPECT_NE(v.json.find("\"signature\":\"" + v.signatures.front() + "\""), std::string::npos) << v.json;
  }
  // An entry written before the cache lands in the gap or the tensor before it: never a plain difference.
  FusedKCase c;
  const DoorVerdict v = first_finding(planted::kSlotMinusOneWritten, &c);
  ASSERT_EQ(v.exit_code, 1);
  const std::string& first = v.signatures.front();
  EXPECT_TRUE(first.find("/guard-written") != std::string::npos || first.find("/input-changed") != std::string::npos)
      << v.text;
}

TEST(FusedKDoor, AStrayWriteIsNamedByWhereItLanded) {
  const FusedKCase c = drawn(7);
  const std::vector<uint8_t> a = model_run(c, 0), b = model_run(c, 1);
  const std::vector<Arena::Tensor> tensors = plan_fused_k_launch(c).arena.tensors();
  ASSERT_GE(tensors.size(), 2u);
  const auto after_flipping = [&](int64_t at) {
    std::vector<uint8_t> changed = a;
    changed[static_cast<size_t>(at)] ^= 0x10;
    return judged(c, changed, b);
  };
  EXPECT_EQ(after_flipping(0).signatures, std::vector<std::string>{"guard/front/guard-written"});
  const Arena::Tensor& first = tensors.front();
  EXPECT_EQ(after_flipping(first.offset + first.bytes).signatures,
            std::vector<std::string>{"guard/after_" + first.name + "/guard-written"});
  const Arena::Tensor& last = tensors.back();
  const int64_t arena_end = door_arena_bytes(c);
  EXPECT_EQ(after_flipping(arena_end - 1).signatures,
            std::vector<std::string>{"guard/after_" + last.name + "/guard-written"});
  EXPECT_EQ(after_flipping(first.offset).signatures,
            std::vector<std::string>{first.name + "/" + first.name + "/input-changed"});
  // Run B only: the verdict says which run.
  std::vector<uint8_t> changed_b = b;
  changed_b[static_cast<size_t>(first.offset)] ^= 1;
  const DoorVerdict v = judged(c, a, changed_b);
  EXPECT_NE(v.text.find("run B  " + first.name + "/" + first.name + "/input-changed: 1 bytes differ"),
            std::string::npos)
      << v.text;
}

TEST(FusedKDoor, AnOutputLeftAsItWasIsUnwrittenAndAWrongOneDiffers) {
  FusedKCase c = drawn(3);
  c.q_norm = true, c.num_tokens = std::max<int64_t>(c.num_tokens, 2);
  ASSERT_EQ(validate_fused_k_case(c), "");
  const Arena::Tensor q = tensor_named(c, "q_c_out");
  std::vector<uint8_t> a = model_run(c, 0), b = model_run(c, 1);
  const std::vector<uint8_t> start_a = door_arena(c, 0);
  std::copy(start_a.begin() + q.offset, start_a.begin() + q.offset + q.bytes, a.begin() + q.offset);
  EXPECT_EQ(judged(c, a, b).signatures, std::vector<std::string>{"q_c_out/q_c_out/unwritten"});
  a = model_run(c, 0);
  a[static_cast<size_t>(q.offset)] ^= 0x01;  // a bf16's lowest bit: written, and wrong
  EXPECT_EQ(judged(c, a, b).signatures, std::vector<std::string>{"q_c_out/q_c_out/differs"});
}

TEST(FusedKDoor, TheTwoPoisonsShareEveryInputAndDifferEverywhereElse) {
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    const FusedKCase c = drawn(seed);
    const std::vector<uint8_t> a = door_arena(c, 0), b = door_arena(c, 1);
    ASSERT_EQ(a.size(), b.size());
    ASSERT_EQ(static_cast<int64_t>(a.size()), door_arena_bytes(c));
    for (size_t i = 0; i < a.size(); ++i) {
      ASSERT_TRUE((a[i] ^ b[i]) == 0 || (a[i] ^ b[i]) == 0xA5) << "byte " << i << " of " << describe(c);
    }
    int64_t at = 0;
    const CaseLaunch plan = plan_fused_k_launch(c);
    for (const Arena::Tensor& t : plan.arena.tensors()) {
      for (int64_t i = at; i < t.offset; ++i) ASSERT_EQ(a[size_t(i)] ^ b[size_t(i)], 0xA5) << "gap byte " << i;
      at = t.offset + t.bytes;
    }
    // Every element an input's view reaches holds the same bytes.
    for (const DoorTensor& d : door_tensors(c)) {
      if (d.output || d.shape.empty()) continue;
      const int64_t size = d.dtype == "f32" ? 4 : d.dtype == "bf16" ? 2 : d.dtype == "int64" ? 8 : 1;
      const int64_t rows = d.shape.size() == 2 ? d.shape[0] : 1, width = d.shape.back();
      const int64_t row_stride = d.shape.size() == 2 ? d.strides[0] : 0;
      for (int64_t r = 0; r < rows; ++r) {
        const size_t from = static_cast<size_t>(d.offset_bytes + r * row_stride * size);
        ASSERT_TRUE(std::equal(a.begin() + from, a.begin() + from + width * size, b.begin() + from))
            << d.name << " row " << r << " of " << describe(c);
      }
    }
  }
}

TEST(FusedKDoor, EveryViewLiesInsideItsTensorWithTheVocabularysRole) {
  const Vocabulary& vocabulary = fused_k_op().vocabulary();
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    const FusedKCase c = drawn(seed);
    const std::vector<DoorTensor> views = door_tensors(c);
    const std::vector<Arena::Tensor> tensors = plan_fused_k_launch(c).arena.tensors();
    ASSERT_EQ(views.size(), tensors.size());
    for (size_t i = 0; i < views.size(); ++i) {
      const DoorTensor& d = views[i];
      EXPECT_EQ(d.name, tensors[i].name);
      EXPECT_EQ(d.offset_bytes, tensors[i].offset);
      const auto listed = std::find_if(vocabulary.tensors.begin(), vocabulary.tensors.end(),
                                       [&](const TensorMeta& t) { return t.name == d.name; });
      ASSERT_NE(listed, vocabulary.tensors.end()) << d.name;
      EXPECT_EQ(d.output, listed->role == "output") << d.name;
      EXPECT_NE(std::find(listed->dtypes.begin(), listed->dtypes.end(), d.dtype), listed->dtypes.end()) << d.name;
      const int64_t size = d.dtype == "f32" || d.dtype == "int32" ? 4 : d.dtype == "bf16" ? 2 : d.dtype == "int64" ? 8 : 1;
      int64_t last = 0;
      bool empty = false;
      for (size_t k = 0; k < d.shape.size(); ++k) {
        empty = empty || d.shape[k] == 0;
        last += (d.shape[k] - 1) * d.strides[k];
      }
      if (!empty) {
        EXPECT_LE(d.offset_bytes + (last + 1) * size, tensors[i].offset + tensors[i].bytes) << d.name;
      }
    }
  }
}

TEST(FusedKDoor, OnlyTheQcheckProfileIsKnownAndSizesBoundTheArena) {
  EXPECT_EQ(door_profile_error(""), "");
  EXPECT_EQ(door_profile_error("qcheck"), "");
  EXPECT_NE(door_profile_error("vllm-triton").find("profile = \"vllm-triton\""), std::string::npos);
  EXPECT_EQ(door_arena_budget("tiny"), int64_t(1) << 20);
  EXPECT_EQ(door_arena_budget("usual"), int64_t(64) << 20);
  EXPECT_EQ(door_arena_budget("huge"), 0);
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    FusedKCase c, m;
    ASSERT_EQ(door_case_from_seed(seed, kTiny, &c), "");
    EXPECT_LE(door_arena_bytes(c), kTiny);
    ASSERT_EQ(door_mutate(c, seed, kTiny, &m), "");
    EXPECT_NE(m, c);
    EXPECT_EQ(validate_fused_k_case(m), "");
    EXPECT_LE(door_arena_bytes(m), kTiny);
    FusedKCase again;
    ASSERT_EQ(door_mutate(c, seed, kTiny, &again), "");
    EXPECT_EQ(again, m);  // deterministic
  }
}

TEST(FusedKDoor, AMutationOfACaseOverTheBudgetStaysWithinItsOwnArenaAndAnInvalidOneIsRefused) {
  // A drawn case whose arena is over the tiny budget: its mutations may be as large, never larger.
  FusedKCase large;
  for (uint64_t seed = 1; door_arena_bytes(large) <= kTiny; ++seed) {
    ASSERT_EQ(door_case_from_seed(seed, int64_t(64) << 20, &large), "");
  }
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    FusedKCase m;
    ASSERT_EQ(door_mutate(large, seed, kTiny, &m), "") << seed;
    EXPECT_LE(door_arena_bytes(m), std::max(kTiny, door_arena_bytes(large)));
  }
  FusedKCase invalid;
  invalid.num_tokens = -1;
  FusedKCase untouched;
  EXPECT_EQ(door_mutate(invalid, 1, kTiny, &untouched).rfind("the case to mutate is invalid: num_tokens = -1", 0), 0u);
}

}  // namespace
}  // namespace qcheck::fused_k
