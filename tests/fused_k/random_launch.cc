#include "tests/fused_k/random_launch.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <thread>

#include "numerics/conversions.h"
#include "numerics/float_bits.h"
#include "ops/fused_k/oracle/fused_k_oracle.h"

namespace qcheck::fused_k::testing {

int64_t Arena::add(const std::string& name, int64_t bytes, int64_t align) {
  size_ = (size_ + kGap + align - 1) / align * align;
  tensors_.push_back({name, size_, bytes});
  size_ += bytes;
  return size_ - bytes;
}

std::string Arena::where(int64_t at) const {
  std::string found = "the gap before the first tensor";
  for (const Tensor& t : tensors_) {
    if (at >= t.offset && at < t.offset + t.bytes) return t.name + " byte " + std::to_string(at - t.offset);
    if (at >= t.offset + t.bytes) found = "the gap after " + t.name;
  }
  return found;
}

namespace {

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

// The distinct slots of T tokens in a cache of `capacity` slots, some -1;
// with `high`, only among the cache's last 4 T slots.
std::vector<int64_t> slots_for(Random& r, int64_t tokens, int64_t capacity, bool high = false) {
  const int64_t lowest = high ? std::max<int64_t>(0, capacity - 4 * tokens) : 0, count = capacity - lowest;
  std::vector<int64_t> all(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) all[static_cast<size_t>(i)] = lowest + i;
  for (int64_t i = count - 1; i > 0; --i) std::swap(all[static_cast<size_t>(i)], all[static_cast<size_t>(r.below(i + 1))]);
  std::vector<int64_t> slots(static_cast<size_t>(tokens));
  const int skip = static_cast<int>(r.pick<int64_t>({0, 10, 50}));
  for (int64_t t = 0; t < tokens; ++t) slots[static_cast<size_t>(t)] = r.chance(skip) ? -1 : all[static_cast<size_t>(t)];
  return slots;
}


template <typename T>
T* at_offset(int64_t offset) {
  return reinterpret_cast<T*>(static_cast<uintptr_t>(offset + 1));
}


}  // namespace

Launch random_launch(uint64_t seed, const Forced& forced) {
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

  const int64_t drawn = r.chance(10) ? r.in(100, 400) : r.pick<int64_t>({0, 1, 2, 3, 5, 8, 16, 17, 31, 64});
  const int64_t T = forced.tokens >= 0 ? forced.tokens : drawn;
  a.num_tokens = T;
  do {
    a.index_k = r.chance(60), a.kv = r.chance(60), a.q_norm = r.chance(40), a.topk_fill = r.chance(30);
  } while (!a.index_k && !a.kv && !a.q_norm && !a.topk_fill);
  const bool large = forced.min_cache_bytes > 0;
  if (large) a.index_k = a.kv = true, a.q_norm = a.topk_fill = false;

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
  // `last`, when not NaN, replaces the last value.
  const auto vector = [&](const std::string& name, int64_t width, float base, float spread, float last = NAN) {
    const FloatType type = r.chance(50) ? FloatType::kF32 : FloatType::kBf16;
    std::vector<float> f(static_cast<size_t>(width));
    for (float& v : f) v = base + spread * r.uniform();
    if (!std::isnan(last)) f.back() = last;
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
    // A zero or constant row normalizes to 0, so its rotated row is the bias's: a last bias of +-448 * 2^k
    // (outside the RoPE) is then its amax, and RN(amax / 448) is exactly the power of two 2^k: the
    // UE8M0 ceiling's edge, and codes of exactly +-448.
    const float boundary = dim > rope_width && r.chance(20) ? std::ldexp(r.chance(50) ? 448.0f : -448.0f, static_cast<int>(r.in(0, 10)))
                                                            : NAN;
    a.ln_bias = vector("ln_bias", dim, 0.0f, r.chance(50) ? 0.0f : 0.25f, boundary);
    a.ln_eps_bits = eps();
    a.indexer_layout = shuffled ? IndexerKLayout::kShuffled : IndexerKLayout::kFlat;
    a.indexer_scale = r.chance(50) ? IndexerKScale::kF32 : IndexerKScale::kUe8m0x4;
    PagedCache& c = a.indexer_cache;
    c.block_size = shuffled ? r.pick<int64_t>({16, 64, 128, 256}) : r.pick<int64_t>({1, 2, 16, 64, 128, 256});
    c.num_blocks = (T + c.block_size - 1) / c.block_size + r.in(0, 2);
    c.num_blocks = std::max<int64_t>(c.num_blocks, 1);
    c.entry_bytes = dim + 4;
    c.block_stride = c.block_size * (dim + 4) + r.pick<int64_t>({0, 0, 4, 13});
    c.num_blocks = std::max(c.num_blocks, forced.min_cache_bytes / c.block_stride + 1);
    c.data = at_offset<void>(out("indexer_cache", (c.num_blocks - 1) * c.block_stride + c.block_size * (dim + 4), 16));
    if (r.chance(30) || large) {  // large: its own slots at the end of its own cache
      const std::vector<int64_t> slots = slots_for(r, T, c.num_blocks * c.block_size, large);
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
    c.num_blocks = std::max(c.num_blocks, forced.min_cache_bytes / c.block_stride + 1);
    c.data = at_offset<void>(out("mla_cache", (c.num_blocks - 1) * c.block_stride + (c.block_size - 1) * c.entry_stride + entry, 16));
    a.kv_out = out_rows("kv_out", kMlaLatent, 2, 60);
    a.kpe_out = out_rows("kpe_out", kMlaRope, 2, 60);
  }
  if ((a.index_k && a.index_slot_mapping == nullptr) || a.kv) {
    // Slots fit both caches (a planted kernel that reads the MLA slots for the indexer cache stays inside
    // it), except with large caches: their own slots each, at their own end.
    int64_t capacity = INT64_MAX;
    if (a.index_k && !large) capacity = a.indexer_cache.num_blocks * a.indexer_cache.block_size;
    if (a.kv) capacity = std::min(capacity, a.mla_cache.num_blocks * a.mla_cache.block_size);
    const std::vector<int64_t> slots = slots_for(r, T, capacity, large);
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

Prepared prepare(uint64_t seed, const Forced& forced) {
  Prepared p;
  p.seed = seed;
  p.launch = random_launch(seed, forced);
  p.want = p.launch.bytes;
  p.oracle = run_fused_k_oracle(rebased(p.launch.args, p.want.data()), qcheck_fused_k_rules());
  return p;
}

void for_each_prepared(uint64_t first, int64_t count, const std::function<bool(const Prepared&)>& each) {
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

std::string arena_difference(const Prepared& p, const std::vector<uint8_t>& got) {
  int64_t differences = 0, first = -1;
  for (size_t i = 0; i < got.size() && i < p.want.size(); ++i) {
    if (got[i] != p.want[i]) first = first < 0 ? static_cast<int64_t>(i) : first, ++differences;
  }
  if (differences == 0) return "";
  char bytes[64];
  std::snprintf(bytes, sizeof bytes, "oracle 0x%02X, got 0x%02X", p.want[static_cast<size_t>(first)],
                got[static_cast<size_t>(first)]);
  return "seed " + std::to_string(p.seed) + " (" + p.launch.summary + "): " + std::to_string(differences) +
         " bytes differ, the first in " + p.launch.arena.where(first) + ": " + bytes;
}

}  // namespace qcheck::fused_k::testing
