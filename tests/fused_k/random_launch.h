// Random fused_k launches for the tests: the cases draw_fused_k_case makes
// (ops/fused_k/case/fused_k_case.h: every role combination, index dims
// 2 .. 512, both RoPE styles, f32 and bf16 caches and weights, flat and
// shuffled indexer caches with both scale words, the four MLA formats,
// paddings, block sizes 1 .. 256, slots -1 and separate index slots, Q
// widths up to 8192) built into one poisoned arena (case_launch.h), so a
// comparison of the whole arena sees a byte written where no rule names one.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ops/fused_k/args/fused_k_args.h"
#include "ops/fused_k/case/case_launch.h"
#include "ops/fused_k/case/fused_k_case.h"

namespace qcheck::fused_k::testing {

// One launch: its case, the args with arena offsets in place of pointers
// (case_launch.h), the arena's bytes (poison, with the inputs in place).
struct Launch {
  FusedKCase c;
  FusedKArgs args;
  Arena arena;
  std::vector<uint8_t> bytes;
  std::string summary;  // the shape in one line, for reports
};

// What a test may force: the token count, and caches of at least
// `min_cache_bytes` each (index-K and KV roles on, the slots at their end).
struct Forced {
  int64_t tokens = -1;
  int64_t min_cache_bytes = 0;
};

Launch random_launch(uint64_t seed, const Forced& forced = Forced{});

// A launch and the arena the oracle leaves under qcheck_fused_k_rules()
// (`oracle`: why it refused, "" when it ran).
struct Prepared {
  uint64_t seed = 0;
  Launch launch;
  std::vector<uint8_t> want;
  std::string oracle;
};

Prepared prepare(uint64_t seed, const Forced& forced = Forced{});

// Prepares the launches of seeds first .. first + count - 1 on every core a
// batch at a time and calls each(prepared) in seed order until it returns
// false.
void for_each_prepared(uint64_t first, int64_t count, const std::function<bool(const Prepared&)>& each);

// The first byte where two arenas differ and how many do ("" when none), as
// a line naming the seed, the shape and the tensor.
std::string arena_difference(const Prepared& p, const std::vector<uint8_t>& got);

}  // namespace qcheck::fused_k::testing
