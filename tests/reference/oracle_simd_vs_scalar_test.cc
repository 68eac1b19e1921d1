// The composed oracle under the SIMD row table vs under the scalar spec
// table, per Highway target, on small Cases run through the harness data path
// (oracle_table_runs.h): every query path (fp8 packed, bf16 packed with and
// without the ql_nope alias, bf16 separate), indexer off / NeoX /
// interleaved, f32 and bf16 caches, f32 and bf16 weights in and out, four
// shapes (odd H, R = D, R = 2, and the real D = 128, R = 64, whose rows the
// SIMD table runs through its fused vector path on every vector width up to
// AVX-512; the small ones take its composed path there), every value recipe and positions recipe, two
// profiles. Every tensor sits in a guarded buffer with padded (or production)
// strides, so the oracle must honour them. Every byte of every buffer, padding
// and sentinels included, must match; neither table may change an input, a
// padding or sentinel byte; without the indexer its outputs stay untouched;
// every output element is written, the same in both poison runs.
#include <atomic>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "fuzz/case/case.h"
#include "numerics/profile.h"
#include "numerics/row_ops.h"
#include "numerics/simd_rows.h"
#include "tests/reference/oracle_table_runs.h"
#include "tests/reference/target_fixture.h"

namespace qcheck::test {
namespace {

struct Shape {
  int64_t tokens, mqa_heads, indexer_heads, index_dim, rope_dim, nope_dim;
};

// Strides per shape: q_pe as padded rows or production's wide-row view,
// ql_nope head-major or padded (contiguous under the alias), the other
// inputs with padded rows, the outputs with padded rows or back to back (as
// in production: the oracle then streams whole runs of rows out); odd
// paddings and weights column strides, so rows start misaligned for the
// SIMD loads.
struct Layouts {
  Layout q_pe, ql_nope, outputs;
  int64_t row_padding, weights_column_stride;
};

std::vector<Case> case_grid() {
  const Shape shapes[] = {{5, 3, 2, 32, 16, 24}, {2, 1, 3, 16, 16, 8}, {3, 2, 1, 48, 2, 16}, {3, 2, 3, 128, 64, 40}};
  const Layouts layouts[] = {{Layout::kPaddedRows, Layout::kHeadMajor, Layout::kPaddedRows, 3, 2},
                             {Layout::kWideRowView, Layout::kHeadMajor, Layout::kPaddedRows, 5, 3},
                             {Layout::kWideRowView, Layout::kPaddedRows, Layout::kPaddedRows, 1, 2},
                             {Layout::kWideRowView, Layout::kHeadMajor, Layout::kContiguous, 1, 1}};
  struct PathChoice {
    QueryPath path;
    AliasMode alias;
  };
  const PathChoice paths[] = {{QueryPath::kFp8Packed, AliasMode::kNone},
                              {QueryPath::kBf16Packed, AliasMode::kNone},
                              {QueryPath::kBf16Packed, AliasMode::kExactFront},
                              {QueryPath::kBf16Separate, AliasMode::kNone}};
  std::vector<Case> grid;
  uint64_t seed = 100;
  for (int s = 0; s < 4; ++s) {
    for (const PathChoice& p : paths) {
      for (int indexer = 0; indexer < 3; ++indexer) {
        for (int dtypes = 0; dtypes < 8; ++dtypes) {
          Case c;
          c.num_tokens = shapes[s].tokens;
          c.mqa_heads = shapes[s].mqa_heads;
          c.indexer_heads = shapes[s].indexer_heads;
          c.index_dim = shapes[s].index_dim;
          c.rope_dim = shapes[s].rope_dim;
          c.nope_dim = shapes[s].nope_dim;
          set_default_scales(c);
          c.query_path = p.path;
          c.alias = p.alias;
          c.has_indexer = indexer != 0;
          c.indexer_rope = indexer == 2 ? RopeStyle::kInterleaved : RopeStyle::kNeox;
          c.mqa_cache_dtype = c.indexer_cache_dtype = dtypes & 1 ? FloatType::kBf16 : FloatType::kF32;
          c.weights_dtype = dtypes & 2 ? FloatType::kBf16 : FloatType::kF32;
          c.weights_out_dtype = dtypes & 4 ? FloatType::kBf16 : FloatType::kF32;
          c.q_pe_layout = layouts[s].q_pe;
          // The alias takes query_out's strides (validate_case).
          c.ql_nope_layout = p.alias == AliasMode::kExactFront ? Layout::kContiguous : layouts[s].ql_nope;
          c.index_q_layout = c.weights_layout = Layout::kPaddedRows;
          c.mqa_cache_layout = c.indexer_cache_layout = Layout::kPaddedRows;
          c.query_out_layout = c.index_q_fp8_layout = c.weights_out_layout = layouts[s].outputs;
          c.row_padding = layouts[s].row_padding;
          c.weights_column_stride = layouts[s].weights_column_stride;
          c.cache_rows = 7;
          const uint64_t index = grid.size();
          c.values = ValueRecipe(index % 9);  // all nine recipes, kMixed included
          c.positions = PositionsRecipe((index / 8) % 4);
          c.seed = seed++;
          grid.push_back(c);
        }
      }
    }
  }
  return grid;
}

class OracleSimdVsScalar : public SimdTargetTest {};
QCHECK_INSTANTIATE_PER_TARGET(OracleSimdVsScalar);

// Which of the profile's RoPE patterns this target computes in vectors: a
// fused one without a hardware FMA, and every one on SCALAR, takes the scalar
// spec inside the SIMD table (simd_rows.h), so there the comparison checks
// the SIMD conversions, amax and quantization around a RoPE on the spec.
// Printed per run, so the figures say what was compared.
void print_rope_patterns(const Profile& p, const char* target) {
  const std::pair<const char*, Contraction> patterns[] = {
      {"mqa fp8 r1", p.mqa_fp8_r1},   {"mqa fp8 r2", p.mqa_fp8_r2},       {"mqa bf16 r1", p.mqa_bf16_r1},
      {"mqa bf16 r2", p.mqa_bf16_r2}, {"indexer -", p.indexer_minus}, {"indexer +", p.indexer_plus}};
  std::string vectors, spec;
  for (const auto& [name, contraction] : patterns) {
    std::string& into = simd_row_dispatched_rope_in_vectors(contraction != Contraction::kNone) ? vectors : spec;
    into += (into.empty() ? "" : ", ") + std::string(name);
  }
  std::printf("%s, profile %s: RoPE in vectors: %s; on the scalar spec: %s\n", target, p.name.c_str(),
              vectors.empty() ? "none" : vectors.c_str(), spec.empty() ? "none" : spec.c_str());
}

void compare_under(const Profile& profile, uint32_t q_scale_bits, const RowOps& simd, const char* target) {
  print_rope_patterns(profile, target);
  size_t launches = 0;
  for (Case c : case_grid()) {
    c.profile = profile.name;
    c.q_scale_bits = q_scale_bits;
    const std::string what = std::string(target) + " " + describe(c);
    ASSERT_EQ(validate_case(c), "") << what;
    const OracleRun scalar_run = run_oracle_twice(c, profile, scalar_row_ops());
    const OracleRun simd_run = run_oracle_twice(c, profile, simd);
    ASSERT_EQ(scalar_run.refusal, "") << what;
    ASSERT_EQ(simd_run.refusal, "") << what;
    EXPECT_EQ(differences(c, scalar_run, simd_run), "") << what;
    EXPECT_EQ(side_effects(c, scalar_run), "") << what << " (scalar)";
    EXPECT_EQ(side_effects(c, simd_run), "") << what << " (simd)";
    ++launches;
  }
  EXPECT_EQ(launches, 4u * 4u * 3u * 8u);
}

// q_scale 0.37 (vLLM's test): not a power of two, so the division is real.
TEST_P(OracleSimdVsScalar, QcheckProfile) { compare_under(qcheck_profile(), 0x3EBD70A4, simd(), target_name()); }

// vllm-triton: div.full is exact for a power-of-two q_scale; for 0.37 the
// expected set holds the IEEE codes (the centre of its acceptance set).
TEST_P(OracleSimdVsScalar, VllmTritonProfile) {
  compare_under(vllm_triton_profile(), 0x3F000000, simd(), target_name());
  compare_under(vllm_triton_profile(), 0x3EBD70A4, simd(), target_name());
}

// The other named profiles that the SIMD rows implement (simd_rows_cover):
// compared for real, like the two above.
TEST_P(OracleSimdVsScalar, EveryCoveredProfile) {
  std::string compared;
  for (const std::string& name : profile_names()) {
    Profile p;
    ASSERT_TRUE(find_profile(name, &p));
    if (!simd_rows_cover(p)) continue;
    SCOPED_TRACE(name);
    compare_under(p, 0x3EBD70A4, simd(), target_name());
    compared += " " + name;
  }
  std::printf("%s: SIMD against the scalar spec under%s\n", target_name(), compared.c_str());
  EXPECT_NE(compared.find(" qcheck"), std::string::npos);
}

// A row table that counts its calls and forwards them to the SIMD table, to
// see which table the oracle runs.
std::atomic<size_t> g_spy_calls{0};
const RowOps& spy_row_ops() {
  static const RowOps ops{
      "spy",
      [](const uint16_t* in, float* out, size_t count) {
        ++g_spy_calls;
        simd_row_ops().f32_from_bf16_row(in, out, count);
      },
      [](const float* in, uint16_t* out, size_t count, Bf16Nan rule) {
        ++g_spy_calls;
        simd_row_ops().bf16_from_f32_row(in, out, count, rule);
      },
      [](const float* in, float divisor, uint8_t* out, size_t count, E4m3Overflow overflow) {
        ++g_spy_calls;
        simd_row_ops().quantize_row(in, divisor, out, count, overflow);
      },
      [](const float* in, size_t count) {
        ++g_spy_calls;
        return simd_row_ops().amax_row(in, count);
      },
      [](const float* x, const float* cos, const float* sin, size_t count, RopeStyle style, Contraction minus,
         Contraction plus, float* out) {
        ++g_spy_calls;
        simd_row_ops().rope_row(x, cos, sin, count, style, minus, plus, out);
      },
      [](const uint16_t* in, size_t in_stride, const float* cos, const float* sin, size_t count, RopeStyle style,
         Contraction minus, Contraction plus, Bf16Nan rule, uint16_t* out, size_t out_stride, size_t rows) {
        ++g_spy_calls;
        simd_row_ops().rope_bf16_rows(in, in_stride, cos, sin, count, style, minus, plus, rule, out, out_stride,
                                      rows);
      },
      [](const uint16_t* in, size_t in_stride, const float* cos, const float* sin, size_t dim, size_t rope_dim,
         RopeStyle style, const Profile& profile, uint8_t* out, size_t out_stride, float* scales, size_t rows) {
        ++g_spy_calls;
        simd_row_ops().indexer_rows(in, in_stride, cos, sin, dim, rope_dim, style, profile, out, out_stride, scales,
                                    rows);
      },
      nullptr};
  return ops;
}

// The named profiles the SIMD rows do not implement: the oracle must take
// the scalar spec's table for them whatever table it is handed (comparing
// SIMD with scalar there would compare the spec with itself). Checked with
// the spy: no call for those, calls for a covered profile (so the spy can
// see a table in use).
TEST_P(OracleSimdVsScalar, UncoveredProfilesTakeTheScalarSpec) {
  std::string fallback;
  for (const std::string& name : profile_names()) {
    Profile p;
    ASSERT_TRUE(find_profile(name, &p));
    g_spy_calls = 0;
    for (Case c : case_grid()) {
      c.profile = p.name;
      c.q_scale_bits = 0x3EBD70A4;
      const OracleRun run = run_oracle_twice(c, p, spy_row_ops());
      ASSERT_EQ(run.refusal, "") << name << " " << describe(c);
    }
    if (simd_rows_cover(p)) {
      EXPECT_GT(g_spy_calls.load(), 0u) << name << ": a covered profile must run the table it is handed";
    } else {
      EXPECT_EQ(g_spy_calls.load(), 0u) << name << ": the oracle ran the SIMD rows on a profile they do not implement";
      fallback += " " + name;
    }
  }
  std::printf("%s: the scalar spec's table, never the SIMD rows, under%s\n", target_name(), fallback.c_str());
  EXPECT_FALSE(fallback.empty()) << "no named profile falls back: the test checks nothing";
}

}  // namespace
}  // namespace qcheck::test
