// Guarded buffers and tensor sets: sentinels, padding, poison, the exact
// alias, and launch arguments that the launch validation accepts.
#include "fuzz/buffers/tensors.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tests/harness/case_samples.h"

namespace qcheck {
namespace {

TEST(GuardedBuffer, SentinelsAroundPaddingFilledPayload) {
  GuardedBuffer b(10);
  ASSERT_EQ(b.size(), 10 + 2 * GuardedBuffer::kSentinelBytes);
  EXPECT_EQ(b.payload_bytes(), 10u);
  EXPECT_EQ(b.payload(), b.data() + 256);
  const uint8_t dead_beef[4] = {0xEF, 0xBE, 0xAD, 0xDE};
  for (size_t i = 0; i < b.size(); ++i) {
    if (b.in_sentinel(i)) {
      ASSERT_EQ(b.data()[i], b.expected_sentinel_byte(i)) << i;
    } else {
      ASSERT_EQ(b.data()[i], GuardedBuffer::kPaddingByte) << i;
    }
  }
  EXPECT_EQ(std::memcmp(b.data(), dead_beef, 4), 0);
  EXPECT_EQ(std::memcmp(b.data() + 256 + 10, dead_beef, 4),
            0);  // the back sentinel restarts the pattern
  EXPECT_TRUE(b.in_sentinel(255));
  EXPECT_FALSE(b.in_sentinel(256));
  EXPECT_FALSE(b.in_sentinel(265));
  EXPECT_TRUE(b.in_sentinel(266));
  EXPECT_EQ(GuardedBuffer(0).size(), 512u);
}

// Every byte of a buffer, classified: sentinel, element of some tensor, or
// padding; checks the fill of each kind.
TEST(TensorSet, ElementsPoisonPaddingAndSentinelsHoldTheirPatterns) {
  for (uint64_t i = 0; i < 100; ++i) {
    const Case c = test::sample_case(i);
    for (Poison poison : {Poison::kA, Poison::kB}) {
      const TensorSet set = build_tensor_set(c, poison);
      for (size_t bi = 0; bi < set.buffers.size(); ++bi) {
        const GuardedBuffer& b = set.buffers[bi];
        std::vector<int> owner(b.payload_bytes(), -1);  // tensor index per byte, -1 padding
        for (size_t ti = 0; ti < set.plan.tensors.size(); ++ti) {
          const TensorGeometry& g = set.plan.tensors[ti];
          if (g.buffer != static_cast<int>(bi)) continue;
          for (int64_t t = 0; t < g.rows; ++t) {
            for (int64_t h = 0; h < g.cols; ++h) {
              for (int64_t d = 0; d < g.width * element_bytes(g.type); ++d) {
                const int64_t at = g.element_offset(t, h, 0) * element_bytes(g.type) + d;
                ASSERT_LT(at, static_cast<int64_t>(owner.size())) << "element outside its buffer";
                // Only the alias front is shared (by ql_nope and query_out).
                if (owner[at] != -1) {
                  ASSERT_EQ(g.id, TensorId::kQlNope);
                  ASSERT_EQ(set.plan.tensors[owner[at]].id, TensorId::kQueryOut);
                }
                owner[at] = static_cast<int>(ti);
              }
            }
          }
        }
        for (size_t at = 0; at < b.size(); ++at) {
          if (b.in_sentinel(at)) {
            ASSERT_EQ(b.data()[at], b.expected_sentinel_byte(at));
            continue;
          }
          const int o = owner[at - GuardedBuffer::kSentinelBytes];
          if (o == -1) {
            ASSERT_EQ(b.data()[at], GuardedBuffer::kPaddingByte)
                << "sample " << i << " buffer " << bi;
          } else if (set.plan.tensors[o].role != TensorRole::kInput) {
            ASSERT_EQ(b.data()[at], poison_byte(poison)) << "sample " << i << " buffer " << bi;
          }
        }
      }
    }
  }
}

TEST(TensorSet, ExactAliasPutsQlNopeValuesInTheFrontNotPoison) {
  Case c = test::small_case();
  c.alias = AliasMode::kExactFront;
  TensorSet set = build_tensor_set(c, Poison::kA);
  fill_poison(set, Poison::kB);
  const TensorGeometry& out = *set.find(TensorId::kQueryOut);
  int poisoned_front = 0, poisoned_tail = 0;
  for (int64_t t = 0; t < out.rows; ++t) {
    for (int64_t h = 0; h < out.cols; ++h) {
      for (int64_t d = 0; d < out.width; ++d) {
        const uint8_t* e = set.element(out, t, h, d);
        const bool poisoned = e[0] == 0x5B && e[1] == 0x5B;
        (d < c.nope_dim ? poisoned_front : poisoned_tail) += poisoned;
      }
    }
  }
  EXPECT_LT(poisoned_front, 3);  // 0x5B5B is a legal bf16 value, rare in noise
  EXPECT_EQ(poisoned_tail, out.rows * out.cols * c.rope_dim);
  const FusedQArgs args = make_fused_q_args(c, set);
  EXPECT_TRUE(ql_nope_aliases_query_out(args));
  EXPECT_EQ(validate_fused_q_args(args), "");
}

TEST(TensorSet, ArgsPassTheLaunchValidationForEverySample) {
  for (uint64_t i = 0; i < 300; ++i) {
    const Case c = test::sample_case(i);
    TensorSet set = build_tensor_set(c, Poison::kA);
    const FusedQArgs args = make_fused_q_args(c, set);
    ASSERT_EQ(validate_fused_q_args(args), "") << "sample " << i << ": " << describe(c);
    EXPECT_EQ(args.has_indexer, c.has_indexer);
    // Without the indexer its outputs are still passed (so stray writes show)
    // and its inputs are null.
    if (!c.has_indexer && c.num_tokens > 0) {
      EXPECT_NE(args.index_q_fp8.data, nullptr);
      EXPECT_EQ(args.index_q.data, nullptr);
    }
  }
}

// A run's set under poison B is the poison-A set with its outputs poisoned
// again, byte for byte: the fuzz target makes its runs' sets so, and the C
// API fills run B's buffers so from the set it kept for run A.
TEST(TensorSet, PoisonBIsPoisonAWithItsOutputsPoisonedAgain) {
  std::vector<Case> cases;
  for (const auto& named : test::covering_grid()) cases.push_back(named.c);
  for (uint64_t i = 0; i < 100; ++i) cases.push_back(test::sample_case(i));
  for (const Case& c : cases) {
    TensorSet from_a = build_tensor_set(c, Poison::kA);
    fill_poison(from_a, Poison::kB);
    const TensorSet b = build_tensor_set(c, Poison::kB);
    ASSERT_EQ(from_a.buffers.size(), b.buffers.size());
    for (size_t i = 0; i < b.buffers.size(); ++i) {
      ASSERT_EQ(from_a.buffers[i].size(), b.buffers[i].size());
      EXPECT_EQ(std::memcmp(from_a.buffers[i].data(), b.buffers[i].data(), b.buffers[i].size()), 0)
          << b.plan.buffers[i].name << "\n" << describe(c);
    }
  }
}

}  // namespace
}  // namespace qcheck
