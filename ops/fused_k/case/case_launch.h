// A fused_k case as a launch on the host: every tensor in one arena between
// gaps of poison, so a comparison of the whole arena sees a byte written
// where no rule names one (a -1 slot, padding, a row's tail, a gap). The
// geometry follows the case's fields alone; the values follow its seed:
// rows of one magnitude with a spread, zeros, constants, NaN and Inf; the
// positions, the slots (distinct, some -1), norm weights near 1, biases near
// 0 or with a last element of +-448 * 2^k (the UE8M0 ceiling's edge).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ops/fused_k/args/fused_k_args.h"
#include "ops/fused_k/case/fused_k_case.h"

namespace qcheck::fused_k {

constexpr int64_t kArenaGap = 256;  // poison bytes before every tensor (and after the last)

// One launch's tensors laid out in an arena.
class Arena {
 public:
  struct Tensor {
    std::string name;
    int64_t offset, bytes;
  };
  // Places a tensor of `bytes` after a gap, aligned; returns its offset.
  int64_t add(const std::string& name, int64_t bytes, int64_t align = 16);
  int64_t size() const { return size_ + kArenaGap; }
  const std::vector<Tensor>& tensors() const { return tensors_; }
  // The tensor that holds byte `at` and the byte's place in it, or the gap it is in.
  std::string where(int64_t at) const;
  // Only the tensor's name, or the gap ("the gap after kv_c").
  std::string tensor_at(int64_t at) const;

 private:
  int64_t size_ = 0;
  std::vector<Tensor> tensors_;
};

// A launch: the args with arena offsets in place of pointers (a pointer
// field holds offset + 1; null stays null), and the arena's bytes (poison,
// with the inputs in place; empty from plan_fused_k_launch).
struct CaseLaunch {
  FusedKArgs args;
  Arena arena;
  std::vector<uint8_t> bytes;
};

// The geometry alone (no bytes): what validation checks.
CaseLaunch plan_fused_k_launch(const FusedKCase& c);

// The geometry and the inputs. After validate_fused_k_case. The poison is
// the seed's byte (poison 0, A), or that byte with its bits flipped by 0xA5
// (poison 1, B: the same inputs, every other byte different from A's, so
// that the doors' second run tells an output never written).
CaseLaunch build_fused_k_launch(const FusedKCase& c, int poison = 0);

// The args with every offset made a pointer into `base` (an arena's copy).
FusedKArgs rebased(const FusedKArgs& args, uint8_t* base);

// Where two copies of an arena differ: "" when they do not, else how many
// bytes and the first one's tensor (or gap), with both bytes.
std::string arena_difference(const Arena& arena, const std::vector<uint8_t>& want, const std::vector<uint8_t>& got);

}  // namespace qcheck::fused_k
