// fused_k through the doors (the C API, the Python package): what a caller
// outside the repository needs to run its own kernel on a fused_k case and
// have the bytes judged. The launch's arena (case/case_launch.h) is the one
// guarded allocation the caller copies to its device, every tensor a view
// into it, the poison gaps between them its sentinels; a run starts from
// poison A (the case's own arena) or poison B (the same inputs, every other
// byte flipped), so an output never written shows in one run or the other;
// the verdict compares every byte of the arena a kernel left with the
// oracle's, under the one profile fused_k's oracle knows ("qcheck").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ops/fused_k/case/fused_k_case.h"

namespace qcheck::fused_k {

// The largest arena a case of each door size may have: "tiny" 1 MiB;
// "usual", "default" and "limit" 64 MiB, the fuzz target's budget (fused_k
// has no limit cases yet). 0 for any other name.
int64_t door_arena_budget(const std::string& size);

// A valid case drawn from `seed` whose arena fits `budget` (draws from
// seed, then from keys derived from it, until one fits): "" and *out set,
// or why none did.
std::string door_case_from_seed(uint64_t seed, int64_t budget, FusedKCase* out);

// A copy of a valid case changed in one to three fields
// (core/op/any_mutate.h), valid and within `budget` (or within the case's
// own arena, where that is larger): "" and *out set, or why no try gave one.
std::string door_mutate(const FusedKCase& c, uint64_t seed, int64_t budget, FusedKCase* out);

// One tensor of a launch as a view into the arena: element [i, j, k] at
// offset_bytes + (i * strides[0] + j * strides[1] + k * strides[2]) * size.
struct DoorTensor {
  std::string name;
  bool output = false;
  std::string dtype;  // "int64", "int32", "f32", "bf16", "uint8" (the caches' bytes)
  std::vector<int64_t> shape, strides;  // strides in elements
  int64_t offset_bytes = 0;
};

// After validate_fused_k_case: the arena's size and its tensors, in the
// arena's order (the op's vocabulary, ops/fused_k/op.cc). The caches are
// [blocks, block_size, entry bytes] uint8 with their padded strides.
int64_t door_arena_bytes(const FusedKCase& c);
std::vector<DoorTensor> door_tensors(const FusedKCase& c);

// The arena as a run starts: poison 0 (A) or 1 (B). After validation.
std::vector<uint8_t> door_arena(const FusedKCase& c, int poison);

// The oracle's arena for the run that starts from `poison`: "" and *out
// set, or why the oracle refused the case. `profile` "" or "qcheck".
std::string door_expected(const FusedKCase& c, const std::string& profile, int poison, std::vector<uint8_t>* out);

// "" when fused_k's oracle judges under `profile` ("" or "qcheck"), else
// the line saying so.
std::string door_profile_error(const std::string& profile);

struct DoorVerdict {
  int exit_code = 0;  // 0 pass, 1 mismatch, 3 the oracle refused a valid case
  // Every mismatch's "tensor/part/class", most severe first: a gap between
  // tensors written ("guard/after_NAME/guard-written"), an input changed
  // ("NAME/NAME/input-changed"), an output that differs ("NAME/NAME/differs")
  // or still holds its poison in every differing byte ("NAME/NAME/unwritten").
  std::vector<std::string> signatures;
  std::string text;  // the report, lines ending in '\n'
  // {"verdict", "exit_code", "op", "backend", "judged_under", "case", "signature", "counts": [{"tensor",
  // "part", "class", "count": differing bytes in both runs}], "mismatches": [per run and signature]}
  std::string json;
};

// The verdict on the arenas a kernel left: run_a from poison A and, when
// not null, run_b from poison B, each door_arena_bytes(c) long. At most
// `max_listed` mismatches listed in the text (0: 20). After validation and
// door_profile_error.
DoorVerdict door_judge(const FusedKCase& c, const std::string& kernel, const uint8_t* run_a, const uint8_t* run_b,
                       size_t max_listed);

}  // namespace qcheck::fused_k
