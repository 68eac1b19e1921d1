// qcheck-rsqrt-table generate FILE: sweeps rsqrt.approx.ftz.f32 on the GPU
//   over [0.5, 2) (exponent parity 0 and 1, every mantissa), writes each
//   result's difference from spec::rsqrt_rn as a two-bit correction
//   (numerics/rsqrt_approx.h), and prints how often each difference occurs.
//   A difference outside -2..+1 ulp stops it: the table cannot hold it.
// qcheck-rsqrt-table check FILE: every f32 through rsqrt.approx.ftz.f32,
//   rsqrt.approx.f32 and CUDA's rsqrtf on the GPU, each compared with
//   spec::rsqrt_approx_with(FILE's table, x, ftz) for ftz on and off;
//   mismatches counted by class of input, the first ones printed. Exit 0
//   when the two instructions equal their models on every input.
#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "numerics/float_bits.h"
#include "numerics/rsqrt.h"
#include "numerics/rsqrt_approx.h"
#include "tests/gpu/device_sweeps.h"

namespace {

using qcheck::bits_of;
using qcheck::float_from_bits;
using qcheck::gpu_test::Sweep;
using qcheck::gpu_test::SweepRange;

int generate(const char* path) {
  // [0.5, 1) then [1, 2): the index (exponent & 1) << 23 | mantissa is the
  // position in this range, since 126 is even and 127 odd.
  const SweepRange range{0x3F000000u, 1, qcheck::spec::kRsqrtApproxEntries};
  std::vector<uint32_t> results;
  const std::string error = run_device_sweep(Sweep::kRsqrtApproxFtz, range, 0.0f, &results);
  if (!error.empty()) {
    std::fprintf(stderr, "qcheck-rsqrt-table: %s\n", error.c_str());
    return 2;
  }
  // Every difference is counted first (-8..+8, the rest at the ends), so a
  // device whose error the two bits cannot hold still shows its histogram.
  std::vector<uint8_t> table(qcheck::spec::kRsqrtApproxTableBytes, 0);
  uint64_t histogram[17] = {};
  int printed = 0;
  for (uint64_t i = 0; i < range.count; ++i) {
    const uint32_t x = sweep_value_bits(range, i);
    const int64_t difference =
        int64_t{results[i]} - int64_t{bits_of(qcheck::spec::rsqrt_rn(float_from_bits(x)))};
    ++histogram[std::clamp<int64_t>(difference, -8, 8) + 8];
    if ((difference < -2 || difference > 1) && printed++ < 10)
      std::fprintf(stderr, "qcheck-rsqrt-table: x = 0x%08X: the hardware's 0x%08X is %" PRId64
                   " ulp from the correctly rounded value, outside -2..+1\n", x, results[i], difference);
    const uint32_t index = qcheck::spec::rsqrt_approx_index(x);
    if (index != i) {
      std::fprintf(stderr, "qcheck-rsqrt-table: index of 0x%08X is %u, not %" PRIu64 "\n", x, index, i);
      return 1;
    }
    if (difference >= -2 && difference <= 1)
      table[i / 4] |= static_cast<uint8_t>((difference + 2) << (2 * (i % 4)));
  }
  std::printf("rsqrt.approx.ftz.f32 over [0.5, 2), %" PRIu64 " inputs, minus RN(x^-1/2) in ulp:", range.count);
  for (int d = -8; d <= 8; ++d)
    if (histogram[d + 8] != 0) std::printf(" %s%d: %" PRIu64, d == -8 || d == 8 ? "beyond " : "", d, histogram[d + 8]);
  std::printf("\n");
  if (printed != 0) {
    std::fprintf(stderr, "qcheck-rsqrt-table: %d inputs outside -2..+1: no table written\n", printed);
    return 1;
  }
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(table.data()), static_cast<std::streamsize>(table.size()));
  if (!out) {
    std::fprintf(stderr, "qcheck-rsqrt-table: cannot write %s\n", path);
    return 2;
  }
  std::printf("wrote %s (%zu bytes)\n", path, table.size());
  return 0;
}

// Input classes, in the order the counts print.
constexpr const char* kClasses[] = {"normal", "negative normal", "subnormal", "negative subnormal",
                                    "zero", "+Inf", "-Inf", "NaN"};
constexpr int kClassCount = 8;

int class_of(uint32_t x) {
  const uint32_t exponent = (x >> 23) & 0xFF, mantissa = x & 0x7FFFFF;
  const bool negative = x >> 31;
  if (exponent == 0xFF) return mantissa ? 7 : negative ? 6 : 5;
  if (exponent == 0) return mantissa == 0 ? 4 : negative ? 3 : 2;
  return negative ? 1 : 0;
}

// Mismatches by class with the first three of each; one per thread (no lock
// in the loop: a variant that differs almost everywhere counts 2^32 of them),
// merged in thread order after the chunk.
struct Tally {
  uint64_t counts[kClassCount] = {};
  std::vector<std::string> first[kClassCount];
  void add(uint32_t x, uint32_t got, uint32_t want) {
    const int c = class_of(x);
    if (++counts[c] <= 3) {
      char line[160];
      std::snprintf(line, sizeof line, "    %s x = 0x%08X: device 0x%08X, model 0x%08X", kClasses[c], x, got, want);
      first[c].push_back(line);
    }
  }
  void merge(const Tally& other) {
    for (int c = 0; c < kClassCount; ++c) {
      counts[c] += other.counts[c];
      for (const std::string& line : other.first[c])
        if (first[c].size() < 3) first[c].push_back(line);
    }
  }
  uint64_t total() const {
    uint64_t sum = 0;
    for (uint64_t n : counts) sum += n;
    return sum;
  }
};

int check(const char* path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> table((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (table.size() != qcheck::spec::kRsqrtApproxTableBytes) {
    std::fprintf(stderr, "qcheck-rsqrt-table: %s holds %zu bytes, not %zu\n", path, table.size(),
                 qcheck::spec::kRsqrtApproxTableBytes);
    return 2;
  }
  const struct {
    Sweep sweep;
    const char* name;
    bool must_match_ftz, must_match_full;
  } variants[] = {{Sweep::kRsqrtApproxFtz, "rsqrt.approx.ftz.f32", true, false},
                  {Sweep::kRsqrtApprox, "rsqrt.approx.f32", false, true},
                  {Sweep::kRsqrtf, "rsqrtf (nvcc, no fast-math)", false, false}};
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  int status = 0;
  for (const auto& v : variants) {
    Tally vs_ftz, vs_full;
    const uint64_t chunk = uint64_t{1} << 28;
    for (uint64_t first = 0; first < (uint64_t{1} << 32); first += chunk) {
      std::vector<uint32_t> results;
      const std::string error =
          run_device_sweep(v.sweep, SweepRange{static_cast<uint32_t>(first), 1, chunk}, 0.0f, &results);
      if (!error.empty()) {
        std::fprintf(stderr, "qcheck-rsqrt-table: %s\n", error.c_str());
        return 2;
      }
      std::vector<Tally> ftz_parts(threads), full_parts(threads);
      std::vector<std::thread> pool;
      for (unsigned t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
          for (uint64_t i = t; i < chunk; i += threads) {
            const uint32_t x = static_cast<uint32_t>(first + i);
            const uint32_t ftz = bits_of(qcheck::spec::rsqrt_approx_with(table.data(), float_from_bits(x), true));
            const uint32_t full = bits_of(qcheck::spec::rsqrt_approx_with(table.data(), float_from_bits(x), false));
            if (results[i] != ftz) ftz_parts[t].add(x, results[i], ftz);
            if (results[i] != full) full_parts[t].add(x, results[i], full);
          }
        });
      }
      for (std::thread& t : pool) t.join();
      for (unsigned t = 0; t < threads; ++t) {
        vs_ftz.merge(ftz_parts[t]);
        vs_full.merge(full_parts[t]);
      }
    }
    for (const auto* pair : {&vs_ftz, &vs_full}) {
      const bool ftz = pair == &vs_ftz;
      std::printf("%s against the model with ftz %s: %" PRIu64 " of 2^32 differ\n", v.name, ftz ? "on" : "off",
                  pair->total());
      for (int c = 0; c < kClassCount; ++c) {
        if (pair->counts[c] == 0) continue;
        std::printf("  %s: %" PRIu64 "\n", kClasses[c], pair->counts[c]);
        for (const std::string& line : pair->first[c]) std::printf("%s\n", line.c_str());
      }
      if (pair->total() != 0 && (ftz ? v.must_match_ftz : v.must_match_full)) status = 1;
    }
  }
  std::printf(status == 0 ? "PASS: both instructions equal their models on every f32\n"
                          : "FAIL: an instruction and its model differ\n");
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "generate") == 0) return generate(argv[2]);
  if (argc == 3 && std::strcmp(argv[1], "check") == 0) return check(argv[2]);
  std::fprintf(stderr, "usage: qcheck-rsqrt-table generate FILE | check FILE\n");
  return 2;
}
