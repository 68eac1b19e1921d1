// Fuzz target `numerics`: raw bytes read as one row through one RowOps entry
// (layout: numerics_input.h), SIMD against the scalar spec, bit for bit.
// Every Highway target this CPU supports is checked (simd_rows.h), plus the
// dispatched table the oracle uses. A difference prints the operation, the
// rules, the target, the first differing element with its input bits, and
// aborts (libFuzzer saves the input).
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz/targets/fuzz_entry.h"
#include "fuzz/targets/numerics_input.h"
#include "fuzz/targets/status_file.h"
#include "numerics/float_bits.h"
#include "numerics/profile.h"
#include "numerics/row_ops.h"
#include "numerics/simd_rows.h"

namespace {

using qcheck::bits_of;
using qcheck::float_from_bits;
using qcheck::RowOps;
namespace fz = qcheck::fuzzing;

std::vector<const RowOps*> g_tables;  // SIMD tables to check

// A row placed `misalignment` elements into its own allocation, so the SIMD
// code sees many start alignments. The allocation ends where the row ends:
// under ASan a read or write past the row is a finding.
template <typename T>
struct Row {
  std::vector<T> storage;
  T* data;
  Row(size_t count, unsigned misalignment) : storage(count + misalignment) { data = storage.data() + misalignment; }
  // Copies `count` values in; an empty row (data may be null) copies nothing.
  void fill(const void* from, size_t count) {
    if (count > 0) std::memcpy(data, from, count * sizeof(T));
  }
};

// Elements of the row a finding's index counts in.
size_t row_length(const fz::NumericsInput& in) {
  switch (in.operation) {
    case fz::RowOperation::kF32FromBf16: return in.bf16.size();
    case fz::RowOperation::kRope: return in.f32.size() / 2;  // x, then cos and sin
    case fz::RowOperation::kRopeBf16Rows:
    case fz::RowOperation::kIndexerRows:
      return fz::fused_rows_shape(in.divisor_bits, qcheck::kMaxFusedRowLength).dim;
    default: return in.f32.size();
  }
}

[[noreturn]] void report(const fz::NumericsInput& in, const RowOps& simd, size_t index,
                         uint64_t expected, uint64_t got, uint64_t input_bits) {
  std::fprintf(stderr,
               "\n==== qcheck numerics finding ====\n%s: %s differs from the scalar spec at element %zu of %zu "
               "(input bits 0x%" PRIx64 "): expected 0x%" PRIx64 ", got 0x%" PRIx64
               "\nrules: nan %d, overflow %d, style %d, contraction minus %d plus %d, divisor 0x%08x, "
               "misalignment in %u out %u\n==== end of finding ====\n",
               fz::name_of(in.operation), simd.name, index, row_length(in), input_bits,
               expected, got, static_cast<int>(in.nan_rule), static_cast<int>(in.overflow),
               static_cast<int>(in.style), static_cast<int>(in.minus_terms), static_cast<int>(in.plus_terms),
               in.divisor_bits, in.input_misalignment, in.output_misalignment);
  std::fflush(stderr);
  std::abort();
}

// The inputs of the two "rows" entries, from the row words: R/2 cos and
// R/2 sin (1 and 0 past the end of the input), then rows of `width` bf16
// at a stride of width + input misalignment (two per word, zeros past the end).
struct FusedRowsInput {
  std::vector<float> cos, sin;
  std::vector<uint16_t> x;
  size_t stride;
};

FusedRowsInput fused_rows_input(const fz::NumericsInput& in, size_t rope_width, size_t width, size_t rows) {
  FusedRowsInput f;
  size_t next = 0;
  auto word = [&](uint32_t fallback) { return next < in.f32.size() ? in.f32[next++] : fallback; };
  for (size_t i = 0; i < rope_width / 2; ++i) f.cos.push_back(float_from_bits(word(0x3F800000u)));
  for (size_t i = 0; i < rope_width / 2; ++i) f.sin.push_back(float_from_bits(word(0u)));
  f.stride = width + in.input_misalignment;
  f.x.assign(rows * f.stride + 1, 0);
  for (size_t i = 0; i + 1 < f.x.size(); i += 2) {
    const uint32_t w = word(0u);
    f.x[i] = static_cast<uint16_t>(w);
    f.x[i + 1] = static_cast<uint16_t>(w >> 16);
  }
  return f;
}

void check_fused_rows(const fz::NumericsInput& in, const RowOps& scalar, const RowOps& simd) {
  const fz::FusedRowsShape shape = fz::fused_rows_shape(in.divisor_bits, qcheck::kMaxFusedRowLength);
  const size_t out_stride = shape.dim + in.output_misalignment;
  if (in.operation == fz::RowOperation::kRopeBf16Rows) {
    const size_t R = shape.dim & ~size_t(1);
    const FusedRowsInput f = fused_rows_input(in, R, R, shape.rows);
    // Outputs start filled alike, so bytes between rows must stay equal too.
    std::vector<uint16_t> want(shape.rows * out_stride + 1, 0xA5A5), got = want;
    scalar.rope_bf16_rows(f.x.data(), f.stride, f.cos.data(), f.sin.data(), R, in.style, in.minus_terms,
                          in.plus_terms, in.nan_rule, want.data(), out_stride, shape.rows);
    simd.rope_bf16_rows(f.x.data(), f.stride, f.cos.data(), f.sin.data(), R, in.style, in.minus_terms,
                        in.plus_terms, in.nan_rule, got.data(), out_stride, shape.rows);
    for (size_t i = 0; i < want.size(); ++i) {
      if (want[i] != got[i]) report(in, simd, i, want[i], got[i], 0);
    }
    return;
  }
  qcheck::Profile profile = qcheck::qcheck_profile();
  profile.indexer_minus = in.minus_terms;
  profile.indexer_plus = in.plus_terms;
  profile.e4m3_overflow = in.overflow;
  profile.bf16_nan = in.nan_rule;
  profile.scale_ceiling = shape.ceiling;
  profile.scale_floor = shape.floor;
  profile.indexer_bf16_before_quant = shape.bf16_before_quant;
  const FusedRowsInput f = fused_rows_input(in, shape.rope_dim, shape.dim, shape.rows);
  std::vector<uint8_t> want(shape.rows * out_stride + 1, 0xA5), got = want;
  std::vector<float> want_scales(shape.rows, -1.0f), got_scales = want_scales;
  scalar.indexer_rows(f.x.data(), f.stride, f.cos.data(), f.sin.data(), shape.dim, shape.rope_dim, in.style,
                      profile, want.data(), out_stride, want_scales.data(), shape.rows);
  simd.indexer_rows(f.x.data(), f.stride, f.cos.data(), f.sin.data(), shape.dim, shape.rope_dim, in.style,
                    profile, got.data(), out_stride, got_scales.data(), shape.rows);
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] != got[i]) report(in, simd, i, want[i], got[i], 0);
  }
  for (size_t r = 0; r < shape.rows; ++r) {
    if (bits_of(want_scales[r]) != bits_of(got_scales[r])) {
      report(in, simd, r, bits_of(want_scales[r]), bits_of(got_scales[r]), 0);
    }
  }
}

void check_table(const fz::NumericsInput& in, const RowOps& scalar, const RowOps& simd) {
  const unsigned mi = in.input_misalignment, mo = in.output_misalignment;
  switch (in.operation) {
    case fz::RowOperation::kRopeBf16Rows:
    case fz::RowOperation::kIndexerRows: check_fused_rows(in, scalar, simd); return;
    case fz::RowOperation::kF32FromBf16: {
      const size_t n = in.bf16.size();
      Row<uint16_t> x(n, mi);
      x.fill(in.bf16.data(), n);
      Row<float> want(n, mo), got(n, mo);
      scalar.f32_from_bf16_row(x.data, want.data, n);
      simd.f32_from_bf16_row(x.data, got.data, n);
      for (size_t i = 0; i < n; ++i) {
        if (bits_of(want.data[i]) != bits_of(got.data[i])) report(in, simd, i, bits_of(want.data[i]), bits_of(got.data[i]), in.bf16[i]);
      }
      return;
    }
    case fz::RowOperation::kRope: {
      const size_t count = in.f32.size() / 2;  // R; cos and sin take R/2 each
      Row<float> x(in.f32.size(), mi);
      x.fill(in.f32.data(), in.f32.size());
      const float* cos = x.data + count;
      const float* sin = cos + count / 2;
      Row<float> want(count, mo), got(count, mo);
      scalar.rope_row(x.data, cos, sin, count, in.style, in.minus_terms, in.plus_terms, want.data);
      simd.rope_row(x.data, cos, sin, count, in.style, in.minus_terms, in.plus_terms, got.data);
      for (size_t i = 0; i < count; ++i) {
        if (bits_of(want.data[i]) != bits_of(got.data[i])) report(in, simd, i, bits_of(want.data[i]), bits_of(got.data[i]), in.f32[i]);
      }
      return;
    }
    default: break;
  }
  const size_t n = in.f32.size();
  Row<float> x(n, mi);
  x.fill(in.f32.data(), n);
  switch (in.operation) {
    case fz::RowOperation::kBf16FromF32: {
      Row<uint16_t> want(n, mo), got(n, mo);
      scalar.bf16_from_f32_row(x.data, want.data, n, in.nan_rule);
      simd.bf16_from_f32_row(x.data, got.data, n, in.nan_rule);
      for (size_t i = 0; i < n; ++i) {
        if (want.data[i] != got.data[i]) report(in, simd, i, want.data[i], got.data[i], in.f32[i]);
      }
      return;
    }
    case fz::RowOperation::kQuantize: {
      float divisor;
      std::memcpy(&divisor, &in.divisor_bits, 4);
      Row<uint8_t> want(n, mo), got(n, mo);
      scalar.quantize_row(x.data, divisor, want.data, n, in.overflow);
      simd.quantize_row(x.data, divisor, got.data, n, in.overflow);
      for (size_t i = 0; i < n; ++i) {
        if (want.data[i] != got.data[i]) report(in, simd, i, want.data[i], got.data[i], in.f32[i]);
      }
      return;
    }
    case fz::RowOperation::kAmax: {
      const uint32_t want = bits_of(scalar.amax_row(x.data, n)), got = bits_of(simd.amax_row(x.data, n));
      if (want != got) report(in, simd, n, want, got, 0);
      return;
    }
    default: return;
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (!g_tables.empty()) return 0;
  g_tables.push_back(&qcheck::simd_row_ops());
  for (int64_t target : qcheck::simd_row_targets()) {
    if (const RowOps* ops = qcheck::simd_row_ops_for_target(target)) g_tables.push_back(ops);
  }
  std::fprintf(stderr, "numerics: SIMD tables checked against the scalar spec: dispatched + %s\n",
               qcheck::simd_row_target_names().c_str());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  LLVMFuzzerInitialize(nullptr, nullptr);
  qcheck::fuzzing::count_execution();
  const fz::NumericsInput in = fz::decode_numerics_input(data, size);
  for (const RowOps* simd : g_tables) check_table(in, qcheck::scalar_row_ops(), *simd);
  return 0;
}
