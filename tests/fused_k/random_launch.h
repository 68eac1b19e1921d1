// Random fused_k launches for the tests: every role combination, index dims
// 2 .. 512, both RoPE styles, f32 and bf16 caches and weights, flat and
// shuffled indexer caches with both scale words, the four MLA formats,
// padded strides, block sizes 1 .. 256, slots -1 and separate index slots,
// Q widths up to 8192, rows of every magnitude with zeros, constants, NaN
// and Inf. A launch's tensors sit in one arena between gaps of poison, so a
// comparison of the whole arena sees a byte written where no rule names one
// (a -1 slot, padding, a row's tail, a gap). A seed gives the same launch on
// every machine (std::mt19937_64 and integer draws only).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ops/fused_k/args/fused_k_args.h"

namespace qcheck::fused_k::testing {

constexpr int64_t kGap = 256;  // poison bytes before every tensor (and after the last)

// One launch's tensors laid out in an arena.
class Arena {
 public:
  struct Tensor {
    std::string name;
    int64_t offset, bytes;
  };
  // Places a tensor of `bytes` after a gap, aligned; returns its offset.
  int64_t add(const std::string& name, int64_t bytes, int64_t align = 16);
  int64_t size() const { return size_ + kGap; }
  // The tensor that holds byte `at`, or the gap it is in.
  std::string where(int64_t at) const;

 private:
  int64_t size_ = 0;
  std::vector<Tensor> tensors_;
};

// One random launch: the args with arena offsets in place of pointers (a
// pointer field holds offset + 1; null stays null), and the arena's bytes:
// poison, with the inputs in place.
struct Launch {
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

// The args with every offset made a pointer into `base` (an arena's copy).
FusedKArgs rebased(const FusedKArgs& args, uint8_t* base);

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
