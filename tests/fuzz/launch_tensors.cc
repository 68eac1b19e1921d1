#include "tests/fuzz/launch_tensors.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "reference/conversions.h"

namespace qcheck::test {
namespace {

// splitmix64: a tiny explicit PRNG, the same numbers on every platform.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_;
};

// bf16 specials (SEMANTICS.md "Numeric building blocks"): +-0, +-Inf, NaN of
// both signs and payloads (quiet and signalling), subnormals, bf16 max, and
// the e4m3 edges 448 / 464 (rounds to 448) / 480 (saturates).
constexpr uint16_t kBf16Specials[] = {0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC1, 0x7F81,
                                      0x0001, 0x8040, 0x7F7F, 0x43E0, 0x43E8, 0x43F0, 0xC3E8};
constexpr uint32_t kF32Specials[] = {0x00000000, 0x80000000, 0x7F800000, 0xFF800000,
                                     0x7FC00000, 0xFFC00001, 0x7F800001, 0x00000001,
                                     0x7F7FFFFF, 0x43E00000};
constexpr size_t kSpecialOneIn = 64;

// A bf16 with a random sign, 7 random mantissa bits and a biased exponent in
// [127 + low, 127 + high]; one in 64 is a special when `specials`.
uint16_t random_bf16(Rng& rng, int low, int high, bool specials) {
  const uint64_t r = rng.next();
  if (specials && r % kSpecialOneIn == 0) {
    return kBf16Specials[(r >> 8) % (sizeof kBf16Specials / sizeof kBf16Specials[0])];
  }
  const uint32_t sign = (r >> 16) & 1u;
  const uint32_t exponent = 127 + low + static_cast<int>((r >> 20) % uint64_t(high - low + 1));
  return static_cast<uint16_t>((sign << 15) | (exponent << 7) | ((r >> 32) & 0x7Fu));
}

uint32_t random_f32_bits(Rng& rng, int low, int high, bool specials) {
  const uint64_t r = rng.next();
  if (specials && r % kSpecialOneIn == 0) {
    return kF32Specials[(r >> 8) % (sizeof kF32Specials / sizeof kF32Specials[0])];
  }
  const uint32_t sign = (r >> 16) & 1u;
  const uint32_t exponent = 127 + low + static_cast<int>((r >> 20) % uint64_t(high - low + 1));
  return (sign << 31) | (exponent << 23) | static_cast<uint32_t>((r >> 32) & 0x7FFFFFu);
}

// Placement of a [T, N, W] view in its buffer, in elements.
struct Geometry {
  int64_t offset, token_stride, head_stride, elements;
  int64_t at(int64_t t, int64_t n) const { return offset + t * token_stride + n * head_stride; }
};

Geometry row_geometry(Layout layout, int64_t T, int64_t N, int64_t W) {
  switch (layout) {
    case Layout::kContiguous: return {0, N * W, W, T * N * W};
    case Layout::kPadded: {
      const int64_t lead = 8, token_pad = 4, head_stride = lead + W;
      const int64_t token_stride = N * head_stride + token_pad;
      return {lead, token_stride, head_stride, T * token_stride};
    }
    case Layout::kHeadMajor: return {0, W, T * W, T * N * W};
  }
  return {};
}

// A [T, N] weights view; `column_stride` > 1 leaves gaps between heads.
Geometry weights_geometry(Layout layout, int64_t T, int64_t N, int64_t column_stride) {
  switch (layout) {
    case Layout::kContiguous: return {0, N * column_stride, column_stride, T * N * column_stride};
    case Layout::kPadded: {
      const int64_t token_stride = N * column_stride + 5;
      return {3, token_stride, column_stride, 3 + T * token_stride};
    }
    case Layout::kHeadMajor: return {0, column_stride, T * column_stride, T * N * column_stride};
  }
  return {};
}

void put_u16(TensorBuffer& b, int64_t index, uint16_t v) { std::memcpy(&b.bytes[index * 2], &v, 2); }
void put_u32(TensorBuffer& b, int64_t index, uint32_t v) { std::memcpy(&b.bytes[index * 4], &v, 4); }

size_t bytes_of(FloatType type) { return type == FloatType::kF32 ? 4 : 2; }

// Stores an fp32 value into a cache or weights buffer of either dtype.
void put_float(TensorBuffer& b, FloatType type, int64_t index, float value) {
  if (type == FloatType::kF32) {
    uint32_t bits;
    std::memcpy(&bits, &value, 4);
    put_u32(b, index, bits);
  } else {
    put_u16(b, index, spec::bf16_from_f32(value, Bf16Nan::k7FFF));
  }
}

// The k of the crafted rows 448 * 2^k: every one lies in a band where the
// log2f ceiling is wrong (SEMANTICS.md (A): M >= 1 for k in -22..-5, 4..119).
constexpr int kBandExponents[] = {4, 5, 6, 7, -5, -8, 9, 20, -12};

}  // namespace

std::string LaunchSpec::describe() const {
  static const char* const kLayouts[] = {"contiguous", "padded", "head-major"};
  static const char* const kRecipes[] = {"mixed", "scale-band", "scale-pow2"};
  std::ostringstream s;
  s << "T=" << tokens << " H=" << mqa_heads << " NI=" << indexer_heads << " D=" << index_dim
    << " R=" << rope_dim << " L=" << nope_dim << " path=" << name_of(path)
    << (alias ? " alias" : "") << " indexer=" << (has_indexer ? name_of(indexer_rope) : "off")
    << " caches=" << name_of(mqa_cache) << "/" << name_of(indexer_cache)
    << " weights=" << name_of(weights_in) << "->" << name_of(weights_out)
    << " in=" << kLayouts[int(input_layout)] << " out=" << kLayouts[int(output_layout)]
    << " wcol=" << weights_column_stride << " q_scale=0x" << std::hex << q_scale_bits << std::dec
    << " recipe=" << kRecipes[int(recipe)] << " seed=" << seed;
  return s.str();
}

TensorBuffer& LaunchTensors::add(const std::string& name, size_t bytes, uint8_t fill) {
  buffers_.push_back({name, std::vector<uint8_t>(bytes, fill)});
  return buffers_.back();
}

const TensorBuffer& LaunchTensors::buffer(const std::string& name) const {
  for (const TensorBuffer& b : buffers_) {
    if (b.name == name) return b;
  }
  throw std::out_of_range("no buffer named " + name);
}

LaunchTensors::LaunchTensors(const LaunchSpec& spec) {
  buffers_.reserve(12);
  const int64_t T = std::max<int64_t>(spec.tokens, 1), H = spec.mqa_heads, NI = spec.indexer_heads;
  const int64_t R = spec.rope_dim, D = spec.index_dim, L = spec.nope_dim;
  const bool crafted = spec.recipe != ValueRecipe::kMixed;
  if (crafted && spec.indexer_cache != FloatType::kF32) {
    throw std::invalid_argument("recipe scale-band/scale-pow2 needs an fp32 indexer cache");
  }
  Rng rng(spec.seed * 0x2545F4914F6CDD1Dull + 7);
  FusedQArgs& a = args_;
  a.num_tokens = spec.tokens;
  a.mqa_heads = H;
  a.indexer_heads = NI;
  a.index_dim = D;
  a.rope_dim = R;
  a.nope_dim = L;
  a.query_path = spec.path;
  a.has_indexer = spec.has_indexer;
  a.indexer_rope = spec.indexer_rope;
  a.q_scale_bits = spec.q_scale_bits;
  a.softmax_scale_bits = default_softmax_scale_bits(D);
  a.head_scale_bits = default_head_scale_bits(NI);

  // Positions in [0, P), with 0 and P - 1 always present.
  const int64_t P = T + 7;
  TensorBuffer& positions = add("positions", T * 8, 0);
  for (int64_t t = 0; t < T; ++t) {
    int64_t p = static_cast<int64_t>(rng.next() % uint64_t(P));
    if (t == 0) p = P - 1;
    if (t == T - 1 && T > 1) p = 0;
    std::memcpy(&positions.bytes[t * 8], &p, 8);
  }
  a.positions = reinterpret_cast<const int64_t*>(positions.bytes.data());

  // Caches: real rotary tables (base 10000, computed in double, then rounded),
  // or the crafted rows cos = 1 (+ 2^-23 in the band), sin = 0.
  const int64_t cache_stride = spec.input_layout == Layout::kContiguous ? R : R + 6;
  auto make_cache = [&](const char* name, FloatType type, bool crafted_rows, CacheView& view) {
    TensorBuffer& b = add(name, P * cache_stride * bytes_of(type), kInputPaddingByte);
    for (int64_t p = 0; p < P; ++p) {
      for (int64_t i = 0; i < R / 2; ++i) {
        float c, s;
        if (crafted_rows) {
          c = spec.recipe == ValueRecipe::kScaleBand ? 1.0f + 0x1p-23f : 1.0f;
          s = 0.0f;
        } else {
          const double angle = double(p) * std::pow(10000.0, -2.0 * double(i) / double(R));
          c = static_cast<float>(std::cos(angle));
          s = static_cast<float>(std::sin(angle));
        }
        put_float(b, type, p * cache_stride + i, c);
        put_float(b, type, p * cache_stride + R / 2 + i, s);
      }
    }
    view = {b.bytes.data(), type, P, cache_stride};
  };
  make_cache("mqa_cache", spec.mqa_cache, false, a.mqa_cache);
  if (spec.has_indexer) make_cache("indexer_cache", spec.indexer_cache, crafted, a.indexer_cache);

  // q_pe and (unless aliased or unused) ql_nope: mixed bf16 inputs.
  auto make_bf16_input = [&](const char* name, int64_t N, int64_t W, InputView& view) {
    const Geometry g = row_geometry(spec.input_layout, T, N, W);
    TensorBuffer& b = add(name, g.elements * 2, kInputPaddingByte);
    for (int64_t t = 0; t < T; ++t) {
      for (int64_t n = 0; n < N; ++n) {
        for (int64_t w = 0; w < W; ++w) put_u16(b, g.at(t, n) + w, random_bf16(rng, -8, 8, true));
      }
    }
    view = {b.bytes.data() + g.offset * 2, g.token_stride, g.head_stride};
    return g;
  };
  make_bf16_input("q_pe", H, R, a.q_pe);
  const bool packed = spec.path != QueryPath::kBf16Separate;
  if (packed && !spec.alias) make_bf16_input("ql_nope", H, L, a.ql_nope);

  if (spec.has_indexer) {
    // index_q: mixed rows, or crafted rows led by +-448 * 2^k with the rest
    // below 1 in magnitude so that element sets the row's amax.
    const Geometry g = row_geometry(spec.input_layout, T, NI, D);
    TensorBuffer& q = add("index_q", g.elements * 2, kInputPaddingByte);
    for (int64_t t = 0; t < T; ++t) {
      for (int64_t n = 0; n < NI; ++n) {
        for (int64_t j = 0; j < D; ++j) {
          // Below 2^-5 so the crafted element (>= 448 * 2^-12 ~ 0.11) is the max.
          uint16_t v = crafted ? random_bf16(rng, -20, -6, false) : random_bf16(rng, -8, 8, true);
          if (crafted && j == 0) {
            const int k = kBandExponents[(t * NI + n) % (sizeof kBandExponents / sizeof(int))];
            v = static_cast<uint16_t>((v & 0x8000u) | uint32_t(135 + k) << 7 | 0x60u);  // 448*2^k
          }
          put_u16(q, g.at(t, n) + j, v);
        }
      }
    }
    a.index_q = {q.bytes.data() + g.offset * 2, g.token_stride, g.head_stride};

    const Geometry wg =
        weights_geometry(spec.input_layout, T, NI, spec.weights_column_stride);
    TensorBuffer& w = add("index_weights", wg.elements * bytes_of(spec.weights_in), kInputPaddingByte);
    for (int64_t t = 0; t < T; ++t) {
      for (int64_t n = 0; n < NI; ++n) {
        if (spec.weights_in == FloatType::kF32) {
          put_u32(w, wg.at(t, n), random_f32_bits(rng, -4, 4, !crafted));
        } else {
          put_u16(w, wg.at(t, n), random_bf16(rng, -4, 4, !crafted));
        }
      }
    }
    a.index_weights = {w.bytes.data() + wg.offset * bytes_of(spec.weights_in), wg.token_stride,
                       wg.head_stride};
    a.index_weights_dtype = spec.weights_in;
  }

  // Outputs, all poison. The indexer outputs exist even without the indexer,
  // so the tests see that they stay untouched.
  const int64_t width = spec.path == QueryPath::kBf16Separate ? R : L + R;
  const size_t out_bytes = spec.path == QueryPath::kFp8Packed ? 1 : 2;
  const Geometry qg = row_geometry(spec.output_layout, T, H, width);
  TensorBuffer& out = add("query_out", qg.elements * out_bytes, kOutputPoisonByte);
  a.query_out = {out.bytes.data() + qg.offset * out_bytes, qg.token_stride, qg.head_stride};
  if (spec.alias) {
    // ql_nope lives in the front of query_out (the absorbed bmm wrote it).
    for (int64_t t = 0; t < T; ++t) {
      for (int64_t h = 0; h < H; ++h) {
        for (int64_t l = 0; l < L; ++l) put_u16(out, qg.at(t, h) + l, random_bf16(rng, -8, 8, true));
      }
    }
    a.ql_nope = {a.query_out.data, a.query_out.token_stride, a.query_out.head_stride};
  }
  const Geometry fg = row_geometry(spec.output_layout, T, NI, D);
  TensorBuffer& fp8 = add("index_q_fp8", fg.elements, kOutputPoisonByte);
  a.index_q_fp8 = {fp8.bytes.data() + fg.offset, fg.token_stride, fg.head_stride};
  const int64_t out_column_stride = spec.output_layout == Layout::kContiguous ? 1 : 2;
  const Geometry wo = weights_geometry(spec.output_layout, T, NI, out_column_stride);
  TensorBuffer& wout = add("index_weights_out", wo.elements * bytes_of(spec.weights_out), kOutputPoisonByte);
  a.index_weights_out = {wout.bytes.data() + wo.offset * bytes_of(spec.weights_out), wo.token_stride,
                         wo.head_stride};
  a.index_weights_out_dtype = spec.weights_out;
}

std::vector<std::string> differing_buffers(const LaunchTensors& expected, const LaunchTensors& got) {
  std::vector<std::string> names;
  const auto& e = expected.buffers();
  const auto& g = got.buffers();
  for (size_t i = 0; i < e.size() && i < g.size(); ++i) {
    if (e[i].bytes != g[i].bytes) names.push_back(e[i].name);
  }
  if (e.size() != g.size()) names.push_back("(buffer lists differ)");
  return names;
}

std::string compare_buffers(const LaunchTensors& expected, const LaunchTensors& got) {
  std::ostringstream s;
  const auto& e = expected.buffers();
  const auto& g = got.buffers();
  if (e.size() != g.size()) return "the two tensor sets have different buffer lists";
  for (size_t i = 0; i < e.size(); ++i) {
    if (e[i].bytes.size() != g[i].bytes.size()) {
      s << e[i].name << ": sizes differ; ";
      continue;
    }
    size_t count = 0, first = 0;
    for (size_t k = 0; k < e[i].bytes.size(); ++k) {
      if (e[i].bytes[k] == g[i].bytes[k]) continue;
      if (count++ == 0) first = k;
    }
    if (count == 0) continue;
    s << e[i].name << ": " << count << " bytes differ, first at byte " << first << " (expected 0x"
      << std::hex << int(e[i].bytes[first]) << ", got 0x" << int(g[i].bytes[first]) << std::dec
      << "); ";
  }
  return s.str();
}

}  // namespace qcheck::test
