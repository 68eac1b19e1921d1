#include "tests/fused_k/random_launch.h"

#include <algorithm>
#include <cstdio>
#include <thread>

#include "ops/fused_k/oracle/fused_k_oracle.h"

namespace qcheck::fused_k::testing {

namespace {

// The forced parts of a drawn case, kept valid: the caches hold the tokens,
// and the roles a large cache needs are on with their own slots at the end.
FusedKCase forced_case(uint64_t seed, const Forced& forced) {
  FusedKCase c = draw_fused_k_case(seed);
  if (forced.tokens >= 0) c.num_tokens = forced.tokens;
  if (forced.min_cache_bytes > 0) {
    if (!c.index_k || c.index_rope_dim != kMlaRope) {
      c.index_dim = std::max<int64_t>(128, c.index_dim), c.index_rope_dim = kMlaRope;
    }
    c.index_k = c.kv = true, c.q_norm = c.topk_fill = false;
    c.index_slots = c.slots_at_end = true;
  }
  const FusedKArgs planned = plan_fused_k_launch(c).args;
  const auto blocks = [&](const PagedCache& cache, int64_t drawn) {
    const int64_t needed = (c.num_tokens + cache.block_size - 1) / cache.block_size;
    return std::max({drawn, needed, forced.min_cache_bytes / cache.block_stride + 1});
  };
  if (c.index_k) c.indexer_blocks = blocks(planned.indexer_cache, c.indexer_blocks);
  if (c.kv) c.mla_blocks = blocks(planned.mla_cache, c.mla_blocks);
  return c;
}

}  // namespace

Launch random_launch(uint64_t seed, const Forced& forced) {
  Launch l;
  l.c = forced_case(seed, forced);
  CaseLaunch built = build_fused_k_launch(l.c);
  l.args = built.args;
  l.arena = std::move(built.arena);
  l.bytes = std::move(built.bytes);
  l.summary = describe(l.c);
  return l;
}

Prepared prepare(uint64_t seed, const Forced& forced) {
  Prepared p;
  p.seed = seed;
  p.launch = random_launch(seed, forced);
  p.want = p.launch.bytes;
  p.oracle = validate_fused_k_case(p.launch.c);
  if (p.oracle.empty()) p.oracle = run_fused_k_oracle(rebased(p.launch.args, p.want.data()), qcheck_fused_k_rules());
  return p;
}

void for_each_prepared(uint64_t first, int64_t count, const std::function<bool(const Prepared&)>& each) {
  const int threads = std::max(1u, std::thread::hardware_concurrency());
  constexpr int64_t kBatch = 256;
  for (int64_t start = 0; start < count; start += kBatch) {
    const int64_t n = std::min(kBatch, count - start);
    std::vector<Prepared> batch(static_cast<size_t>(n));
    std::vector<std::thread> pool;
    for (int k = 0; k < threads; ++k) {
      pool.emplace_back([&, k] {
        for (int64_t i = k; i < n; i += threads) batch[static_cast<size_t>(i)] = prepare(first + static_cast<uint64_t>(start + i));
      });
    }
    for (std::thread& t : pool) t.join();
    for (const Prepared& p : batch) {
      if (!each(p)) return;
    }
  }
}

std::string arena_difference(const Prepared& p, const std::vector<uint8_t>& got) {
  const std::string difference = fused_k::arena_difference(p.launch.arena, p.want, got);
  return difference.empty() ? "" : "seed " + std::to_string(p.seed) + " (" + p.launch.summary + "): " + difference;
}

}  // namespace qcheck::fused_k::testing
