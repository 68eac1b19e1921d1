// fused_k's CUDA kernel (ops/fused_k/kernels) against the oracle under
// qcheck_fused_k_rules(), bit for bit, over random launches: every role
// combination, index dims 2 .. 512, both RoPE styles, f32 and bf16 caches and
// weights, flat and shuffled indexer caches with both scale words, the four
// MLA formats, padded strides, block sizes 1 .. 256, slots -1 and separate
// index slots, Q widths up to 8192, rows of every magnitude with zeros,
// constants, NaN and Inf. Each launch's tensors sit in one arena, between
// gaps of poison, and the whole arena is compared: a byte written where no
// rule names one (a -1 slot, padding, a row's tail, a gap) is a difference
// too. QCHECK_FUSED_K_CASES sets the number of launches (default 2000);
// QCHECK_FUSED_K_SEED the first seed. Skips without a CUDA device.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "numerics/conversions.h"
#include "numerics/float_bits.h"
#include "ops/fused_k/kernels/fused_k_launch.h"
#include "ops/fused_k/kernels/planted.h"
#include "ops/fused_k/oracle/fused_k_oracle.h"
#include "tests/gpu/device_sweeps.h"

namespace qcheck::fused_k {
namespace {

constexpr int64_t kGap = 256;  // poison bytes before every tensor (and after the last)

int64_t env_or(const char* name, int64_t fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' ? std::strtoll(value, nullptr, 10) : fallback;
}

// One launch's tensors laid out in an arena: offsets first, pointers once
// the arena (host or device) exists.
class Arena {
 public:
  struct Tensor {
    std::string name;
    int64_t offset, bytes;
  };
  int64_t add(const std::string& name, int64_t bytes, int64_t align = 16) {
    size_ = (size_ + kGap + align - 1) / align * align;
    tensors_.push_back({name, size_, bytes});
    size_ += bytes;
    return size_ - bytes;
  }
  int64_t size() const { return size_ + kGap; }
  // The tensor that holds byte `at`, or the gap before it.
  std::string where(int64_t at) const {
    std::string found = "the gap before the first tensor";
    for (const Tensor& t : tensors_) {
      if (at >= t.offset && at < t.offset + t.bytes) return t.name + " byte " + std::to_string(at - t.offset);
      if (at >= t.offset + t.bytes) found = "the gap after " + t.name;
    }
    return found;
  }

 private:
  int64_t size_ = 0;
  std::vector<Tensor> tensors_;
};

class Random {
 public:
  explicit Random(uint64_t seed) : engine_(seed) {}
  int64_t below(int64_t n) { return static_cast<int64_t>(engine_() % static_cast<uint64_t>(n)); }
  int64_t in(int64_t lo, int64_t hi) { return lo + below(hi - lo + 1); }
  bool chance(int percent) { return below(100) < percent; }
  float uniform() { return static_cast<float>(engine_() >> 40) * 0x1p-24f * 2.0f - 1.0f; }  // [-1, 1)
  template <typename T>
  T pick(std::initializer_list<T> values) {
    return *(values.begin() + below(static_cast<int64_t>(values.size())));
  }

 private:
  std::mt19937_64 engine_;
};

uint16_t bf16(float v) { return spec::bf16_from_f32(v, Bf16Nan::k7FFF); }

// A row of bf16 values: one magnitude per row with a per-element spread, or
// zeros, or a constant, with specials sprinkled in.
void fill_bf16_row(Random& r, uint16_t* row, int64_t n) {
  const int kind = static_cast<int>(r.below(100));
  const float constant = std::ldexp(r.uniform(), static_cast<int>(r.in(-20, 20)));
  const int exponent = static_cast<int>(r.in(-40, 40));
  for (int64_t i = 0; i < n; ++i) {
    float v;
    if (kind < 4) {
      v = 0.0f;
    } else if (kind < 7) {
      v = constant;
    } else {
      v = std::ldexp(r.uniform(), exponent + static_cast<int>(r.in(-8, 8)));
    }
    if (kind >= 90 && r.chance(3)) {
      v = r.pick<float>({0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 1e-40f, -3e38f, 3e38f, 448.0f});
    }
    row[i] = bf16(v);
  }
}

// The distinct slots of T tokens in a cache of `capacity` slots, some -1.
std::vector<int64_t> slots_for(Random& r, int64_t tokens, int64_t capacity) {
  std::vector<int64_t> all(static_cast<size_t>(capacity));
  for (int64_t i = 0; i < capacity; ++i) all[static_cast<size_t>(i)] = i;
  for (int64_t i = capacity - 1; i > 0; --i) std::swap(all[static_cast<size_t>(i)], all[static_cast<size_t>(r.below(i + 1))]);
  std::vector<int64_t> slots(static_cast<size_t>(tokens));
  const int skip = static_cast<int>(r.pick<int64_t>({0, 10, 50}));
  for (int64_t t = 0; t < tokens; ++t) slots[static_cast<size_t>(t)] = r.chance(skip) ? -1 : all[static_cast<size_t>(t)];
  return slots;
}

// One random launch: the args with arena offsets in place of pointers
// (a pointer field holds offset + 1; 0 stays null), and the arena's bytes.
struct Launch {
  FusedKArgs args;
  Arena arena;
  std::vector<uint8_t> bytes;
  std::string summary;
};

template <typename T>
T* at_offset(int64_t offset) {
  return reinterpret_cast<T*>(static_cast<uintptr_t>(offset + 1));
}

Launch random_launch(uint64_t seed) {
  Random r(seed);
  Launch l;
  FusedKArgs& a = l.args;
  Arena& arena = l.arena;
  std::vector<std::pair<int64_t, std::vector<uint8_t>>> writes;  // offset, content
  const auto put = [&](const std::string& name, const void* data, int64_t bytes, int64_t align) {
    const int64_t offset = arena.add(name, bytes, align);
    const uint8_t* p = static_cast<const uint8_t*>(data);
    writes.emplace_back(offset, std::vector<uint8_t>(p, p + bytes));
    return offset;
  };
  const auto out = [&](const std::string& name, int64_t bytes, int64_t align) { return arena.add(name, bytes, align); };

  const int64_t T = r.chance(10) ? r.in(100, 400) : r.pick<int64_t>({0, 1, 2, 3, 5, 8, 16, 17, 31, 64});
  a.num_tokens = T;
  do {
    a.index_k = r.chance(60), a.kv = r.chance(60), a.q_norm = r.chance(40), a.topk_fill = r.chance(30);
  } while (!a.index_k && !a.kv && !a.q_norm && !a.topk_fill);

  // RoPE cache and positions.
  const bool shuffled = r.chance(50);
  int64_t dim = 0, rope_width = 64;
  if (a.index_k) {
    dim = a.kv ? r.in(64, 512) : r.in(2, 512);
    if (r.chance(50)) dim = r.pick<int64_t>({64, 128, 128, 256, 512});
    if (shuffled) dim = (dim + 15) / 16 * 16;
    if (!a.kv) rope_width = std::min<int64_t>(dim / 2 * 2, 2 * r.in(1, 64));
  }
  if (a.index_k || a.kv) {
    const int64_t rows = r.in(1, 40), stride = rope_width + r.pick<int64_t>({0, 0, 1, 6});
    const FloatType type = r.chance(50) ? FloatType::kF32 : FloatType::kBf16;
    std::vector<float> f(static_cast<size_t>(rows * stride));
    for (float& v : f) v = r.chance(2) ? r.pick<float>({0.0f, 1.0f, -1.0f}) : r.uniform();
    int64_t offset;
    if (type == FloatType::kF32) {
      offset = put("rope_cache", f.data(), static_cast<int64_t>(f.size()) * 4, 4);
    } else {
      std::vector<uint16_t> h(f.size());
      for (size_t i = 0; i < f.size(); ++i) h[i] = bf16(f[i]);
      offset = put("rope_cache", h.data(), static_cast<int64_t>(h.size()) * 2, 2);
    }
    a.rope_cache = RopeCache{at_offset<void>(offset), type, rows, stride, rope_width};
    std::vector<int64_t> positions(static_cast<size_t>(T));
    for (int64_t& p : positions) p = r.below(rows);
    if (T > 0) a.positions = at_offset<int64_t>(put("positions", positions.data(), T * 8, 8));
  }
  const auto bf16_rows = [&](const std::string& name, int64_t width, RowsIn* rows) {
    const int64_t stride = width + r.pick<int64_t>({0, 0, 3, 8});
    std::vector<uint16_t> v(static_cast<size_t>(std::max<int64_t>(T, 1) * stride));
    for (int64_t t = 0; t < T; ++t) fill_bf16_row(r, v.data() + t * stride, width);
    *rows = RowsIn{at_offset<void>(put(name, v.data(), static_cast<int64_t>(v.size()) * 2, 16)), stride};
  };
  const auto out_rows = [&](const std::string& name, int64_t width, int bytes, int percent) {
    if (!r.chance(percent)) return RowsOut{};
    const int64_t stride = width + r.pick<int64_t>({0, 0, 2, 8});
    return RowsOut{at_offset<void>(out(name, std::max<int64_t>(T, 1) * stride * bytes, 16)), stride};
  };
  const auto vector = [&](const std::string& name, int64_t width, float base, float spread) {
    const FloatType type = r.chance(50) ? FloatType::kF32 : FloatType::kBf16;
    std::vector<float> f(static_cast<size_t>(width));
    for (float& v : f) v = base + spread * r.uniform();
    if (type == FloatType::kBf16) {
      std::vector<uint16_t> h(f.size());
      for (size_t i = 0; i < f.size(); ++i) h[i] = bf16(f[i]);
      return VectorIn{at_offset<void>(put(name, h.data(), width * 2, 2)), type};
    }
    return VectorIn{at_offset<void>(put(name, f.data(), width * 4, 4)), type};
  };
  const auto eps = [&]() { return bits_of(r.pick<float>({1e-6f, 1e-6f, 1e-5f, 0.0f, 1e-30f})); };

  if (a.index_k) {
    a.index_dim = dim;
    a.index_rope_dim = rope_width;
    a.index_rope = r.chance(50) ? RopeStyle::kNeox : RopeStyle::kInterleaved;
    bf16_rows("index_k", dim, &a.index_k_in);
    a.ln_weight = vector("ln_weight", dim, 1.0f, 0.5f);
    a.ln_bias = vector("ln_bias", dim, 0.0f, r.chance(50) ? 0.0f : 0.25f);
    a.ln_eps_bits = eps();
    a.indexer_layout = shuffled ? IndexerKLayout::kShuffled : IndexerKLayout::kFlat;
    a.indexer_scale = r.chance(50) ? IndexerKScale::kF32 : IndexerKScale::kUe8m0x4;
    PagedCache& c = a.indexer_cache;
    c.block_size = shuffled ? r.pick<int64_t>({16, 64, 128, 256}) : r.pick<int64_t>({1, 2, 16, 64, 128, 256});
    c.num_blocks = (T + c.block_size - 1) / c.block_size + r.in(0, 2);
    c.num_blocks = std::max<int64_t>(c.num_blocks, 1);
    c.entry_bytes = dim + 4;
    c.block_stride = c.block_size * (dim + 4) + r.pick<int64_t>({0, 0, 4, 13});
    c.data = at_offset<void>(out("indexer_cache", (c.num_blocks - 1) * c.block_stride + c.block_size * (dim + 4), 16));
    if (r.chance(30)) {
      const std::vector<int64_t> slots = slots_for(r, T, c.num_blocks * c.block_size);
      if (T > 0) a.index_slot_mapping = at_offset<int64_t>(put("index_slot_mapping", slots.data(), T * 8, 8));
    }
    a.index_k_out = out_rows("index_k_out", dim, 2, 60);
  }
  if (a.kv) {
    bf16_rows("kv_c", kMlaLatent, &a.kv_c);
    bf16_rows("k_pe", kMlaRope, &a.k_pe);
    a.kv_weight = vector("kv_weight", kMlaLatent, 1.0f, 0.5f);
    a.kv_eps_bits = eps();
    a.mla_format = static_cast<MlaCacheFormat>(r.below(4));
    a.k_scale_bits = bits_of(r.pick<float>({1.0f, 0.37f, 0.0625f, 3.0f, 1e-3f}));
    const int64_t entry = mla_entry_bytes(a.mla_format), align = a.mla_format == MlaCacheFormat::kFp8DsMla ? 4 : 2;
    PagedCache& c = a.mla_cache;
    c.block_size = r.pick<int64_t>({1, 2, 16, 64});
    c.num_blocks = std::max<int64_t>(1, (T + c.block_size - 1) / c.block_size + r.in(0, 1));
    c.entry_bytes = entry;
    c.entry_stride = (entry + r.pick<int64_t>({0, 0, 4, 16}) + align - 1) / align * align;
    c.block_stride = (c.block_size - 1) * c.entry_stride + entry + r.pick<int64_t>({0, 0, 4, 64});
    c.block_stride = (c.block_stride + align - 1) / align * align;
    c.data = at_offset<void>(out("mla_cache", (c.num_blocks - 1) * c.block_stride + (c.block_size - 1) * c.entry_stride + entry, 16));
    a.kv_out = out_rows("kv_out", kMlaLatent, 2, 60);
    a.kpe_out = out_rows("kpe_out", kMlaRope, 2, 60);
  }
  if ((a.index_k && a.index_slot_mapping == nullptr) || a.kv) {
    int64_t capacity = INT64_MAX;
    if (a.index_k && a.index_slot_mapping == nullptr) capacity = a.indexer_cache.num_blocks * a.indexer_cache.block_size;
    if (a.kv) capacity = std::min(capacity, a.mla_cache.num_blocks * a.mla_cache.block_size);
    const std::vector<int64_t> slots = slots_for(r, T, capacity);
    if (T > 0) a.slot_mapping = at_offset<int64_t>(put("slot_mapping", slots.data(), T * 8, 8));
  }
  if (a.q_norm) {
    a.q_dim = r.chance(10) ? r.in(1, 8192) : r.pick<int64_t>({1, 7, 32, 100, 512, 1536, 1536, 2048});
    bf16_rows("q_c", a.q_dim, &a.q_c);
    a.q_weight = vector("q_weight", a.q_dim, 1.0f, 0.5f);
    a.q_eps_bits = eps();
    a.q_c_out = out_rows("q_c_out", a.q_dim, 2, 100);
  }
  if (a.topk_fill) {
    a.topk_width = r.pick<int64_t>({1, 31, 2048, 2048});
    a.topk_row_stride = a.topk_width + r.pick<int64_t>({0, 0, 5});
    a.topk = at_offset<int32_t>(out("topk", std::max<int64_t>(T, 1) * a.topk_row_stride * 4, 16));
  }

  // Poison everywhere, then the inputs.
  const uint8_t poison = static_cast<uint8_t>(r.below(256));
  l.bytes.assign(static_cast<size_t>(arena.size()), poison);
  for (const auto& w : writes) std::copy(w.second.begin(), w.second.end(), l.bytes.begin() + w.first);
  l.summary = "T=" + std::to_string(T) + (a.index_k ? " index_k(D=" + std::to_string(dim) + " R=" +
                                                          std::to_string(rope_width) + " " + name_of(a.index_rope) +
                                                          " " + name_of(a.indexer_layout) + " bs=" +
                                                          std::to_string(a.indexer_cache.block_size) + ")"
                                                    : "") +
              (a.kv ? std::string(" kv(") + name_of(a.mla_format) + ")" : "") +
              (a.q_norm ? " q(Q=" + std::to_string(a.q_dim) + ")" : "") + (a.topk_fill ? " topk" : "");
  return l;
}

// The args with every offset made a pointer into `base`.
FusedKArgs rebased(const FusedKArgs& a, uint8_t* base) {
  FusedKArgs b = a;
  const auto fix = [base](auto*& p) {
    if (p != nullptr) p = reinterpret_cast<std::remove_reference_t<decltype(p)>>(base + (reinterpret_cast<uintptr_t>(p) - 1));
  };
  fix(b.positions), fix(b.rope_cache.data), fix(b.slot_mapping), fix(b.index_k_in.data), fix(b.ln_weight.data);
  fix(b.ln_bias.data), fix(b.index_slot_mapping), fix(b.indexer_cache.data), fix(b.index_k_out.data);
  fix(b.kv_c.data), fix(b.k_pe.data), fix(b.kv_weight.data), fix(b.mla_cache.data), fix(b.kv_out.data);
  fix(b.kpe_out.data), fix(b.q_c.data), fix(b.q_weight.data), fix(b.q_c_out.data), fix(b.topk);
  return b;
}

struct DeviceArena {
  uint8_t* data = nullptr;
  int64_t capacity = 0;
  ~DeviceArena() { cudaFree(data); }
  std::string reserve(int64_t bytes) {
    if (bytes <= capacity) return "";
    cudaFree(data);
    data = nullptr;
    capacity = std::max<int64_t>(bytes, int64_t{64} << 20);
    const cudaError_t e = cudaMalloc(&data, static_cast<size_t>(capacity));
    return e == cudaSuccess ? "" : std::string("cudaMalloc: ") + cudaGetErrorString(e);
  }
};

// A launch and the arena the oracle leaves (`oracle` says why it refused).
struct Prepared {
  uint64_t seed = 0;
  Launch launch;
  std::vector<uint8_t> want;
  std::string oracle;
};

Prepared prepare(uint64_t seed) {
  Prepared p;
  p.seed = seed;
  p.launch = random_launch(seed);
  p.want = p.launch.bytes;
  p.oracle = run_fused_k_oracle(rebased(p.launch.args, p.want.data()), qcheck_fused_k_rules());
  return p;
}

// Calls `each` with the launches of seeds first .. first + count - 1 in
// order, the oracle run on every core a batch at a time.
template <typename Each>
void for_each_prepared(uint64_t first, int64_t count, Each each) {
  const int threads = std::max(1u, std::thread::hardware_concurrency());
  constexpr int64_t kBatch = 256;
  for (int64_t start = 0; start < count; start += kBatch) {
    const int64_t n = std::min(kBatch, count - start);
    std::vector<Prepared> batch(static_cast<size_t>(n));
    std::vector<std::thread> pool;
    for (int k = 0; k < threads; ++k) {
      pool.emplace_back([&, k] {
        for (int64_t i = k; i < n; i += threads) batch[static_cast<size_t>(i)] = prepare(first + static_cast<uint64_t>(start + i));
      });
    }
    for (std::thread& t : pool) t.join();
    for (const Prepared& p : batch) {
      if (!each(p)) return;
    }
  }
}

// Runs a prepared launch on the GPU (the kernel of `bug`); "" when every
// byte of the arena equals the oracle's.
std::string run_on_device(const Prepared& p, DeviceArena& device, planted::Bug bug = planted::kNone) {
  const Launch& l = p.launch;
  const std::string seed = "seed " + std::to_string(p.seed);
  if (!p.oracle.empty()) return seed + " (" + l.summary + "): the oracle refused: " + p.oracle;
  std::string error = device.reserve(static_cast<int64_t>(l.bytes.size()));
  if (!error.empty()) return error;
  if (cudaMemcpy(device.data, l.bytes.data(), l.bytes.size(), cudaMemcpyHostToDevice) != cudaSuccess) {
    return "cudaMemcpy to the device failed";
  }
  error = bug == planted::kNone ? launch_fused_k(rebased(l.args, device.data), nullptr)
                                : planted::launch_fused_k_planted(rebased(l.args, device.data), bug, nullptr);
  if (!error.empty()) return seed + ": launch: " + error;
  const cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) return seed + ": " + cudaGetErrorString(e);
  std::vector<uint8_t> got(l.bytes.size());
  if (cudaMemcpy(got.data(), device.data, got.size(), cudaMemcpyDeviceToHost) != cudaSuccess) {
    return "cudaMemcpy to the host failed";
  }
  int64_t differences = 0, first = -1;
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] != p.want[i]) first = first < 0 ? static_cast<int64_t>(i) : first, ++differences;
  }
  if (differences == 0) return "";
  char bytes[64];
  std::snprintf(bytes, sizeof bytes, "oracle 0x%02X, kernel 0x%02X", p.want[static_cast<size_t>(first)],
                got[static_cast<size_t>(first)]);
  return seed + " (" + l.summary + "): " + std::to_string(differences) + " bytes differ, the first in " +
         l.arena.where(first) + ": " + bytes;
}

// The generator makes only launches the oracle takes (no device needed): a
// refusal would hide a shape from the comparison below.
TEST(FusedKKernel, RandomLaunchesAreValid) {
  int64_t roles = 0;
  for (uint64_t seed = 1; seed <= 500; ++seed) {
    Launch l = random_launch(seed);
    const FusedKArgs host = rebased(l.args, l.bytes.data());
    ASSERT_EQ(run_fused_k_oracle(host, qcheck_fused_k_rules()), "") << "seed " << seed << " (" << l.summary << ")";
    roles += host.index_k + host.kv + host.q_norm + host.topk_fill;
  }
  EXPECT_GT(roles, 500);
}

TEST(FusedKKernel, EqualsTheOracleOnRandomLaunches) {
  REQUIRE_CUDA_DEVICE();
  const int64_t cases = env_or("QCHECK_FUSED_K_CASES", 2000), first = env_or("QCHECK_FUSED_K_SEED", 1);
  DeviceArena device;
  int64_t failed = 0;
  const auto start = std::chrono::steady_clock::now();
  for_each_prepared(static_cast<uint64_t>(first), cases, [&](const Prepared& p) {
    const std::string problem = run_on_device(p, device);
    if (!problem.empty() && ++failed <= 10) ADD_FAILURE() << problem;
    return true;
  });
  std::printf("%.1f s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  EXPECT_EQ(failed, 0) << "of " << cases << " launches";
  std::printf("fused_k kernel vs oracle: %lld launches from seed %lld, %lld differ\n", static_cast<long long>(cases),
              static_cast<long long>(first), static_cast<long long>(failed));
}

// The planted catalogue (ops/fused_k/kernels/planted.h): each bug differs
// from the oracle on some launch of the same random sequence within its
// budget, and each twin on none. QCHECK_FUSED_K_PLANTED_CASES sets a bug's
// budget and a twin's count (default 3000).
TEST(FusedKKernel, PlantedBugsDifferAndTwinsDoNot) {
  REQUIRE_CUDA_DEVICE();
  const int64_t budget = env_or("QCHECK_FUSED_K_PLANTED_CASES", 3000);
  DeviceArena device;
  for (int b = planted::kNone + 1; b < planted::kCount; ++b) {
    const auto bug = static_cast<planted::Bug>(b);
    const auto start = std::chrono::steady_clock::now();
    int64_t found_at = -1;
    std::string first;
    int64_t tried = 0;
    for_each_prepared(1, budget, [&](const Prepared& p) {
      ++tried;
      first = run_on_device(p, device, bug);
      if (!first.empty()) found_at = tried;
      return first.empty();
    });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("planted %-28s %s after %lld launches, %.2f s%s%s\n", planted::name_of(bug),
                found_at > 0 ? "differs" : "silent", static_cast<long long>(found_at > 0 ? found_at : budget), seconds,
                found_at > 0 ? ": " : "", found_at > 0 ? first.c_str() : "");
    if (planted::is_twin(bug)) {
      EXPECT_LT(found_at, 0) << planted::name_of(bug) << " is a twin, but " << first;
    } else {
      EXPECT_GT(found_at, 0) << planted::name_of(bug) << " was not found in " << budget << " launches";
    }
  }
}

}  // namespace
}  // namespace qcheck::fused_k
