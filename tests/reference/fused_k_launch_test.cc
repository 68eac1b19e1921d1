// fused_k's launch on the CPU (ops/fused_k/oracle/fused_k_oracle.h) and its
// arguments' checks (ops/fused_k/args): each role's outputs against its row
// function (tested with known answers in fused_k_known_answers_test), at
// the bytes the slots, strides and layouts name, with every other byte
// (padding, unmapped slots, row tails) left as it was; and the launches the
// checks refuse, each with its one line.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "numerics/conversions.h"
#include "numerics/float_bits.h"
#include "ops/fused_k/oracle/fused_k_oracle.h"
#include "ops/fused_k/oracle/indexer_k_cache.h"

namespace qcheck::fused_k {
namespace {

constexpr uint8_t kFill = 0xA5;

uint16_t bf16(float v) { return spec::bf16_from_f32(v, Bf16Nan::k7FFF); }

// A launch's buffers, filled with values that vary by token and element.
struct Launch {
  static constexpr int64_t T = 3, D = 16, R = 4, P = 5;
  std::vector<int64_t> positions = {4, 0, 2};
  std::vector<int64_t> slots = {3, -1, 0};
  std::vector<float> rope_cache = std::vector<float>(P * 70, 0.0f);  // rows of 70, R = 4 or 64 used
  std::vector<uint16_t> index_k = std::vector<uint16_t>(T * 20);      // row stride 20
  std::vector<float> ln_w = std::vector<float>(D), ln_b = std::vector<float>(D);
  std::vector<uint8_t> indexer_cache = std::vector<uint8_t>(2 * 44, kFill);  // 2 blocks of 2 x 20, stride 44
  std::vector<uint16_t> index_k_out = std::vector<uint16_t>(T * 18, 0xBEEF);
  FusedKArgs args;

  Launch() {
    for (size_t i = 0; i < rope_cache.size(); ++i) rope_cache[i] = 0.25f * static_cast<float>(i % 7) - 0.5f;
    for (size_t i = 0; i < index_k.size(); ++i) index_k[i] = bf16(static_cast<float>(i % 11) - 4.5f);
    for (int64_t i = 0; i < D; ++i) ln_w[i] = 1.0f + 0.125f * static_cast<float>(i), ln_b[i] = 0.0625f * static_cast<float>(i);
    args.num_tokens = T;
    args.positions = positions.data();
    args.rope_cache = RopeCache{rope_cache.data(), FloatType::kF32, P, 70, R};
    args.slot_mapping = slots.data();
    args.index_k = true;
    args.index_dim = D;
    args.index_rope_dim = R;
    args.index_k_in = RowsIn{index_k.data(), 20};
    args.ln_weight = VectorIn{ln_w.data(), FloatType::kF32};
    args.ln_bias = VectorIn{ln_b.data(), FloatType::kF32};
    args.indexer_cache = PagedCache{indexer_cache.data(), 2, 2, 44, D + 4, 0};
    args.index_k_out = RowsOut{index_k_out.data(), 18};
  }
};

// The indexer cache a launch should leave: each token's row function at its
// slot, over a cache of kFill; index_k_out checked on the way.
std::vector<uint8_t> expected_indexer_cache(const Launch& l, const std::vector<int64_t>& slots) {
  std::vector<uint8_t> want(l.indexer_cache.size(), kFill);
  for (int64_t t = 0; t < Launch::T; ++t) {
    const float* cache_row = l.rope_cache.data() + l.positions[t] * 70;
    std::vector<float> rotated(Launch::D);
    std::vector<uint8_t> codes(Launch::D);
    const float scale = index_k_row(l.index_k.data() + t * 20, l.ln_w.data(), l.ln_b.data(), 1e-6f, cache_row,
                                    cache_row + 2, IndexKShape{Launch::D, Launch::R, RopeStyle::kNeox},
                                    IndexKRules{}, rotated.data(), codes.data());
    for (int64_t i = 0; i < Launch::D; ++i) {
      EXPECT_EQ(l.index_k_out[t * 18 + i], bf16(rotated[i])) << "token " << t << " element " << i;
    }
    EXPECT_EQ(l.index_k_out[t * 18 + 16], 0xBEEF);  // the row's tail
    write_indexer_k_entry(want.data(), 44, l.args.indexer_layout, 2, Launch::D, slots[t], codes.data(), scale,
                          l.args.indexer_scale);
  }
  return want;
}

TEST(FusedKLaunch, IndexKRowsLandAtTheirSlots) {
  Launch l;
  l.args.indexer_scale = IndexerKScale::kUe8m0x4;
  ASSERT_EQ(run_fused_k_oracle(l.args, FusedKRules{}), "");
  EXPECT_EQ(l.indexer_cache, expected_indexer_cache(l, l.slots));
  // Slot 3 is block 1, token 1; slot 0 block 0, token 0; token 1 (-1) nowhere: block 0's token 1 and the
  // 4 bytes of padding after each block keep the fill.
  EXPECT_EQ(l.indexer_cache[16], kFill);
  EXPECT_EQ(l.indexer_cache[36], kFill);
  EXPECT_EQ(l.indexer_cache[40], kFill);
  EXPECT_EQ(l.indexer_cache[87], kFill);
  EXPECT_NE(l.indexer_cache[44 + 36], kFill);  // block 1, token 1's scale word (ue8m0 bytes)
}

TEST(FusedKLaunch, OwnIndexSlotsTakePrecedence) {
  Launch l;
  const std::vector<int64_t> index_slots = {-1, 1, -1};
  l.args.index_slot_mapping = index_slots.data();
  ASSERT_EQ(run_fused_k_oracle(l.args, FusedKRules{}), "");
  EXPECT_EQ(l.indexer_cache, expected_indexer_cache(l, index_slots));
  EXPECT_EQ(l.indexer_cache[0], kFill);  // slot_mapping's 0 is not the index cache's
}

TEST(FusedKLaunch, KvQNormAndTopk) {
  constexpr int64_t T = 2, Q = 24, K = 5;
  std::vector<int64_t> positions = {1, 0}, slots = {3, -1};
  std::vector<float> rope_cache(2 * 64);
  for (size_t i = 0; i < rope_cache.size(); ++i) rope_cache[i] = static_cast<float>(i % 5) * 0.25f - 0.5f;
  std::vector<uint16_t> kv_c(T * 512), k_pe(T * 64), q_c(T * Q);
  for (size_t i = 0; i < kv_c.size(); ++i) kv_c[i] = bf16(static_cast<float>(i % 13) - 6.0f);
  for (size_t i = 0; i < k_pe.size(); ++i) k_pe[i] = bf16(static_cast<float>(i % 9) * 0.5f - 2.0f);
  for (size_t i = 0; i < q_c.size(); ++i) q_c[i] = bf16(static_cast<float>(i % 7) + 0.5f);
  std::vector<uint16_t> kv_w(512, bf16(1.5f)), q_w(Q, bf16(0.75f));
  const int64_t entry = mla_entry_bytes(MlaCacheFormat::kFp8DsMla);
  std::vector<uint8_t> mla(2 * 2 * 660, kFill);  // 2 blocks of 2 entries, entry stride 660, block stride 1320
  std::vector<uint16_t> kv_out(T * 512, 0xBEEF), q_c_out(T * Q, 0xBEEF);
  std::vector<int32_t> topk(T * 8, 7);
  FusedKArgs a;
  a.num_tokens = T;
  a.positions = positions.data();
  a.rope_cache = RopeCache{rope_cache.data(), FloatType::kF32, 2, 64, 64};
  a.slot_mapping = slots.data();
  a.kv = true;
  a.kv_c = RowsIn{kv_c.data(), 512};
  a.k_pe = RowsIn{k_pe.data(), 64};
  a.kv_weight = VectorIn{kv_w.data(), FloatType::kBf16};
  a.mla_cache = PagedCache{mla.data(), 2, 2, 1320, entry, 660};
  a.mla_format = MlaCacheFormat::kFp8DsMla;
  a.kv_out = RowsOut{kv_out.data(), 512};
  a.q_norm = true;
  a.q_dim = Q;
  a.q_c = RowsIn{q_c.data(), Q};
  a.q_weight = VectorIn{q_w.data(), FloatType::kBf16};
  a.q_c_out = RowsOut{q_c_out.data(), Q};
  a.topk_fill = true;
  a.topk = topk.data();
  a.topk_width = K;
  a.topk_row_stride = 8;
  ASSERT_EQ(run_fused_k_oracle(a, FusedKRules{}), "");
  std::vector<uint8_t> want(mla.size(), kFill);
  const std::vector<float> w(512, 1.5f), wq(Q, 0.75f);
  for (int64_t t = 0; t < T; ++t) {
    std::vector<float> latent(512), rope(64), q(Q);
    const float* row = rope_cache.data() + positions[t] * 64;
    kv_latent_row(kv_c.data() + t * 512, w.data(), 1e-6f, k_pe.data() + t * 64, row, row + 32, LatentRules{},
                  latent.data(), rope.data());
    for (int64_t i = 0; i < 512; ++i) EXPECT_EQ(kv_out[t * 512 + i], bf16(latent[i]));
    if (slots[t] >= 0) {
      mla_cache_entry(latent.data(), rope.data(), MlaCacheFormat::kFp8DsMla, 1.0f, MlaCacheRules{},
                      want.data() + (slots[t] / 2) * 1320 + (slots[t] % 2) * 660);
    }
    q_latent_row(q_c.data() + t * Q, wq.data(), Q, 1e-6f, LatentRules{}, q.data());
    for (int64_t i = 0; i < Q; ++i) EXPECT_EQ(q_c_out[t * Q + i], bf16(q[i]));
    for (int64_t i = 0; i < 8; ++i) EXPECT_EQ(topk[t * 8 + i], i < K ? -1 : 7) << "token " << t << " column " << i;
  }
  EXPECT_EQ(mla, want);  // slot 3: block 1's second entry; the rest untouched
  EXPECT_EQ(mla[1320], kFill);
  EXPECT_NE(mla[1320 + 660], kFill);
  EXPECT_EQ(mla[1320 + 660 + 656], kFill);
}

TEST(FusedKLaunch, RefusedLaunchesNameTheFieldAndTheLimit) {
  struct Refusal {
    const char* what;
    void (*change)(Launch&);
    const char* line;
  };
  const Refusal refusals[] = {
      {"entry width", [](Launch& l) { l.args.indexer_cache.entry_bytes = 128; },
       "indexer_cache.entry_bytes = 128 is not index_dim + 4 = 20"},
      {"block stride", [](Launch& l) { l.args.indexer_cache.block_stride = 39; },
       "indexer_cache.block_stride = 39 is less than the 40 bytes a block uses"},
      {"shuffled block", [](Launch& l) { l.args.indexer_layout = IndexerKLayout::kShuffled; },
       "indexer_cache.block_size = 2 and index_dim = 16 must both be multiples of 16 for the shuffled layout"},
      {"rope width", [](Launch& l) { l.args.index_rope_dim = 6; }, "index_rope_dim = 6 is not rope_cache.width = 4"},
      {"index_dim", [](Launch& l) { l.args.index_dim = 1024; }, "index_dim = 1024 is outside [1, 512]"},
      {"row stride", [](Launch& l) { l.args.index_k_in.row_stride = 8; },
       "index_k.row_stride = 8 is less than its width 16"},
      {"null weight", [](Launch& l) { l.args.ln_weight.data = nullptr; }, "ln_weight is null"},
      {"eps", [](Launch& l) { l.args.ln_eps_bits = 0x7FC00000u; }, "ln_eps is not a finite number >= 0"},
      {"overlap", [](Launch& l) { l.args.index_k_out.data = l.index_k.data() + 2; },
       "index_k_out overlaps the input index_k"},
      {"slot past the cache", [](Launch& l) { l.slots[2] = 4; },
       "slot_mapping[2] = 4 is past the cache: its 2 blocks of 2 hold slots 0 to 3 (-1: no write)"},
      {"position", [](Launch& l) { l.positions[1] = 5; },
       "positions[1] = 5 is outside [0, 4], the rope cache's rows"},
      {"kv rope width", [](Launch& l) { l.args.kv = true; }, "rope_cache.width = 4 is not 64, k_pe's width"},
  };
  for (const Refusal& r : refusals) {
    Launch l;
    r.change(l);
    const std::vector<uint8_t> before = l.indexer_cache;
    EXPECT_EQ(run_fused_k_oracle(l.args, FusedKRules{}), r.line) << r.what;
    EXPECT_EQ(l.indexer_cache, before) << r.what << ": a refused launch writes nothing";
  }
}

// Rules that cannot compute a role's rows are refused with the role named.
TEST(FusedKLaunch, RulesOutOfRangeAreNamed) {
  Launch l;
  FusedKRules rules = qcheck_fused_k_rules();
  rules.index_k.norm.reduction.lanes = 48;
  EXPECT_EQ(run_fused_k_oracle(l.args, rules), "index_k rules: reduction lanes must be a power of two from 1 to 1024");
  rules = qcheck_fused_k_rules();
  rules.q.norm.reduction.order = ReductionOrder::kTritonBlock;
  rules.q.norm.reduction.warps = 3;
  EXPECT_EQ(run_fused_k_oracle(l.args, rules), "") << "the q role is off: its rules are not read";
  EXPECT_EQ(fused_k_rules_error(l.args, qcheck_fused_k_rules()), "");
}

}  // namespace
}  // namespace qcheck::fused_k
