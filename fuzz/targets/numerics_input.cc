#include "fuzz/targets/numerics_input.h"

#include <algorithm>

namespace qcheck::fuzzing {

const char* name_of(RowOperation operation) {
  switch (operation) {
    case RowOperation::kF32FromBf16: return "f32_from_bf16_row";
    case RowOperation::kBf16FromF32: return "bf16_from_f32_row";
    case RowOperation::kQuantize: return "quantize_row";
    case RowOperation::kAmax: return "amax_row";
    case RowOperation::kRope: return "rope_row";
    case RowOperation::kRopeBf16Rows: return "rope_bf16_rows";
    case RowOperation::kIndexerRows: return "indexer_rows";
  }
  return "?";
}

FusedRowsShape fused_rows_shape(uint32_t word, size_t max_length) {
  FusedRowsShape s;
  s.rows = 1 + (word & 3);
  s.bf16_before_quant = ((word >> 2) & 1) != 0;
  s.ceiling = static_cast<ScaleCeiling>((word >> 3) & 1);
  s.floor = static_cast<ScaleFloor>(((word >> 4) & 3) % 3);
  s.dim = ((word >> 8) & 0x3FF) % (max_length + 1);
  s.rope_dim = std::min<size_t>(s.dim, (word >> 18) & 0x3FF) & ~size_t(1);
  return s;
}

NumericsInput decode_numerics_input(const uint8_t* data, size_t size) {
  NumericsInput in;
  if (size < kNumericsHeaderBytes) return in;
  in.operation = static_cast<RowOperation>(data[0] % kRowOperationCount);
  in.nan_rule = static_cast<Bf16Nan>((data[1] & 3) % 3);
  in.overflow = static_cast<E4m3Overflow>((data[1] >> 2) & 1);
  in.style = static_cast<RopeStyle>((data[1] >> 3) & 1);
  in.minus_terms = static_cast<Contraction>(((data[1] >> 4) & 3) % 3);
  in.plus_terms = static_cast<Contraction>(((data[1] >> 6) & 3) % 3);
  in.input_misalignment = data[2] & 15;
  in.output_misalignment = data[2] >> 4;
  in.divisor_bits = data[3] | (uint32_t(data[4]) << 8) | (uint32_t(data[5]) << 16) | (uint32_t(data[6]) << 24);
  const uint8_t* row = data + kNumericsHeaderBytes;
  const size_t row_bytes = size - kNumericsHeaderBytes;
  if (in.operation == RowOperation::kF32FromBf16) {
    const size_t n = std::min(row_bytes / 2, kNumericsMaxElements);
    for (size_t i = 0; i < n; ++i) in.bf16.push_back(static_cast<uint16_t>(row[2 * i] | (row[2 * i + 1] << 8)));
  } else {
    size_t n = std::min(row_bytes / 4, kNumericsMaxElements);
    if (in.operation == RowOperation::kRope) n = n / 4 * 4;  // R even: x[R], cos[R/2], sin[R/2]
    for (size_t i = 0; i < n; ++i) {
      const uint8_t* p = row + 4 * i;
      in.f32.push_back(p[0] | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) | (uint32_t(p[3]) << 24));
    }
  }
  return in;
}

std::vector<uint8_t> encode_numerics_input(const NumericsInput& in) {
  std::vector<uint8_t> out;
  out.push_back(static_cast<uint8_t>(in.operation));
  out.push_back(static_cast<uint8_t>(static_cast<unsigned>(in.nan_rule) | (static_cast<unsigned>(in.overflow) << 2) |
                                     (static_cast<unsigned>(in.style) << 3) |
                                     (static_cast<unsigned>(in.minus_terms) << 4) |
                                     (static_cast<unsigned>(in.plus_terms) << 6)));
  out.push_back(static_cast<uint8_t>((in.input_misalignment & 15) | ((in.output_misalignment & 15) << 4)));
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(in.divisor_bits >> (8 * i)));
  for (uint16_t v : in.bf16) {
    out.push_back(static_cast<uint8_t>(v));
    out.push_back(static_cast<uint8_t>(v >> 8));
  }
  for (uint32_t v : in.f32) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  return out;
}

}  // namespace qcheck::fuzzing
