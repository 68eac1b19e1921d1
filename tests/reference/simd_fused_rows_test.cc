// The fused "rows" entries of row_ops.h (rope_bf16_rows, indexer_rows) vs
// their definition written out here with the scalar spec functions, per
// Highway target, for the SIMD table and for the scalar table alike. Every
// even RoPE width up to 4 * lanes + 4 (the vector path needs whole vectors of
// pairs, so widths below and between multiples take the composed path) and
// the production widths, every indexer row length up to 2 * lanes + 3 with
// every even RoPE part, several rows at odd strides, pointers offset by 0..3
// elements from an aligned base, bf16 inputs mixing noise of every magnitude
// with specials (NaN, Inf, subnormals, 448 and neighbours), every contraction
// pattern, NaN rule and the profile variants of the scale and overflow rules.
// Outputs are compared as bits (codes, scales, bf16), and every element in
// the gaps between rows and around them must keep its fill. Rows whose RoPE
// the SIMD table computes on the scalar spec on this target are counted
// apart and printed (RopePlaces).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "numerics/conversions.h"
#include "numerics/float_bits.h"
#include "numerics/profile.h"
#include "numerics/quotient.h"
#include "numerics/rope.h"
#include "numerics/simd_rows.h"
#include "numerics/ue8m0.h"
#include "tests/reference/row_checks.h"
#include "tests/reference/row_values.h"
#include "tests/reference/target_fixture.h"

namespace qcheck::test {
namespace {

constexpr size_t kRows = 3;

// A bf16 input: a special's top half at `special_per_256` / 256, else noise
// of magnitude 2^scale_log2 rounded to bf16.
uint16_t random_bf16(SplitMix64& rng, int scale_log2, uint32_t special_per_256) {
  const std::vector<uint32_t>& specials = row_special_values();
  if (rng.below(256) < special_per_256) return uint16_t(specials[rng.below(uint32_t(specials.size()))] >> 16);
  return spec::bf16_from_f32(noise_value(rng, scale_log2), Bf16Nan::k7FFF);
}

// kRows rows of `count` bf16 at `stride`; each row has its own magnitude
// (2^-40 .. 2^40, so scales cover the UE8M0 range) and special rate, and
// one row in seven is all NaN.
void fill_input_rows(SplitMix64& rng, uint16_t* rows, size_t count, size_t stride) {
  for (size_t r = 0; r < kRows; ++r) {
    const int scale_log2 = int(rng.below(81)) - 40;
    const uint32_t rates[] = {0u, 8u, 64u};
    const uint32_t rate = rates[rng.below(3)];
    const bool all_nan = rng.below(7) == 0;
    for (size_t i = 0; i < count; ++i) {
      rows[r * stride + i] = all_nan ? uint16_t(0x7FC1 + (i % 3) * 0x8000) : random_bf16(rng, scale_log2, rate);
    }
  }
}

std::vector<float> widen(const uint16_t* in, size_t count) {
  std::vector<float> out(count);
  for (size_t i = 0; i < count; ++i) out[i] = spec::f32_from_bf16(in[i]);
  return out;
}

// Where the SIMD table's rows computed their RoPE: in vectors, or on the
// scalar spec (a fused pattern without a hardware FMA, every pattern on
// SCALAR: simd_rows.h). Rows of the second kind still check the table's
// conversions, amax and quantization in vectors, but their RoPE is the spec
// met with itself: they are counted apart and printed.
struct RopePlaces {
  size_t in_vectors = 0, on_the_spec = 0;
  void count(Contraction minus, Contraction plus, size_t rows) {
    const bool fused = minus != Contraction::kNone || plus != Contraction::kNone;
    (simd_row_dispatched_rope_in_vectors(fused) ? in_vectors : on_the_spec) += rows;
  }
  void print(const char* target, const char* what) const {
    std::printf("%s %s: %zu SIMD rows with the RoPE in vectors, %zu with the RoPE on the scalar spec\n", target,
                what, in_vectors, on_the_spec);
  }
};

class SimdFusedRows : public SimdTargetTest {
 protected:
  size_t lanes() const { return simd_row_dispatched_lanes(); }
  // The tables checked: this target's (through dispatch) and the scalar spec's.
  std::vector<const RowOps*> tables() const { return {&simd(), &scalar_row_ops()}; }
  void expect_none(const Differences& d) {
    EXPECT_EQ(d.count(), 0u) << target_name() << ": a fused row differs from its definition:\n" << d.lines();
  }
  SplitMix64 rng_{0xF05EDu};
};
QCHECK_INSTANTIATE_PER_TARGET(SimdFusedRows);

// A launch resolves the dispatching table once; it must name this target's.
TEST_P(SimdFusedRows, ResolveGivesTheDispatchedTargetsTable) {
  ASSERT_NE(simd().resolve, nullptr);
  const RowOps* resolved = simd().resolve();
  ASSERT_NE(resolved, nullptr);
  EXPECT_EQ(resolved, simd_row_ops_for_target(GetParam()));
  EXPECT_STREQ(resolved->name, target_name());
  EXPECT_EQ(resolved->resolve, nullptr);
  EXPECT_EQ(scalar_row_ops().resolve, nullptr);
}

TEST_P(SimdFusedRows, RopeBf16RowsMatchTheDefinition) {
  std::vector<size_t> counts;
  for (size_t count = 0; count <= 4 * lanes() + 4; count += 2) counts.push_back(count);
  for (size_t count : {size_t(64), size_t(128), kMaxFusedRowLength}) counts.push_back(count);
  const Contraction contractions[] = {Contraction::kNone, Contraction::kFuseCos, Contraction::kFuseSin};
  const Bf16Nan rules[] = {Bf16Nan::k7FFF, Bf16Nan::k7FC0, Bf16Nan::kKeepSignQuiet};
  Differences d;
  size_t checked = 0, case_index = 0;
  RopePlaces places;
  for (const RowOps* table : tables()) {
    for (RopeStyle style : {RopeStyle::kNeox, RopeStyle::kInterleaved}) {
      for (Contraction minus : contractions) {
        for (Contraction plus : contractions) {
          for (size_t count : counts) {
            if (table == &simd() && count > 0) places.count(minus, plus, kRows);
            const size_t offset = case_index % (kMaxOffset + 1);
            const Bf16Nan rule = rules[case_index++ % 3];
            const size_t in_stride = count + 1 + offset, out_stride = count + 3;
            OffsetRow<uint16_t> in(kRows * in_stride, offset, 0);
            OffsetRow<float> cos(count / 2, (offset + 1) % 4, 0.0f), sin(count / 2, (offset + 2) % 4, 0.0f);
            OffsetRow<uint16_t> out(kRows * out_stride, (offset + 3) % 4, 0xBADB);
            fill_input_rows(rng_, in.data(), count, in_stride);
            fill_mixed_row(rng_, cos.data(), count / 2, -1, 8);
            fill_mixed_row(rng_, sin.data(), count / 2, -1, 8);
            table->rope_bf16_rows(in.data(), in_stride, cos.data(), sin.data(), count, style, minus, plus, rule,
                                  out.data(), out_stride, kRows);
            const std::string w = std::string(target_name()) + " " + table->name + " rope_bf16_rows count " +
                                  std::to_string(count) + " style " + name_of(style) + " contraction " +
                                  std::to_string(int(minus)) + "/" + std::to_string(int(plus)) + " rule " +
                                  std::to_string(int(rule));
            for (size_t r = 0; r < kRows; ++r) {
              const std::vector<float> x = widen(in.data() + r * in_stride, count);
              std::vector<float> roped(count);
              spec::rope_row(x.data(), cos.data(), sin.data(), count, style, minus, plus, roped.data());
              for (size_t i = 0; i < count; ++i) {
                d.compare(w + " row " + std::to_string(r), i, bits_of(x[i]), spec::bf16_from_f32(roped[i], rule),
                          out[r * out_stride + i]);
              }
              for (size_t i = count; i < out_stride && r + 1 < kRows; ++i) {
                if (out.changed(r * out_stride + i)) d.outside(w + " gap after row " + std::to_string(r), 1);
              }
              ++checked;
            }
            d.outside(w, out.written_outside());
          }
        }
      }
    }
  }
  expect_none(d);
  EXPECT_EQ(checked, 2u * 2u * 9u * counts.size() * kRows);
  places.print(target_name(), "rope_bf16_rows");
}

// The profile variants that change an indexer row's bits: contraction, bf16
// round trip and its NaN rule, scale ceiling and floor, overflow rule.
std::vector<Profile> indexer_variants() {
  std::vector<Profile> variants{qcheck_profile(), vllm_triton_profile()};
  Profile p = qcheck_profile();
  p.indexer_bf16_before_quant = true;
  p.bf16_nan = Bf16Nan::kKeepSignQuiet;
  variants.push_back(p);
  p = qcheck_profile();
  p.e4m3_overflow = E4m3Overflow::kNan;
  p.scale_floor = ScaleFloor::kScale1e4;
  variants.push_back(p);
  p = qcheck_profile();
  p.indexer_minus = Contraction::kNone;
  p.indexer_plus = Contraction::kFuseSin;
  p.scale_floor = ScaleFloor::kAmax1e10;
  variants.push_back(p);
  p = qcheck_profile();
  p.indexer_minus = Contraction::kFuseSin;
  p.indexer_plus = Contraction::kFuseSin;
  p.indexer_bf16_before_quant = true;
  p.bf16_nan = Bf16Nan::k7FC0;
  variants.push_back(p);
  // No contraction: the one pattern targets without a hardware FMA compute
  // in vectors too (every other variant fuses a term).
  p = qcheck_profile();
  p.indexer_minus = Contraction::kNone;
  p.indexer_plus = Contraction::kNone;
  variants.push_back(p);
  return variants;
}

// The definition of one indexer row (row_ops.h) with the spec functions:
// fills codes[0..dim) and returns the scale.
float expected_indexer_row(const uint16_t* in, const float* cos, const float* sin, size_t dim, size_t rope_dim,
                           RopeStyle style, const Profile& p, uint8_t* codes) {
  const std::vector<float> x = widen(in, dim);
  std::vector<float> row(x);
  spec::rope_row(x.data(), cos, sin, rope_dim, style, p.indexer_minus, p.indexer_plus, row.data());
  if (p.indexer_bf16_before_quant) {
    for (float& value : row) value = spec::f32_from_bf16(spec::bf16_from_f32(value, p.bf16_nan));
  }
  const float scale = spec::row_scale(row.data(), dim, p);
  for (size_t i = 0; i < dim; ++i) {
    codes[i] = spec::e4m3_of_quotient(spec::quotient(row[i], scale, p.indexer_codes), p.e4m3_overflow);
  }
  return scale;
}

TEST_P(SimdFusedRows, IndexerRowsMatchTheDefinition) {
  // (dim, rope_dim): every length below two vectors and a bit with every
  // even RoPE part, then whole vectors and the production shapes.
  std::vector<std::pair<size_t, size_t>> shapes;
  for (size_t dim = 0; dim <= 2 * lanes() + 3; ++dim) {
    for (size_t rope_dim = 0; rope_dim <= dim; rope_dim += 2) shapes.emplace_back(dim, rope_dim);
  }
  for (size_t dim : {4 * lanes(), size_t(128), kMaxFusedRowLength}) {
    for (size_t rope_dim : {size_t(0), size_t(2), 2 * lanes(), dim / 2, dim}) shapes.emplace_back(dim, rope_dim);
  }
  shapes.emplace_back(128, 64);  // DeepSeek-V3.2 and GLM-5
  const std::vector<Profile> variants = indexer_variants();
  Differences d;
  size_t checked = 0, case_index = 0, nan_codes = 0, saturated = 0;
  RopePlaces places;
  for (const RowOps* table : tables()) {
    for (size_t v = 0; v < variants.size(); ++v) {
      for (RopeStyle style : {RopeStyle::kNeox, RopeStyle::kInterleaved}) {
        for (const auto& [dim, rope_dim] : shapes) {
          const size_t offset = case_index++ % (kMaxOffset + 1);
          const size_t in_stride = dim + 1 + offset, out_stride = dim + 2;
          if (table == &simd() && rope_dim > 0) {
            places.count(variants[v].indexer_minus, variants[v].indexer_plus, kRows);
          }
          OffsetRow<uint16_t> in(kRows * in_stride, offset, 0);
          OffsetRow<float> cos(rope_dim / 2, (offset + 1) % 4, 0.0f), sin(rope_dim / 2, (offset + 2) % 4, 0.0f);
          OffsetRow<uint8_t> out(kRows * out_stride, (offset + 3) % 4, 0xA5);
          OffsetRow<float> scales(kRows, offset, float_from_bits(0x7FBADBAD));
          fill_input_rows(rng_, in.data(), dim, in_stride);
          fill_mixed_row(rng_, cos.data(), rope_dim / 2, -1, 8);
          fill_mixed_row(rng_, sin.data(), rope_dim / 2, -1, 8);
          table->indexer_rows(in.data(), in_stride, cos.data(), sin.data(), dim, rope_dim, style, variants[v],
                              out.data(), out_stride, scales.data(), kRows);
          const std::string w = std::string(target_name()) + " " + table->name + " indexer_rows variant " +
                                std::to_string(v) + " dim " + std::to_string(dim) + " rope_dim " +
                                std::to_string(rope_dim) + " style " + name_of(style);
          std::vector<uint8_t> codes(dim);
          for (size_t r = 0; r < kRows; ++r) {
            const std::string row_w = w + " row " + std::to_string(r);
            const float scale = expected_indexer_row(in.data() + r * in_stride, cos.data(), sin.data(), dim, rope_dim,
                                                     style, variants[v], codes.data());
            d.compare(row_w + " scale", 0, 0, scale, scales[r]);
            for (size_t i = 0; i < dim; ++i) {
              d.compare(row_w, i, in[r * in_stride + i], codes[i], out[r * out_stride + i]);
              nan_codes += (codes[i] & 0x7F) == 0x7F;
              saturated += (codes[i] & 0x7F) == 0x7E;
            }
            for (size_t i = dim; i < out_stride && r + 1 < kRows; ++i) {
              if (out.changed(r * out_stride + i)) d.outside(row_w + " gap", 1);
            }
            ++checked;
          }
          d.outside(w, out.written_outside());
          d.outside(w + " scales", scales.written_outside());
        }
      }
    }
  }
  expect_none(d);
  EXPECT_EQ(checked, 2u * variants.size() * 2u * shapes.size() * kRows);
  places.print(target_name(), "indexer_rows");
  // The inputs must reach the special codes, or the check proves little.
  EXPECT_GT(nan_codes, 0u);
  EXPECT_GT(saturated, 0u);
}

}  // namespace
}  // namespace qcheck::test
