#include "ops/fused_k/case/case_launch.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <unordered_set>
#include <vector>

#include "numerics/conversions.h"
#include "numerics/float_bits.h"
#include "ops/fused_k/case/draws.h"

namespace qcheck::fused_k {

int64_t Arena::add(const std::string& name, int64_t bytes, int64_t align) {
  size_ = (size_ + kArenaGap + align - 1) / align * align;
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

std::string Arena::tensor_at(int64_t at) const {
  for (const Tensor& t : tensors_) {
    if (at >= t.offset && at < t.offset + t.bytes) return t.name;
  }
  return where(at);
}

namespace {

// A pointer field holds its tensor's arena offset + 1 (null stays null).
template <typename T>
T* at_offset(int64_t offset) {
  return reinterpret_cast<T*>(static_cast<uintptr_t>(offset + 1));
}
int64_t offset_of(const void* p) { return static_cast<int64_t>(reinterpret_cast<uintptr_t>(p)) - 1; }

int64_t bytes_of(FloatType type) { return type == FloatType::kF32 ? 4 : 2; }
int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

uint16_t bf16(float v) { return spec::bf16_from_f32(v, Bf16Nan::k7FFF); }

// The inputs' values, written at the planned offsets.
class Filler {
 public:
  Filler(const FusedKCase& c, CaseLaunch& l, uint8_t poison_flip)
      : c_(c), l_(l), r_(c.seed ^ kValueStream), poison_flip_(poison_flip) {}

  void fill() {
    const FusedKArgs& a = l_.args;
    const int64_t T = a.num_tokens;
    const uint8_t poison = static_cast<uint8_t>(r_.below(256)) ^ poison_flip_;
    l_.bytes.assign(static_cast<size_t>(l_.arena.size()), poison);
    if (a.index_k || a.kv) {
      const RopeCache& rc = a.rope_cache;
      for (int64_t i = 0; i < rc.rows * rc.row_stride; ++i) {
        put_float(offset_of(rc.data) + i * bytes_of(rc.dtype), rc.dtype,
                  r_.chance(2) ? r_.pick<float>({0.0f, 1.0f, -1.0f}) : r_.uniform());
      }
      for (int64_t t = 0; t < T; ++t) put_i64(offset_of(a.positions) + 8 * t, r_.below(rc.rows));
    }
    if (a.index_k) {
      rows(a.index_k_in, a.index_dim);
      vector(a.ln_weight, a.index_dim, 1.0f, 0.5f);
      // A zero or constant row normalizes to 0, so its rotated row is the bias's: a last bias of +-448 * 2^k
      // (outside the RoPE) is then its amax, and RN(amax / 448) is exactly the power of two 2^k: the UE8M0
      // ceiling's edge, and codes of exactly +-448.
      const bool edge = a.index_dim > a.index_rope_dim && r_.chance(20);
      float last = NAN;
      if (edge) {
        const float sign = r_.chance(50) ? 1.0f : -1.0f;  // (one draw per statement: argument order is unspecified)
        last = std::ldexp(sign * 448.0f, static_cast<int>(r_.in(0, 10)));
      }
      vector(a.ln_bias, a.index_dim, 0.0f, r_.chance(50) ? 0.0f : 0.25f, last);
      if (a.index_slot_mapping != nullptr) slots(a.index_slot_mapping, capacity(a.indexer_cache));
    }
    if (a.kv) {
      rows(a.kv_c, kMlaLatent);
      rows(a.k_pe, kMlaRope);
      vector(a.kv_weight, kMlaLatent, 1.0f, 0.5f);
    }
    if (a.slot_mapping != nullptr) {
      // The shared slots fit every cache that reads them.
      int64_t room = INT64_MAX;
      if (a.index_k && a.index_slot_mapping == nullptr) room = capacity(a.indexer_cache);
      if (a.kv) room = std::min(room, capacity(a.mla_cache));
      slots(a.slot_mapping, room);
    }
    if (a.q_norm) {
      rows(a.q_c, a.q_dim);
      vector(a.q_weight, a.q_dim, 1.0f, 0.5f);
    }
  }

 private:
  // Another stream than the case's draws (draw_fused_k_case uses the seed itself).
  static constexpr uint64_t kValueStream = 0x76616C756573ull;  // "values"

  static int64_t capacity(const PagedCache& c) { return c.num_blocks * c.block_size; }
  // 2^e, e in [-126, 127]. A uniform() value (24 bits) times 2^e for e in
  // [-48, 48] is exact, so this gives ldexp's bits without its library call
  // (a twelfth of an execution).
  static float pow2(int e) { return float_from_bits(static_cast<uint32_t>(127 + e) << 23); }

  void put(int64_t offset, const void* data, size_t bytes) {
    std::memcpy(l_.bytes.data() + offset, data, bytes);
  }
  void put_i64(int64_t offset, int64_t v) { put(offset, &v, 8); }
  void put_float(int64_t offset, FloatType type, float v) {
    if (type == FloatType::kF32) {
      put(offset, &v, 4);
    } else {
      const uint16_t h = bf16(v);
      put(offset, &h, 2);
    }
  }

  // Each token's row: one magnitude with a per-element spread, or zeros, or
  // a constant, with specials sprinkled in. The padding keeps its poison.
  void rows(const RowsIn& in, int64_t width) {
    for (int64_t t = 0; t < l_.args.num_tokens; ++t) {
      const int kind = static_cast<int>(r_.below(100));
      const float mantissa = r_.uniform();
      const float constant = mantissa * pow2(static_cast<int>(r_.in(-20, 20)));
      const int exponent = static_cast<int>(r_.in(-40, 40));
      for (int64_t i = 0; i < width; ++i) {
        float v;
        if (kind < 4) {
          v = 0.0f;
        } else if (kind < 7) {
          v = constant;
        } else {
          const float u = r_.uniform();
          v = u * pow2(exponent + static_cast<int>(r_.in(-8, 8)));
        }
        if (kind >= 90 && r_.chance(3)) {
          v = r_.pick<float>({0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 1e-40f, -3e38f, 3e38f, 448.0f});
        }
        put_float(offset_of(in.data) + (t * in.row_stride + i) * 2, FloatType::kBf16, v);
      }
    }
  }

  // base + spread * u per element; `last`, when not NaN, replaces the last.
  void vector(const VectorIn& v, int64_t width, float base, float spread, float last = NAN) {
    for (int64_t i = 0; i < width; ++i) {
      float x = base + spread * r_.uniform();
      if (i == width - 1 && !std::isnan(last)) x = last;
      put_float(offset_of(v.data) + i * bytes_of(v.dtype), v.dtype, x);
    }
  }

  // Distinct slots for the tokens in a cache of `room` slots, some -1; with
  // slots_at_end, only among its last 4 T slots. A small range is shuffled;
  // in a large one (more than 8 T slots) a slot drawn twice is drawn again.
  void slots(const int64_t* mapping, int64_t room) {
    const int64_t T = l_.args.num_tokens;
    const int64_t lowest = c_.slots_at_end ? std::max<int64_t>(0, room - 4 * T) : 0, count = room - lowest;
    std::vector<int64_t> chosen(static_cast<size_t>(T));
    if (count <= std::max<int64_t>(4096, 8 * T)) {
      std::vector<int64_t> pool(static_cast<size_t>(count));
      for (int64_t i = 0; i < count; ++i) pool[static_cast<size_t>(i)] = lowest + i;
      for (int64_t t = 0; t < T; ++t) {
        std::swap(pool[static_cast<size_t>(t)], pool[static_cast<size_t>(t + r_.below(count - t))]);
        chosen[static_cast<size_t>(t)] = pool[static_cast<size_t>(t)];
      }
    } else {
      std::unordered_set<int64_t> taken;
      for (int64_t t = 0; t < T; ++t) {
        int64_t s;
        do {
          s = lowest + r_.below(count);
        } while (!taken.insert(s).second);
        chosen[static_cast<size_t>(t)] = s;
      }
    }
    for (int64_t t = 0; t < T; ++t) {
      put_i64(offset_of(mapping) + 8 * t, r_.chance(c_.skip_percent) ? -1 : chosen[static_cast<size_t>(t)]);
    }
  }

  const FusedKCase& c_;
  CaseLaunch& l_;
  Draws r_;
  uint8_t poison_flip_;  // 0 for poison A, 0xA5 for B
};

}  // namespace

CaseLaunch plan_fused_k_launch(const FusedKCase& c) {
  CaseLaunch l;
  FusedKArgs& a = l.args;
  Arena& arena = l.arena;
  const int64_t T = c.num_tokens, rows = std::max<int64_t>(T, 1);
  a.num_tokens = T;
  a.index_k = c.index_k, a.kv = c.kv, a.q_norm = c.q_norm, a.topk_fill = c.topk_fill;
  const auto in_rows = [&](const char* name, int64_t width) {
    const int64_t stride = width + c.input_row_padding;
    return RowsIn{at_offset<void>(arena.add(name, rows * stride * 2, 16)), stride};
  };
  const auto out_rows = [&](const char* name, int64_t width, bool wanted) {
    if (!wanted) return RowsOut{};
    const int64_t stride = width + c.output_row_padding;
    return RowsOut{at_offset<void>(arena.add(name, rows * stride * 2, 16)), stride};
  };
  const auto vector = [&](const char* name, int64_t width, FloatType type) {
    return VectorIn{at_offset<void>(arena.add(name, width * bytes_of(type), bytes_of(type))), type};
  };

  if (c.index_k || c.kv) {
    const int64_t width = c.kv ? kMlaRope : c.index_rope_dim, stride = width + c.rope_row_padding;
    const int64_t offset = arena.add("rope_cache", c.rope_rows * stride * bytes_of(c.rope_dtype), 4);
    a.rope_cache = RopeCache{at_offset<void>(offset), c.rope_dtype, c.rope_rows, stride, width};
    if (T > 0) a.positions = at_offset<int64_t>(arena.add("positions", T * 8, 8));
  }
  if (c.index_k) {
    a.index_dim = c.index_dim;
    a.index_rope_dim = c.index_rope_dim;
    a.index_rope = c.index_rope;
    a.index_k_in = in_rows("index_k", c.index_dim);
    a.ln_weight = vector("ln_weight", c.index_dim, c.ln_weight_dtype);
    a.ln_bias = vector("ln_bias", c.index_dim, c.ln_bias_dtype);
    a.ln_eps_bits = c.ln_eps;
    a.indexer_layout = c.indexer_layout;
    a.indexer_scale = c.indexer_scale;
    a.index_fp8 = c.index_fp8;
    PagedCache& k = a.indexer_cache;
    k.block_size = c.indexer_block_size;
    k.num_blocks = c.indexer_blocks;
    k.entry_bytes = c.index_dim + 4;
    k.block_stride = k.block_size * k.entry_bytes + c.indexer_block_padding;
    k.data = at_offset<void>(
        arena.add("indexer_cache", (k.num_blocks - 1) * k.block_stride + k.block_size * k.entry_bytes, 16));
    if (c.index_slots && T > 0) a.index_slot_mapping = at_offset<int64_t>(arena.add("index_slot_mapping", T * 8, 8));
    a.index_k_out = out_rows("index_k_out", c.index_dim, c.index_k_out);
  }
  if (c.kv) {
    a.kv_c = in_rows("kv_c", kMlaLatent);
    a.k_pe = in_rows("k_pe", kMlaRope);
    a.kv_weight = vector("kv_weight", kMlaLatent, c.kv_weight_dtype);
    a.kv_eps_bits = c.kv_eps;
    a.mla_format = c.mla_format;
    a.k_scale_bits = c.k_scale;
    // fp8_ds_mla entries hold f32 scales, the others 2-byte values: strides keep them aligned.
    const int64_t entry = mla_entry_bytes(c.mla_format), align = c.mla_format == MlaCacheFormat::kFp8DsMla ? 4 : 2;
    PagedCache& m = a.mla_cache;
    m.block_size = c.mla_block_size;
    m.num_blocks = c.mla_blocks;
    m.entry_bytes = entry;
    m.entry_stride = round_up(entry + c.mla_entry_padding, align);
    m.block_stride = round_up((m.block_size - 1) * m.entry_stride + entry + c.mla_block_padding, align);
    m.data = at_offset<void>(
        arena.add("mla_cache", (m.num_blocks - 1) * m.block_stride + (m.block_size - 1) * m.entry_stride + entry, 16));
    a.kv_out = out_rows("kv_out", kMlaLatent, c.kv_out);
    a.kpe_out = out_rows("kpe_out", kMlaRope, c.kpe_out);
  }
  if (((c.index_k && !c.index_slots) || c.kv) && T > 0) {
    a.slot_mapping = at_offset<int64_t>(arena.add("slot_mapping", T * 8, 8));
  }
  if (c.q_norm) {
    a.q_dim = c.q_dim;
    a.q_c = in_rows("q_c", c.q_dim);
    a.q_weight = vector("q_weight", c.q_dim, c.q_weight_dtype);
    a.q_eps_bits = c.q_eps;
    a.q_c_out = out_rows("q_c_out", c.q_dim, true);
  }
  if (c.topk_fill) {
    a.topk_width = c.topk_width;
    a.topk_row_stride = c.topk_width + c.topk_row_padding;
    a.topk = at_offset<int32_t>(arena.add("topk", rows * a.topk_row_stride * 4, 16));
  }
  return l;
}

CaseLaunch build_fused_k_launch(const FusedKCase& c, int poison) {
  CaseLaunch l = plan_fused_k_launch(c);
  Filler(c, l, poison == 0 ? 0 : 0xA5).fill();
  return l;
}

FusedKArgs rebased(const FusedKArgs& a, uint8_t* base) {
  FusedKArgs b = a;
  const auto fix = [base](auto*& p) {
    if (p != nullptr) p = reinterpret_cast<std::remove_reference_t<decltype(p)>>(base + offset_of(p));
  };
  fix(b.positions), fix(b.rope_cache.data), fix(b.slot_mapping), fix(b.index_k_in.data), fix(b.ln_weight.data);
  fix(b.ln_bias.data), fix(b.index_slot_mapping), fix(b.indexer_cache.data), fix(b.index_k_out.data);
  fix(b.kv_c.data), fix(b.k_pe.data), fix(b.kv_weight.data), fix(b.mla_cache.data), fix(b.kv_out.data);
  fix(b.kpe_out.data), fix(b.q_c.data), fix(b.q_weight.data), fix(b.q_c_out.data), fix(b.topk);
  return b;
}

std::string arena_difference(const Arena& arena, const std::vector<uint8_t>& want, const std::vector<uint8_t>& got) {
  if (want.size() != got.size()) {
    return "the arenas have " + std::to_string(want.size()) + " and " + std::to_string(got.size()) + " bytes";
  }
  if (std::memcmp(want.data(), got.data(), got.size()) == 0) return "";  // (the usual answer, at memcmp's speed)
  int64_t differences = 0, first = -1;
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] != want[i]) first = first < 0 ? static_cast<int64_t>(i) : first, ++differences;
  }
  if (differences == 0) return "";
  char bytes[64];
  std::snprintf(bytes, sizeof bytes, "oracle 0x%02X, got 0x%02X", want[static_cast<size_t>(first)],
                got[static_cast<size_t>(first)]);
  return std::to_string(differences) + " bytes differ, the first in " + arena.where(first) + ": " + bytes;
}

}  // namespace qcheck::fused_k
