// qcheck-bench-oracle: how fast the CPU oracle runs, scalar spec vs Highway
// SIMD rows, on a production-shaped fused_q, and how long one 2^32
// conversion sweep of the SIMD rows takes per target. The launch is a Case
// whose tensors the harness builds (fuzz/buffers/tensors.h), like every other run.
// Targets (task brief): SIMD >= 8x scalar; a 2^32 sweep < 10 s per target on
// 2 cores. Single-threaded oracle runs; median of --runs runs.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "fuzz/buffers/tensors.h"
#include "fuzz/case/case.h"
#include "fuzz/verdict/compare.h"
#include "fuzz/verdict/report.h"
#include "fuzz/verdict/verdict.h"
#include "numerics/float_bits.h"
#include "numerics/profile.h"
#include "numerics/row_ops.h"
#include "numerics/simd_rows.h"
#include "ops/fused_q/oracle/fused_q_oracle.h"
#include "tools/common/cli.h"

namespace qcheck::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int64_t tokens = 16384;
  int64_t scalar_tokens = 2048;
  int runs = 5;
  bool sweeps = true;
};

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "qcheck-bench-oracle: %s\n", message.c_str());
  std::exit(2);
}

int64_t parse_count(const char* flag, const char* text, int64_t lo, int64_t hi) {
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || value < lo || value > hi) {
    usage_error(std::string(flag) + " = '" + text + "' must be an integer in [" + std::to_string(lo) +
                ", " + std::to_string(hi) + "]");
  }
  return value;
}

constexpr const char* kUsage = "usage: qcheck-bench-oracle [--tokens N] [--scalar-tokens N] [--runs N] [--no-sweeps]\n";

Options parse(int argc, char** argv) {
  if (const int done = qcheck::cli::help_or_version(argc, argv, "qcheck-bench-oracle", kUsage); done >= 0) {
    std::exit(done);
  }
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    const bool has_value = i + 1 < argc;
    if (flag == "--tokens" && has_value) {
      o.tokens = parse_count("--tokens", argv[++i], 1, 1 << 20);
    } else if (flag == "--scalar-tokens" && has_value) {
      o.scalar_tokens = parse_count("--scalar-tokens", argv[++i], 1, 1 << 20);
    } else if (flag == "--runs" && has_value) {
      o.runs = int(parse_count("--runs", argv[++i], 1, 100));
    } else if (flag == "--no-sweeps") {
      o.sweeps = false;
    } else {
      std::exit(qcheck::cli::unknown_option("qcheck-bench-oracle", flag, kUsage));
    }
  }
  if (o.scalar_tokens > o.tokens) usage_error("--scalar-tokens must not exceed --tokens");
  return o;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// A fused_q launch shaped like production (GLM-5 at TP4, SEMANTICS.md "Real
// dimensions" and "What fused_q does"): T tokens, H = 16, NI = 32, D = 128,
// R = 64, L = 512, bf16 packed query path, fp32 cos/sin caches of 32768 rows,
// NeoX indexer; q_pe a view of a wider [T, H, 192] buffer, head-major ql_nope
// (strides L, T*L), index weights with row stride NI + D (the case's row
// padding is D); positions scattered over the cache; noise of magnitude 1
// with real rotary cos/sin (the kNormal recipe). Scales: production's.
// With `aliased`, ql_nope is query_out's front (seed 000's production: the
// absorbed bmm writes into the packed buffer, so nothing is copied);
// without, ql_nope is a separate head-major tensor that is copied.
Case production_case(int64_t tokens, bool aliased) {
  Case c;  // the defaults are production's dims, path, dtypes and NeoX indexer
  c.num_tokens = tokens;
  c.q_pe_layout = Layout::kWideRowView;
  c.ql_nope_layout = aliased ? Layout::kContiguous : Layout::kHeadMajor;
  c.alias = aliased ? AliasMode::kExactFront : AliasMode::kNone;
  c.weights_layout = Layout::kPaddedRows;
  c.row_padding = c.index_dim;
  c.cache_rows = 32768;
  c.positions = PositionsRecipe::kRandom;
  c.values = ValueRecipe::kNormal;
  set_default_scales(c);
  c.seed = 20261129;
  return c;
}

// Bytes a launch of `tokens` tokens must read (positions, two cache rows per
// token, q_pe, ql_nope, index_q, weights) and write (query_out, index_q_fp8,
// weights out); padding and unread columns excluded.
uint64_t input_bytes(const Case& c, int64_t tokens) {
  const uint64_t per_token = 8 + 2 * 4 * uint64_t(c.rope_dim) +
                             2 * uint64_t(c.mqa_heads * (c.rope_dim + c.nope_dim)) +
                             2 * uint64_t(c.indexer_heads * c.index_dim) + 4 * uint64_t(c.indexer_heads);
  return per_token * uint64_t(tokens);
}

uint64_t output_bytes(const Case& c, int64_t tokens) {
  const uint64_t per_token = 2 * uint64_t(c.mqa_heads * (c.nope_dim + c.rope_dim)) +
                             uint64_t(c.indexer_heads * c.index_dim) + 4 * uint64_t(c.indexer_heads);
  return per_token * uint64_t(tokens);
}

// A case the harness refuses (say, more tokens than its 1 GiB memory cap
// holds): one line naming the flag and the limit, exit 2.
void check_case(const Case& c, const char* flag) {
  const std::string error = validate_case(c);
  if (!error.empty()) usage_error(std::string(flag) + " = " + std::to_string(c.num_tokens) + ": " + error);
}

// Median seconds of `runs` oracle runs over the first `tokens` tokens of the
// launch `args` (its num_tokens lowered; strides stay those of the full set).
double time_oracle(FusedQArgs args, int64_t tokens, const RowOps& ops, int runs) {
  const Profile profile = qcheck_profile();
  args.num_tokens = tokens;
  std::vector<double> seconds;
  for (int r = 0; r < runs; ++r) {
    const auto start = Clock::now();
    const std::string error = run_fused_q_oracle(args, profile, ops);
    seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    if (!error.empty()) usage_error("the oracle refused the launch: " + error);
  }
  return median(seconds);
}

// Row functions that do nothing: the oracle run with them measures what the
// composition itself costs (ql_nope copy, cache rows, weights, loops), the
// floor that no row implementation can go below. Diagnostic only: its
// outputs are meaningless.
void skip_f32_from_bf16(const uint16_t*, float*, size_t) {}
void skip_bf16_from_f32(const float*, uint16_t*, size_t, Bf16Nan) {}
void skip_quantize(const float*, float, uint8_t*, size_t, E4m3Overflow) {}
float skip_amax(const float*, size_t) { return 1.0f; }
void skip_rope(const float*, const float*, const float*, size_t, RopeStyle, Contraction, Contraction, float*) {}
void skip_rope_bf16_rows(const uint16_t*, size_t, const float*, const float*, size_t, RopeStyle, Contraction,
                         Contraction, Bf16Nan, uint16_t*, size_t, size_t) {}
void skip_indexer_rows(const uint16_t*, size_t, const float*, const float*, size_t, size_t, RopeStyle,
                       const Profile&, uint8_t*, size_t, float* scales, size_t rows) {
  for (size_t r = 0; r < rows; ++r) scales[r] = 1.0f;
}
const RowOps kNoRowWork{"no-row-work",       skip_f32_from_bf16, skip_bf16_from_f32, skip_quantize,
                        skip_amax,           skip_rope,          skip_rope_bf16_rows, skip_indexer_rows,
                        nullptr};

// The row work of one token as the oracle calls it (the 32 indexer rows:
// widen 128, NeoX RoPE 64, amax 128, quantize 128; the 16 MQA q_pe rows:
// widen 64, interleaved RoPE 64, narrow 64) on cache-resident rows,
// repeated: what the rows cost without the memory traffic of a 16k-token
// launch. A dispatching table is resolved once, as the oracle does.
// Returns microseconds per token.
double hot_row_work_us(const RowOps& table, int repeats) {
  const RowOps& ops = resolved(table);
  const Profile profile = qcheck_profile();
  std::vector<float> cos_sin(64), scales(32);
  std::vector<uint16_t> index_q(32 * 128), q_pe(16 * 64), q_out(16 * 64);
  std::vector<uint8_t> codes(32 * 128);
  for (size_t i = 0; i < index_q.size(); ++i) index_q[i] = uint16_t(0x3F00 + 3 * (i % 128));
  for (size_t i = 0; i < q_pe.size(); ++i) q_pe[i] = uint16_t(0x3F00 + 5 * (i % 64));
  for (int i = 0; i < 32; ++i) {
    cos_sin[size_t(i)] = 0.75f - 0.01f * float(i);
    cos_sin[size_t(32 + i)] = 0.25f + 0.01f * float(i);
  }
  float sink = 0;
  const auto start = Clock::now();
  for (int r = 0; r < repeats; ++r) {
    ops.indexer_rows(index_q.data(), 128, cos_sin.data(), cos_sin.data() + 32, 128, 64, RopeStyle::kNeox, profile,
                     codes.data(), 128, scales.data(), 32);
    ops.rope_bf16_rows(q_pe.data(), 64, cos_sin.data(), cos_sin.data() + 32, 64, RopeStyle::kInterleaved,
                       profile.mqa_bf16_r1, profile.mqa_bf16_r2, profile.bf16_nan, q_out.data(), 64, 16);
    sink += scales[size_t(r % 32)] + codes[size_t(r % 4096)] + q_out[size_t(r % 1024)];
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (sink == -1.0f) std::printf(" ");  // keeps the work observable
  return seconds / repeats * 1e6;
}

// One pass of a row function over all 2^32 f32 patterns on `threads` threads.
// Returns seconds; the checksum keeps the work observable.
template <typename Out, class Row>
double time_sweep(int threads, const Row& row, uint64_t* checksum) {
  constexpr size_t kBlock = size_t(1) << 16;
  std::atomic<uint64_t> next{0}, sum{0};
  const auto start = Clock::now();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      std::vector<float> in(kBlock);
      std::vector<Out> out(kBlock);
      uint64_t local = 0;
      for (uint64_t block = next++; block < (uint64_t(1) << 16); block = next++) {
        for (size_t i = 0; i < kBlock; ++i) in[i] = float_from_bits(uint32_t(block << 16 | i));
        row(in.data(), out.data(), kBlock);
        local += out[block & (kBlock - 1)];
      }
      sum += local;
    });
  }
  for (std::thread& w : workers) w.join();
  *checksum += sum;
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void run_sweeps() {
  std::printf("\n2^32 SIMD conversion sweeps (pattern generation included), seconds:\n");
  std::printf("%-8s | %-22s | %-22s\n", "target", "f32->e4m3 1 / 2 threads", "f32->bf16 1 / 2 threads");
  uint64_t checksum = 0;
  for (int64_t target : simd_row_targets()) {
    const RowOps* ops = simd_row_ops_for_target(target);
    if (ops == nullptr) continue;
    const auto e4m3 = [ops](const float* in, uint8_t* out, size_t n) {
      ops->quantize_row(in, 1.0f, out, n, E4m3Overflow::kSatFinite);
    };
    const auto bf16 = [ops](const float* in, uint16_t* out, size_t n) {
      ops->bf16_from_f32_row(in, out, n, Bf16Nan::k7FFF);
    };
    const double e1 = time_sweep<uint8_t>(1, e4m3, &checksum), e2 = time_sweep<uint8_t>(2, e4m3, &checksum);
    const double b1 = time_sweep<uint16_t>(1, bf16, &checksum), b2 = time_sweep<uint16_t>(2, bf16, &checksum);
    std::printf("%-8s | %9.2f / %-10.2f | %9.2f / %-10.2f\n", ops->name, e1, e2, b1, b2);
    std::fflush(stdout);
  }
  std::printf("(checksum %llu)\n", static_cast<unsigned long long>(checksum));
}

// Scalar vs SIMD on the launch of the first `tokens` tokens (the same rows
// as the timed launch: a row's values do not depend on T): the scalar set is
// the expected one, the SIMD table fills two sets (poisons A and B), and
// fuzz/verdict/compare.h checks every byte of every buffer, guards included.
bool tables_agree(int64_t tokens, bool aliased) {
  const Case c = production_case(tokens, aliased);
  check_case(c, "--scalar-tokens");
  const Profile profile = qcheck_profile();
  std::string error;
  const TensorSet expected = expected_tensors(c, profile, scalar_row_ops(), Poison::kA, &error);
  if (!error.empty()) usage_error("the oracle refused the launch: " + error);
  const TensorSet simd_a = expected_tensors(c, profile, simd_row_ops(), Poison::kA, &error);
  if (!error.empty()) usage_error("the oracle refused the launch: " + error);
  const TensorSet simd_b = expected_tensors(c, profile, simd_row_ops(), Poison::kB, &error);
  if (!error.empty()) usage_error("the oracle refused the launch: " + error);
  const Report report = compare_runs(c, expected, simd_a, simd_b, 4);
  std::printf("outputs of the first %lld tokens, scalar vs SIMD: %s\n", (long long)tokens,
              report.passed() ? "bit-identical" : "DIFFERENT");
  if (!report.passed()) std::printf("%s", report_text(report).c_str());
  return report.passed();
}

// Times one variant of the production launch: scalar vs SIMD rows, and the
// floor the composition costs with no row work at all. Returns whether the
// two tables gave the same bytes.
bool measure(const Options& o, bool aliased) {
  const Case c = production_case(o.tokens, aliased);
  check_case(c, "--tokens");
  std::printf("\n== fused_q oracle: T = %lld, H = %lld, NI = %lld, D = %lld, R = %lld, L = %lld, bf16 packed path, %s, "
              "f32 caches, NeoX indexer, q_pe row 192, weights row D + NI\n",
              (long long)c.num_tokens, (long long)c.mqa_heads, (long long)c.indexer_heads,
              (long long)c.index_dim, (long long)c.rope_dim, (long long)c.nope_dim,
              aliased ? "ql_nope aliased in q_out's front (production, seed 000)"
                      : "ql_nope head-major and copied into the front");

  // Bit-identity of the two tables on the scalar prefix, before timing.
  const bool identical = tables_agree(o.scalar_tokens, aliased);

  TensorSet set = build_tensor_set(c, Poison::kA);
  const FusedQArgs launch = make_fused_q_args(c, set);
  const double simd = time_oracle(launch, o.tokens, simd_row_ops(), o.runs);
  const double scalar = time_oracle(launch, o.scalar_tokens, scalar_row_ops(), std::max(1, o.runs / 2 + 1));
  const double simd_rate = double(o.tokens) / simd, scalar_rate = double(o.scalar_tokens) / scalar;
  const auto gbps = [&](int64_t tokens, double seconds, bool with_output) {
    const double bytes = double(input_bytes(c, tokens) + (with_output ? output_bytes(c, tokens) : 0));
    return bytes / seconds * 1e-9;
  };
  std::printf("\n%-7s | %7s | %9s | %13s | %13s | %15s\n", "rows", "tokens", "median s", "tokens/s",
              "input GB/s", "in+out GB/s");
  std::printf("%-7s | %7lld | %9.4f | %13.0f | %13.3f | %15.3f\n", "scalar", (long long)o.scalar_tokens,
              scalar, scalar_rate, gbps(o.scalar_tokens, scalar, false), gbps(o.scalar_tokens, scalar, true));
  std::printf("%-7s | %7lld | %9.4f | %13.0f | %13.3f | %15.3f\n", "simd", (long long)o.tokens, simd,
              simd_rate, gbps(o.tokens, simd, false), gbps(o.tokens, simd, true));
  std::printf("SIMD / scalar throughput: %.2fx (target >= 8x)\n", simd_rate / scalar_rate);
  const double floor = time_oracle(launch, o.tokens, kNoRowWork, o.runs);
  std::printf("composition floor (row functions replaced by no-ops): %.2f us/token; SIMD rows add %.2f us/token, "
              "scalar rows %.2f us/token\n",
              floor / double(o.tokens) * 1e6, (simd - floor) / double(o.tokens) * 1e6,
              (scalar / double(o.scalar_tokens) - floor / double(o.tokens)) * 1e6);

  const double hot_scalar = hot_row_work_us(scalar_row_ops(), 2000);
  const double hot_simd = hot_row_work_us(simd_row_ops(), 20000);
  std::printf("row work of one token on cache-resident rows: scalar %.2f us, SIMD %.2f us (%.2fx)\n", hot_scalar,
              hot_simd, hot_scalar / hot_simd);

  return identical;
}

int run(const Options& o) {
  std::printf("SIMD targets: %s (dispatching to %s)\n", simd_row_target_names().c_str(),
              simd_row_ops_for_target(simd_row_dispatched_target())->name);
  const bool identical_aliased = measure(o, true);
  const bool identical_copied = measure(o, false);
  const bool identical = identical_aliased && identical_copied;
  if (o.sweeps) run_sweeps();
  return identical ? 0 : 1;
}

}  // namespace
}  // namespace qcheck::bench

int main(int argc, char** argv) { return qcheck::bench::run(qcheck::bench::parse(argc, argv)); }
