// The blocked kernel's configuration a planted-bug plugin of the CUDA
// catalogue (mutant_plugin.cc) runs a launch in, from the launch's shape: a
// bug may live in one configuration only, so the cases a fuzzer makes must
// reach each of them, and both runs of one case must take the same. Header
// only and free of CUDA: qcheck-mutants' equivalence proofs
// (ops/fused_q/mutants/equivalence.h) pick shapes that cover every configuration.
#pragma once

#include <cstdint>

namespace qcheck::plugin {

enum class MutantConfig : int { kAuto = 0, kThreads256 = 1, kStaged64 = 2, kStaged32 = 3, kInParts = 4 };
constexpr int kMutantConfigCount = 5;

inline MutantConfig mutant_config(int64_t tokens, int64_t mqa_heads, int64_t indexer_heads, int64_t index_dim,
                                  int64_t rope_dim, int64_t nope_dim, int query_path) {
  const uint64_t h = static_cast<uint64_t>(tokens) * 0x9E3779B97F4A7C15ull ^
                     static_cast<uint64_t>(mqa_heads * 31 + indexer_heads * 7 + index_dim + rope_dim + nope_dim +
                                           query_path);
  return static_cast<MutantConfig>((h >> 32) % kMutantConfigCount);
}

}  // namespace qcheck::plugin
