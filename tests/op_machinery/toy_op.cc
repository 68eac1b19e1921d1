#include "tests/op_machinery/toy_op.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "core/random/prng.h"
#include "numerics/conversions.h"
#include "numerics/e2m1.h"
#include "numerics/e4m3fnuz.h"
#include "numerics/ue8m0.h"

namespace qcheck::toy {
namespace {

constexpr int64_t kMxBlock = 32;

ElementType code_type(const ToyCase& c) {
  switch (c.format) {
    case ToyFormat::kE4m3: return ElementType::kE4m3;
    case ToyFormat::kE4m3fnuz: return ElementType::kE4m3fnuz;
    case ToyFormat::kMxfp4: return ElementType::kE2m1x2;
  }
  return ElementType::kE4m3;
}

TensorGeometry view(ToyTensor id, const char* name, TensorRole role, ElementType type, int64_t rows, int64_t width,
                    int64_t row_stride, int64_t offset, int buffer, int64_t stride_unit = 0) {
  TensorGeometry g{static_cast<TensorId>(id), role, type, rows, 1, width, row_stride, width, offset, buffer, name};
  g.stride_unit = stride_unit;
  return g;
}

float bf16_value(const TensorSet& set, const TensorGeometry& g, int64_t t, int64_t i) {
  uint16_t bits;
  std::memcpy(&bits, set.element(g, t, 0, i), 2);
  return spec::f32_from_bf16(bits);
}

int64_t slot_of(const TensorSet& set, int64_t t) {
  int64_t slot;
  std::memcpy(&slot, set.element(set.plan.tensors[kSlotMapping], t, 0, 0), 8);
  return slot;
}

float amax_of(const float* x, int64_t n) {
  float amax = 0.0f;
  for (int64_t i = 0; i < n; ++i) amax = std::max(amax, std::fabs(x[i]));
  return amax;
}

// What one token writes: its codes (one per byte, or packed e2m1 pairs),
// its scale bytes, and its rms; the kernel and the oracle share the rule,
// the kernel writes it through raw pointers with its bugs.
struct TokenOut {
  std::vector<uint8_t> codes;
  std::vector<uint8_t> scales;
  float rms = 0;
};

TokenOut quantize(const ToyCase& c, const std::vector<float>& x, bool ocp_codes_on_fnuz,
                  spec::Reduction reduction) {
  TokenOut out;
  const int64_t d = c.dim;
  out.rms = std::sqrt(spec::reduce_sum_of_squares(x.data(), d, reduction) / static_cast<float>(d));
  if (c.format == ToyFormat::kMxfp4) {
    out.codes.assign(static_cast<size_t>(d / 2), 0);
    for (int64_t b = 0; b < d / kMxBlock; ++b) {
      const float amax = std::max(amax_of(x.data() + b * kMxBlock, kMxBlock), std::ldexp(1.0f, -126));
      const float scale = spec::ceil_pow2_exact(amax / spec::kE2m1Max);
      out.scales.push_back(spec::e8m0_byte(scale));
      for (int64_t i = b * kMxBlock; i < (b + 1) * kMxBlock; i += 2) {
        const uint8_t even = spec::e2m1_from_f32(x[i] / scale, E2m1Rounding::kCvtRn);
        const uint8_t odd = spec::e2m1_from_f32(x[i + 1] / scale, E2m1Rounding::kCvtRn);
        out.codes[static_cast<size_t>(i / 2)] = spec::pack_e2m1_pair(even, odd);
      }
    }
    return out;
  }
  const bool fnuz = c.format == ToyFormat::kE4m3fnuz;
  const float max = fnuz ? 224.0f : 448.0f;
  const float scale = spec::ceil_pow2_exact(std::max(amax_of(x.data(), d), 1e-4f) / max);
  for (int64_t i = 0; i < d; ++i) {
    const float v = x[i] / scale;
    out.codes.push_back(fnuz && !ocp_codes_on_fnuz ? spec::e4m3fnuz_from_f32(v, E4m3FnuzOverflow::kSatFinite)
                                                   : spec::e4m3_from_f32(v, E4m3Overflow::kSatFinite));
  }
  out.scales.assign(4, 0);
  if (c.scale_store == ToyScaleStore::kF32) {
    std::memcpy(out.scales.data(), &scale, 4);
  } else {
    out.scales[0] = spec::e8m0_byte(scale);  // little-endian int32: the code in the low byte
  }
  return out;
}

std::vector<float> token_values(const ToyCase& c, const TensorSet& set, int64_t t) {
  std::vector<float> x(static_cast<size_t>(c.dim));
  for (int64_t i = 0; i < c.dim; ++i) x[i] = bf16_value(set, set.plan.tensors[kX], t, i);
  return x;
}

}  // namespace

int64_t code_bytes(const ToyCase& c) { return c.format == ToyFormat::kMxfp4 ? c.dim / 2 : c.dim; }
int64_t scale_bytes(const ToyCase& c) { return c.format == ToyFormat::kMxfp4 ? c.dim / kMxBlock : 4; }
int64_t cache_row_bytes(const ToyCase& c) { return code_bytes(c) + scale_bytes(c) + c.row_padding; }

TensorPlan plan(const ToyCase& c) {
  TensorPlan p;
  const int64_t T = c.tokens, row = cache_row_bytes(c);
  p.buffers = {{"x", T * c.dim * 2, false},
               {"slot_mapping", T * 8, false},
               {"cache", c.slots * row, true},
               {"rms", T * 4, true}};
  const TensorRole scatter = TensorRole::kScatterOutput;
  p.tensors.push_back(view(kX, "x", TensorRole::kInput, ElementType::kBf16, T, c.dim, c.dim, 0, 0));
  p.tensors.push_back(view(kSlotMapping, "slot_mapping", TensorRole::kInput, ElementType::kInt64, T, 1, 1, 0, 1));
  p.tensors.push_back(view(kCacheCodes, "cache codes", scatter, code_type(c), c.slots, code_bytes(c), row, 0, 2, 1));
  const bool mx = c.format == ToyFormat::kMxfp4;
  const ElementType scale_type = mx ? ElementType::kUe8m0
                                 : c.scale_store == ToyScaleStore::kF32 ? ElementType::kF32
                                                                       : ElementType::kInt32;
  p.tensors.push_back(view(kCacheScales, "cache scales", scatter, scale_type, c.slots, mx ? scale_bytes(c) : 1, row,
                           code_bytes(c), 2, 1));
  p.tensors.push_back(view(kRms, "rms", TensorRole::kOutput, ElementType::kF32, T, 1, 1, 0, 3));
  return p;
}

TensorSet build(const ToyCase& c, Poison poison) {
  TensorSet set = allocate_tensor_set(plan(c), poison);
  Xoshiro256 rng(c.seed);
  const TensorGeometry& x = set.plan.tensors[kX];
  for (int64_t t = 0; t < c.tokens; ++t) {
    // Each row at its own magnitude, so the rows' scales differ.
    const double magnitude = std::ldexp(1.0, static_cast<int>(rng.between(-6, 10)));
    for (int64_t i = 0; i < c.dim; ++i) {
      const uint16_t bits = spec::bf16_from_f32(static_cast<float>(rng.noise() * magnitude), Bf16Nan::k7FFF);
      std::memcpy(set.element(x, t, 0, i), &bits, 2);
    }
  }
  // Distinct slots, token 1 (and every third token after it) skipped.
  std::vector<int64_t> slots(static_cast<size_t>(c.slots));
  std::iota(slots.begin(), slots.end(), 0);
  for (size_t i = slots.size(); i > 1; --i) std::swap(slots[i - 1], slots[rng.below(i)]);
  std::vector<uint8_t> mask(static_cast<size_t>(c.slots), 0);
  for (int64_t t = 0; t < c.tokens; ++t) {
    const int64_t slot = (t % 3 == 1) ? -1 : slots[static_cast<size_t>(t)];
    std::memcpy(set.element(set.plan.tensors[kSlotMapping], t, 0, 0), &slot, 8);
    if (slot >= 0) mask[static_cast<size_t>(slot)] = 1;
  }
  set.row_masks.assign(set.plan.tensors.size(), {});
  set.row_masks[kCacheCodes] = mask;
  set.row_masks[kCacheScales] = mask;
  return set;
}

void run_oracle(const ToyCase& c, TensorSet& set) {
  const TensorGeometry& codes = set.plan.tensors[kCacheCodes];
  const TensorGeometry& scales = set.plan.tensors[kCacheScales];
  const TensorGeometry& rms = set.plan.tensors[kRms];
  for (int64_t t = 0; t < c.tokens; ++t) {
    const TokenOut out = quantize(c, token_values(c, set, t), false, c.reduction);
    std::memcpy(set.element(rms, t, 0, 0), &out.rms, 4);
    const int64_t slot = slot_of(set, t);
    if (slot < 0) continue;
    std::memcpy(set.element(codes, slot, 0, 0), out.codes.data(), out.codes.size());
    std::memcpy(set.element(scales, slot, 0, 0), out.scales.data(), out.scales.size());
  }
}

void run_kernel(const ToyCase& c, ToyBug bug, TensorSet& set) {
  // What a launch gets: base pointers and byte strides, nothing of the plan.
  uint8_t* cache = set.buffers[2].payload();
  float* rms = reinterpret_cast<float*>(set.buffers[3].payload());
  const int64_t row_bytes = cache_row_bytes(c);
  const spec::Reduction order =
      bug == ToyBug::kSequentialSum ? spec::Reduction{ReductionOrder::kSequential, 1} : c.reduction;
  for (int64_t t = 0; t < c.tokens; ++t) {
    if (bug == ToyBug::kSkipsLastToken && t == c.tokens - 1) break;
    TokenOut out = quantize(c, token_values(c, set, t), bug == ToyBug::kOcpCodesOnFnuz, order);
    std::memcpy(&rms[t], &out.rms, 4);
    int64_t slot = slot_of(set, t);
    if (slot < 0 && bug == ToyBug::kWritesUnmappedRow) {
      // The last row no token maps.
      slot = c.slots - 1;
      while (slot >= 0 && set.row_masks[kCacheCodes][static_cast<size_t>(slot)]) --slot;
    }
    if (slot < 0 && bug != ToyBug::kNegativeSlotWrites) continue;
    if (bug == ToyBug::kSwapsNibbles) {
      for (uint8_t& byte : out.codes) byte = static_cast<uint8_t>(byte << 4 | byte >> 4);
    }
    uint8_t* row = cache + slot * row_bytes;  // slot -1: the bytes before the cache (its front sentinel)
    std::memcpy(row, out.codes.data(), out.codes.size());
    const int64_t scale_at = code_bytes(c) + (bug == ToyBug::kScaleInPadding ? c.row_padding : 0);
    std::memcpy(row + scale_at, out.scales.data(), out.scales.size());
  }
}

PartNamer parts(const ToyCase& c) {
  const bool mx = c.format == ToyFormat::kMxfp4;
  return [mx](const TensorGeometry& g, int64_t dim) -> const char* {
    static const char* const kBlocks[] = {"block 0", "block 1", "block 2", "block 3", "block 4", "later blocks"};
    switch (g.id) {
      case static_cast<TensorId>(kCacheCodes): return mx ? kBlocks[std::min<int64_t>(dim / kMxBlock, 5)] : "codes";
      case static_cast<TensorId>(kCacheScales): return "scales";
      case static_cast<TensorId>(kRms): return "rms";
      default: return "elements";
    }
  };
}

namespace {

class ToyOp final : public Op {
 public:
  ToyOp() {
    vocabulary_.fields = {
        {"tokens", FieldKind::kInteger, true, {}, "6"},
        {"dim", FieldKind::kInteger, true, {}, "64"},
        {"slots", FieldKind::kInteger, true, {}, "9"},
        {"row_padding", FieldKind::kInteger, false, {}, "4"},
        {"format", FieldKind::kEnumeration, false, {"e4m3", "e4m3fnuz", "mxfp4"}, "\"e4m3\""},
        {"scale_store", FieldKind::kEnumeration, false, {"f32", "int32-code"}, "\"f32\""},
        {"reduction", FieldKind::kEnumeration, false,
         {name_of(ReductionOrder::kSequential), name_of(ReductionOrder::kPairwise),
          name_of(ReductionOrder::kStridedLanes), name_of(ReductionOrder::kBlockedLanes)},
         "\"strided-lanes\""},
        {"seed", FieldKind::kU64, false, {}, "1"},
    };
    vocabulary_.tensors = {
        {"x", "input", {"bf16"}, "[T, D]", ""},
        {"slot_mapping", "input", {"int64"}, "[T]", ""},
        {"cache codes", "output", {"e4m3", "e4m3fnuz", "e2m1x2"}, "[S, D] in cache rows", ""},
        {"cache scales", "output", {"f32", "int32", "ue8m0"}, "[S, 1] or [S, D/32] in cache rows", ""},
        {"rms", "output", {"f32"}, "[T]", ""},
    };
    vocabulary_.parts = {"codes", "block k", "scales", "rms", "elements"};
    vocabulary_.profiles = {"toy"};
  }
  const char* name() const override { return "toy_scatter_quant"; }
  uint16_t schema_version() const override { return 1; }
  const char* description() const override {
    return "machinery test op: rms in a named reduction order; rows quantized to a paged cache by slot";
  }
  const Vocabulary& vocabulary() const override { return vocabulary_; }

 private:
  Vocabulary vocabulary_;
};

}  // namespace

const Op& toy_op() {
  static const ToyOp op;
  return op;
}

}  // namespace qcheck::toy
