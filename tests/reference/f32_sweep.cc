#include "tests/reference/f32_sweep.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "numerics/float_bits.h"
#include "tests/reference/row_values.h"

#ifndef QCHECK_EXHAUSTIVE
#define QCHECK_EXHAUSTIVE 1
#endif

namespace qcheck::test {

void MismatchLog::add(uint32_t input, uint32_t expected, uint32_t actual) {
  ++count_;
  if (first_.size() == kKept && input >= first_.back().input) return;
  const Mismatch m{input, expected, actual};
  first_.insert(std::upper_bound(first_.begin(), first_.end(), m,
                                 [](const Mismatch& a, const Mismatch& b) { return a.input < b.input; }),
                m);
  if (first_.size() > kKept) first_.pop_back();
}

void MismatchLog::merge(const MismatchLog& other) {
  const uint64_t total = count_ + other.count_;
  for (const Mismatch& m : other.first_) add(m.input, m.expected, m.actual);
  count_ = total;
}

std::string MismatchLog::describe(int output_hex_digits) const {
  std::string text;
  for (const Mismatch& m : first_) {
    text += "  input " + hex(m.input, 8) + " (" + std::to_string(float_from_bits(m.input)) +
            "): expected " + hex(m.expected, output_hex_digits) + ", got " +
            hex(m.actual, output_hex_digits) + "\n";
  }
  return text;
}

std::string F32SweepPlan::describe() const {
  return exhaustive ? std::string("all 2^32 f32 patterns")
                    : std::to_string(patterns.size()) + " f32 patterns (strided sample plus specials)";
}

F32SweepPlan strided_f32_sweep_plan(uint32_t stride) {
  F32SweepPlan plan;
  plan.exhaustive = false;
  for (uint64_t p = 0; p < (uint64_t(1) << 32); p += stride) plan.patterns.push_back(uint32_t(p));
  const std::vector<uint32_t> specials = special_f32_patterns();
  plan.patterns.insert(plan.patterns.end(), specials.begin(), specials.end());
  std::sort(plan.patterns.begin(), plan.patterns.end());
  plan.patterns.erase(std::unique(plan.patterns.begin(), plan.patterns.end()), plan.patterns.end());
  return plan;
}

F32SweepPlan default_f32_sweep_plan() {
  if (QCHECK_EXHAUSTIVE) return F32SweepPlan{};
  return strided_f32_sweep_plan(4099);
}

void parallel_blocks(uint64_t blocks, int threads,
                     const std::function<void(uint64_t block, int thread)>& body) {
  std::atomic<uint64_t> next{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (uint64_t block = next++; block < blocks; block = next++) body(block, t);
    });
  }
  for (std::thread& worker : workers) worker.join();
}

SweepOutcome run_f32_sweep(const F32SweepPlan& plan, int threads, size_t implementations,
                           const F32Check& check) {
  const auto start = std::chrono::steady_clock::now();
  const uint64_t blocks = (plan.size() + kSweepBlock - 1) / kSweepBlock;
  std::vector<std::vector<Tally>> tallies(threads, std::vector<Tally>(implementations));
  std::vector<std::vector<float>> values(threads, std::vector<float>(kSweepBlock));
  parallel_blocks(blocks, threads, [&](uint64_t block, int thread) {
    float* v = values[thread].data();
    const uint64_t first = block * kSweepBlock;
    const size_t count = size_t(std::min<uint64_t>(kSweepBlock, plan.size() - first));
    if (plan.exhaustive) {
      for (size_t i = 0; i < count; ++i) v[i] = float_from_bits(uint32_t(first + i));
    } else {
      std::memcpy(v, plan.patterns.data() + first, count * sizeof(float));
    }
    check(v, count, tallies[thread].data());
  });
  SweepOutcome outcome;
  outcome.checked = plan.size();
  outcome.tallies.resize(implementations);
  for (const std::vector<Tally>& per_thread : tallies) {
    for (size_t i = 0; i < implementations; ++i) {
      outcome.tallies[i].mismatches.merge(per_thread[i].mismatches);
      outcome.tallies[i].seconds += per_thread[i].seconds;
    }
  }
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return outcome;
}

std::string hex(uint64_t value, int digits) {
  static const char kDigits[] = "0123456789ABCDEF";
  std::string text(size_t(digits), '0');
  for (int i = digits - 1; i >= 0 && value != 0; --i, value >>= 4) text[size_t(i)] = kDigits[value & 15];
  return "0x" + text;
}

}  // namespace qcheck::test
