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

#include "core/random/prng.h"
#include "fuzz/case/case.h"

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
// to `large`. With limit_cases, a fuzz loop also runs now and then a case at
// the limits of the hardware (limit_case).
struct SizeBudget {
  SizeCap usual;
  SizeCap large;
  bool limit_cases = false;
  // A fuzz loop on a backend that can race (Backend::can_race) runs a race
  // case now and then (race_case); the budgets whose large cases hold one.
  bool race_cases = false;
};

// The default: usual T <= 64, H and NI <= 16, D and L <= 128 (1 MiB); large
// up to a few tokens of the real models' dims and positions past 8192.
constexpr SizeBudget kDefaultBudget = {{uint64_t(1) << 20, 64, 16, 128, 128, 256},
                                       {uint64_t(1) << 24, 1024, 128, 512, 1024, 65536}, false, true};
// Tiny cases for many executions under ASan (the proof-of-power runs): every
// structural situation (tails, odd heads, pass-through, padding, the alias,
// every recipe) still occurs, at T <= 33, H and NI <= 5, D <= 32, L <= 16.
constexpr SizeBudget kTinyBudget = {{uint64_t(1) << 16, 33, 5, 32, 16, 64},
                                    {uint64_t(1) << 18, 65, 9, 64, 64, 256}};
// The default's usual sizes only (T <= 64 and the rest as above): the
// budget the exec/s targets of cases up to 64 tokens are measured with.
constexpr SizeBudget kUsualBudget = {kDefaultBudget.usual, kDefaultBudget.usual};
constexpr uint64_t kRareLargeOneIn = 32;
// The default's sizes and the limit cases: for a GPU, whose kernels meet
// limits that no small case reaches (the grid's 65535 in y and z, 32-bit
// offsets, races that show only under load). A limit case holds up to about
// 4.5 GB of tensors and the verdict keeps three sets: a host of 16 GB or
// more. The campaign gives it to one GPU worker (run_campaign.sh).
constexpr SizeBudget kLimitBudget = {kDefaultBudget.usual, kDefaultBudget.large, true, true};

// The budget of a size class by name ("default", "usual", "tiny", "limit":
// the fuzz target's --case-size and the C API's size); nullptr for another name.
const SizeBudget* case_size_budget(const char* name);

// A small valid case whose every field depends on `rng` (used when the
// bytes libFuzzer hands over do not decode, e.g. the empty first input).
Case seed_case(Xoshiro256& rng, const SizeBudget& budget = kDefaultBudget);

// Whether a loop under a budget with limit_cases runs a limit case as its
// execution number `execution` (0-based): at 64, 128, 256, ... 4096, then
// every 4096th, so their cost stays a small share of a long run and the
// first ones come within a few seconds.
bool limit_case_due(int64_t execution);

// Limit case number `index` (0, 1, 2, ...), in turn:
//   0 the grid: T = 65535 .. 65553 at small dims (a grid dimension of 65535
//     blocks, CUDA's limit in y and z, vLLM #52381)
//   1 load: a real model at T = 512 .. 4111 (the staged configurations; the
//     races that show only with many blocks in flight)
//   2 offsets: one fp8 output (index_q_fp8 or the fp8 query_out) whose rows
//     lie 2^26 elements apart, so its view of 65 .. 72 tokens spans more
//     than 2^32 elements: an offset computed in 32 bits wraps (every other
//     tensor contiguous)
// The rest of the case (paths, dtypes, recipes, seed) comes from `rng`.
Case limit_case(Xoshiro256& rng, int64_t index);

// The fuzz loops' one use of the two above: under a budget with
// limit_cases, when execution number `execution` is due, *out = limit case
// number *index, *index counted, true; else false and nothing changed.
bool next_limit_case(const SizeBudget& budget, int64_t execution, Xoshiro256& rng, int64_t* index, Case* out);

// Whether a loop runs a race case as its execution number `execution`:
// 4, 12, 20, ... up to 512, then 520, 552, ... (every 32nd; never an
// execution a limit case is due at).
bool race_case_due(int64_t execution);

// A case aimed at races in a GPU kernel (race_cases.cc): hundreds of token
// blocks (T = 512 .. 1023, a ragged last block), so many blocks are in
// flight at once and each SM runs several; every view contiguous and the
// dims a kernel stages through shared memory (R 32 or 64, D 64 or 128,
// f32 or bf16 caches), so copies into shared memory and the barriers after
// them are on the path; up to 4 MQA and 8 indexer heads, L <= 64, to stay
// near 4 MB of tensors. Paths, recipes, styles and the seed from `rng`.
Case race_case(Xoshiro256& rng);

// The fuzz loops' one use of the two above: on a backend that can race,
// under a budget with race_cases, when execution number `execution` is
// due, *out = a race case and true; else false and nothing changed.
bool next_race_case(const SizeBudget& budget, bool backend_can_race, int64_t execution, Xoshiro256& rng,
                    Case* out);

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
