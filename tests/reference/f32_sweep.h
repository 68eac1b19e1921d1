// Sweeps over f32 bit patterns, spread over threads, with one verdict per
// sweep: mismatches are counted and the first few are kept for the message
// (an assertion per element would flood the log and cost more than the check).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace qcheck::test {

// Both cores of the CI machine (TOOLCHAIN.md: 2 cores, ctest -j2).
constexpr int kSweepThreads = 2;
// Patterns handed to a check at a time.
constexpr size_t kSweepBlock = size_t(1) << 16;

struct Mismatch {
  uint32_t input;
  uint32_t expected;
  uint32_t actual;
};

// The mismatches one thread saw; merged after the threads join.
class MismatchLog {
 public:
  void add(uint32_t input, uint32_t expected, uint32_t actual);
  void merge(const MismatchLog& other);
  uint64_t count() const { return count_; }
  // The first mismatches by input pattern, one line each, with the outputs
  // printed as `output_hex_digits` hex digits.
  std::string describe(int output_hex_digits) const;

 private:
  static constexpr size_t kKept = 8;
  uint64_t count_ = 0;
  std::vector<Mismatch> first_;  // sorted by input, at most kKept
};

// Which f32 patterns a sweep visits.
struct F32SweepPlan {
  bool exhaustive = true;          // all 2^32 patterns
  std::vector<uint32_t> patterns;  // otherwise these, sorted and unique
  uint64_t size() const { return exhaustive ? (uint64_t(1) << 32) : patterns.size(); }
  std::string describe() const;
};

// Every stride-th pattern plus special_f32_patterns() (row_values.h).
F32SweepPlan strided_f32_sweep_plan(uint32_t stride);
// All 2^32 when the build sets QCHECK_EXHAUSTIVE=1, else strided by 4099
// (a prime, so the sample walks through every residue of the low bits).
F32SweepPlan default_f32_sweep_plan();

// What one compared implementation saw: its mismatches and the thread-time
// spent in it (the check measures what it wants to attribute).
struct Tally {
  MismatchLog mismatches;
  double seconds = 0;
};

struct SweepOutcome {
  uint64_t checked = 0;
  std::vector<Tally> tallies;  // one per compared implementation, merged over threads
  double seconds = 0;          // wall time of the whole sweep
};

// check(values, count, tallies) compares `implementations` implementations
// with the spec on values[0..count) and logs every difference in
// tallies[implementation]. Runs on `threads` std::threads.
using F32Check = std::function<void(const float* values, size_t count, Tally* tallies)>;
SweepOutcome run_f32_sweep(const F32SweepPlan& plan, int threads, size_t implementations,
                           const F32Check& check);

// Calls body(block, thread) for every block in [0, blocks), blocks handed
// out in order to `threads` threads.
void parallel_blocks(uint64_t blocks, int threads,
                     const std::function<void(uint64_t block, int thread)>& body);

// "0x%0*X" without iostream state.
std::string hex(uint64_t value, int digits);

}  // namespace qcheck::test
