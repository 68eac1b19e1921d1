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
#include <mutex>
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
  std::vector<uint8_t> table(qcheck::spec::kRsqrtApproxTableBytes, 0);
  uint64_t histogram[4] = {};
  for (uint64_t i = 0; i < range.count; ++i) {
    const uint32_t x = sweep_value_bits(range, i);
    const int64_t difference =
        int64_t{results[i]} - int64_t{bits_of(qcheck::spec::rsqrt_rn(float_from_bits(x)))};
    if (difference < -2 || difference > 1) {
      std::fprintf(stderr, "qcheck-rsqrt-table: x = 0x%08X: the hardware's 0x%08X is %" PRId64
                   " ulp from the correctly rounded value, outside -2..+1\n", x, results[i], difference);
      return 1;
    }
    const uint32_t index = qcheck::spec::rsqrt_approx_index(x);
    if (index != i) {
      std::fprintf(stderr, "qcheck-rsqrt-table: index of 0x%08X is %u, not %" PRIu64 "\n", x, index, i);
      return 1;
    }
    table[i / 4] |= static_cast<uint8_t>((difference + 2) << (2 * (i % 4)));
    ++histogram[difference + 2];
  }
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(table.data()), static_cast<std::streamsize>(table.size()));
  if (!out) {
    std::fprintf(stderr, "qcheck-rsqrt-table: cannot write %s\n", path);
    return 2;
  }
  std::printf("rsqrt.approx.ftz.f32 over [0.5, 2), %" PRIu64 " inputs, minus RN(x^-1/2) in ulp: "
              "-2: %" PRIu64 ", -1: %" PRIu64 ", 0: %" PRIu64 ", +1: %" PRIu64 "\nwrote %s (%zu bytes)\n",
              range.count, histogram[0], histogram[1], histogram[2], histogram[3], path, table.size());
  return 0;
}

const char* class_of(uint32_t x) {
  const uint32_t exponent = (x >> 23) & 0xFF, mantissa = x & 0x7FFFFF;
  const bool negative = x >> 31;
  if (exponent == 0xFF) return mantissa ? "NaN" : negative ? "-Inf" : "+Inf";
  if (exponent == 0) return mantissa == 0 ? "zero" : negative ? "negative subnormal" : "subnormal";
  return negative ? "negative normal" : "normal";
}

struct Tally {
  std::mutex lock;
  std::vector<std::pair<std::string, uint64_t>> counts;  // class, mismatches
  std::vector<std::string> first;
  void add(uint32_t x, uint32_t got, uint32_t want) {
    std::lock_guard<std::mutex> hold(lock);
    const std::string c = class_of(x);
    auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& p) { return p.first == c; });
    if (it == counts.end()) {
      counts.emplace_back(c, 0);
      it = counts.end() - 1;
    }
    if (++it->second <= 3) {
      char line[160];
      std::snprintf(line, sizeof line, "    %s x = 0x%08X: device 0x%08X, model 0x%08X", c.c_str(), x, got, want);
      first.push_back(line);
    }
  }
  uint64_t total() const {
    uint64_t sum = 0;
    for (const auto& p : counts) sum += p.second;
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
      std::vector<std::thread> pool;
      for (unsigned t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
          for (uint64_t i = t; i < chunk; i += threads) {
            const uint32_t x = static_cast<uint32_t>(first + i);
            const uint32_t ftz = bits_of(qcheck::spec::rsqrt_approx_with(table.data(), float_from_bits(x), true));
            const uint32_t full = bits_of(qcheck::spec::rsqrt_approx_with(table.data(), float_from_bits(x), false));
            if (results[i] != ftz) vs_ftz.add(x, results[i], ftz);
            if (results[i] != full) vs_full.add(x, results[i], full);
          }
        });
      }
      for (std::thread& t : pool) t.join();
    }
    for (const auto* pair : {&vs_ftz, &vs_full}) {
      const bool ftz = pair == &vs_ftz;
      std::printf("%s against the model with ftz %s: %" PRIu64 " of 2^32 differ\n", v.name, ftz ? "on" : "off",
                  pair->total());
      for (const auto& c : pair->counts) std::printf("  %s: %" PRIu64 "\n", c.first.c_str(), c.second);
      for (const std::string& line : pair->first) std::printf("%s\n", line.c_str());
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
