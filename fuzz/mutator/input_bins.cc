// The semantic bins computed from a case's generated inputs: which special
// value classes the inputs hold, and which UE8M0 scale exponents the indexer
// rows reach (SEMANTICS.md, "UE8M0 scale of a row"). A scan of the inputs and
// one RoPE + amax per indexer row with the oracle's SIMD rows: cheap next to
// the verdict, which runs the oracle and the backend twice.
#include <algorithm>
#include <cstring>
#include <vector>

#include "fuzz/mutator/bin_table.h"
#include "fuzz/mutator/semantic_bins.h"
#include "numerics/conversions.h"
#include "numerics/float_bits.h"
#include "numerics/row_ops.h"
#include "numerics/ue8m0.h"

namespace qcheck::fuzzing {
namespace {

constexpr unsigned kAllSpecials = (1u << 6) - 1;

// Bit mask over bin_names::kSpecials of one f32 value, from its bits.
unsigned special_classes(uint32_t bits) {
  const uint32_t magnitude = bits & kF32AbsMask;
  if (magnitude > kF32InfBits) return 1u << 0;
  if (magnitude == kF32InfBits) return (bits >> 31) ? 1u << 2 : 1u << 1;
  if (bits == kF32SignMask) return 1u << 3;
  if (magnitude != 0 && magnitude < 0x00800000u) return 1u << 4;
  // 464 is the first magnitude e4m3 cannot round onto 448 under every rule
  // (a non-saturating conversion makes it NaN): everything from there up.
  if (magnitude >= 0x43E80000u) return 1u << 5;
  return 0;
}

// The special classes of `count` contiguous elements (bf16 widened exactly:
// its bits are the top half of the f32's).
unsigned row_specials(const uint8_t* p, ElementType type, int64_t count) {
  unsigned found = 0;
  if (type == ElementType::kBf16) {
    // Every bf16 input element is scanned: a table of the 65536 classes
    // keeps that a load per element.
    static const std::vector<uint8_t> table = [] {
      std::vector<uint8_t> t(65536);
      for (uint32_t bits = 0; bits < 65536; ++bits) t[bits] = static_cast<uint8_t>(special_classes(bits << 16));
      return t;
    }();
    for (int64_t i = 0; i < count; ++i) {
      uint16_t bits;
      std::memcpy(&bits, p + 2 * i, 2);
      found |= table[bits];
    }
  } else {
    for (int64_t i = 0; i < count; ++i) {
      uint32_t bits;
      std::memcpy(&bits, p + 4 * i, 4);
      found |= special_classes(bits);
    }
  }
  return found;
}

float load_element(const TensorSet& set, const TensorGeometry& g, int64_t row, int64_t col, int64_t i) {
  const uint8_t* p = set.element(g, row, col, i);
  if (g.type == ElementType::kBf16) {
    uint16_t bits;
    std::memcpy(&bits, p, 2);
    return spec::f32_from_bf16(bits);
  }
  float value;
  std::memcpy(&value, p, 4);
  return value;
}

// Every (row, col) of an input: its `width` elements are contiguous.
unsigned scan_specials(const TensorSet& set, TensorId id) {
  const TensorGeometry* g = set.find(id);
  if (g == nullptr) return 0;
  unsigned found = 0;
  for (int64_t r = 0; r < g->rows && found != kAllSpecials; ++r) {
    for (int64_t col = 0; col < g->cols; ++col) found |= row_specials(set.element(*g, r, col, 0), g->type, g->width);
  }
  return found;
}

// Caches: only the rows some position reads (the others hold noise and may
// be many).
unsigned scan_cache_specials(const TensorSet& set, TensorId id) {
  const TensorGeometry* g = set.find(id);
  const TensorGeometry* positions = set.find(TensorId::kPositions);
  if (g == nullptr || positions == nullptr) return 0;
  unsigned found = 0;
  for (int64_t t = 0; t < positions->rows && found != kAllSpecials; ++t) {
    int64_t p;
    std::memcpy(&p, set.element(*positions, t, 0, 0), 8);
    found |= row_specials(set.element(*g, p, 0, 0), g->type, g->width);
  }
  return found;
}

void mark_specials(BinGroup group, unsigned found) {
  for (int b = 0; b < 6; ++b) {
    if (found & (1u << b)) mark_bin(group, b);
  }
}

int exponent_bucket(float scale) {
  const uint32_t bits = bits_of(scale);
  if (bits == kF32InfBits) return 8;
  const int e = static_cast<int>((bits >> 23) & 0xFF) - 127;
  if (e <= -22) return 0;
  if (e <= -15) return 1;
  if (e <= -8) return 2;
  if (e <= -1) return 3;
  if (e <= 7) return 4;
  if (e <= 15) return 5;
  return e <= 63 ? 6 : 7;
}

// The scale exponent of every indexer row, RoPE'd as the profile's oracle
// does (the bins need not be exact for the other profiles' details: they
// only steer the search).
void mark_scale_bins(const Case& c, const TensorSet& set, const Profile& profile) {
  const TensorGeometry* q = set.find(TensorId::kIndexQ);
  const TensorGeometry* cache = set.find(TensorId::kIndexerCache);
  const TensorGeometry* positions = set.find(TensorId::kPositions);
  if (!c.has_indexer || q == nullptr || cache == nullptr || positions == nullptr) return;
  const size_t D = static_cast<size_t>(c.index_dim), R = static_cast<size_t>(c.rope_dim);
  // The oracle's SIMD rows (the spec's bits), resolved once: one case has up
  // to T * NI rows and this runs on every execution.
  const RowOps& rows = resolved(simd_row_ops());
  std::vector<float> x(D), roped(D), cos_sin(R);
  std::vector<uint16_t> bits(D);
  for (int64_t t = 0; t < q->rows; ++t) {
    int64_t p;
    std::memcpy(&p, set.element(*positions, t, 0, 0), 8);
    for (size_t i = 0; i < R; ++i) cos_sin[i] = load_element(set, *cache, p, 0, static_cast<int64_t>(i));
    for (int64_t h = 0; h < q->cols; ++h) {
      std::memcpy(bits.data(), set.element(*q, t, h, 0), D * 2);  // index_q is bf16
      rows.f32_from_bf16_row(bits.data(), x.data(), D);
      rows.rope_row(x.data(), cos_sin.data(), cos_sin.data() + R / 2, R, c.indexer_rope, profile.indexer_minus,
                    profile.indexer_plus, roped.data());
      std::copy(x.begin() + static_cast<int64_t>(R), x.end(), roped.begin() + static_cast<int64_t>(R));
      const float amax = rows.amax_row(roped.data(), D);
      mark_bin(BinGroup::kScaleExponent,
               exponent_bucket(spec::ue8m0_scale(amax, ScaleCeiling::kExactBits, ScaleFloor::kAmax1e4)));
      // Inside the band where the log2f ceiling keeps half the scale.
      const float s0 = (amax > 1e-4f ? amax : 1e-4f) / 448.0f;
      if (bits_of(spec::ceil_pow2_exact(s0)) != bits_of(spec::ceil_pow2_log2f(s0))) {
        mark_bin(BinGroup::kScaleExponent, 9);
      }
    }
  }
}

}  // namespace

void mark_input_bins(const Case& c, const TensorSet& inputs, const Profile& profile) {
  mark_specials(BinGroup::kRowSpecials, scan_specials(inputs, TensorId::kQPe) |
                                            scan_specials(inputs, TensorId::kQlNope) |
                                            scan_specials(inputs, TensorId::kIndexQ));
  mark_specials(BinGroup::kWeightSpecials, scan_specials(inputs, TensorId::kIndexWeights));
  mark_specials(BinGroup::kCacheSpecials, scan_cache_specials(inputs, TensorId::kMqaCache) |
                                              scan_cache_specials(inputs, TensorId::kIndexerCache));
  mark_scale_bins(c, inputs, profile);
}

Backend observing_input_bins(const Backend& inner, PhaseTimes* times) {
  Backend b = inner;
  b.run = [run = inner.run, times](const Case& c, const Profile& profile, TensorSet& tensors) {
    if (tensors.poison == Poison::kA) {
      const PhaseTimer timer(times, Phase::kBins, Phase::kBackendA);
      mark_input_bins(c, tensors, profile);
    }
    return run(c, profile, tensors);
  };
  return b;
}

}  // namespace qcheck::fuzzing
