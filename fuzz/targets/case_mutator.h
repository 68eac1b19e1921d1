// The structure-aware mutator of the fused_q fuzz target: it works on Cases,
// not on bytes, so nearly every input libFuzzer runs is a valid case that
// reaches the kernel (a byte flip in the binary form is mostly refused by the
// strict decoder or by validate_case).
//
// A mutation changes one to three fields to values that matter for fused_q
// (dims 1, 2, 15, 16, 17, 31, 33 and odd heads; every path, flag, style, dtype,
// layout, alias mode and recipe; interesting fp32 patterns for the scales; a
// real model's dims, rarely), then repair_case makes the case valid again and
// small enough for throughput. Everything is a pure function of the inputs
// and the generator state, so a libFuzzer seed reproduces a run.
#pragma once

#include <cstdint>

#include "fuzz/case.h"
#include "fuzz/prng.h"

namespace qcheck::fuzzing {

// The size of case the mutator makes: bytes of all tensors together (guards
// included, as plan_tensors counts them) and caps on the dims that cost the
// most time per input.
struct SizeCap {
  uint64_t bytes;
  int64_t tokens;
  int64_t heads;       // H and NI each
  int64_t index_dim;   // D
  int64_t nope_dim;    // L
  int64_t cache_rows;  // P
};

// Most cases stay within `usual`; one mutation in kRareLargeOneIn may go up
// to `large`.
struct SizeBudget {
  SizeCap usual;
  SizeCap large;
};

// The default: usual T <= 64, H and NI <= 16, D and L <= 128 (1 MiB); large
// up to a few tokens of the real models' dims and positions past 8192.
constexpr SizeBudget kDefaultBudget = {{uint64_t(1) << 20, 64, 16, 128, 128, 256},
                                       {uint64_t(1) << 24, 1024, 128, 512, 1024, 65536}};
// Tiny cases for many executions under ASan (the proof-of-power runs): every
// structural situation (tails, odd heads, pass-through, padding, the alias,
// every recipe) still occurs, at T <= 33, H and NI <= 5, D <= 32, L <= 16.
constexpr SizeBudget kTinyBudget = {{uint64_t(1) << 16, 33, 5, 32, 16, 64},
                                    {uint64_t(1) << 18, 65, 9, 64, 64, 256}};
// The default's usual sizes only (T <= 64 and the rest as above): the
// budget the exec/s targets of cases up to 64 tokens are measured with.
constexpr SizeBudget kUsualBudget = {kDefaultBudget.usual, kDefaultBudget.usual};
constexpr uint64_t kRareLargeOneIn = 32;

// The budget of a size class by name ("default", "usual", "tiny": the fuzz
// target's --case-size and the C API's size); nullptr for another name.
const SizeBudget* case_size_budget(const char* name);

// A small valid case whose every field depends on `rng` (used when the
// bytes libFuzzer hands over do not decode, e.g. the empty first input).
Case seed_case(Xoshiro256& rng, const SizeBudget& budget = kDefaultBudget);

// Changes one to three fields (see the file comment), then repairs. The
// result is valid (validate_case returns "") and within one of the budgets.
void mutate_case(Case& c, Xoshiro256& rng, const SizeBudget& budget = kDefaultBudget);

// Each field from `a` or from `b` (chosen by `rng`), then repaired.
Case cross_over(const Case& a, const Case& b, Xoshiro256& rng, const SizeBudget& budget = kDefaultBudget);

// Makes a decoded case valid with the smallest changes: enums and layouts
// into their allowed sets, dims into their ranges and multiples (R even and
// <= D, D a multiple of 16, L of 8), the alias only on the bf16 packed path
// with a contiguous ql_nope, a usable q_scale (a power of two under a
// profile that models div.full), a known profile; then caps T, heads and P
// and shrinks the case until its tensors fit in `cap.bytes`.
void repair_case(Case& c, const SizeCap& cap);

// Interesting fp32 bit patterns for q_scale and the weight scales: 1, 0.37
// (vLLM's test), powers of two, one ulp either side of 1, the smallest and
// largest normals, 448 and its inverse, and (for the weight scales, which
// need not be positive) zeros, infinities and NaN.
const uint32_t* interesting_f32_bits(size_t* count);

}  // namespace qcheck::fuzzing
