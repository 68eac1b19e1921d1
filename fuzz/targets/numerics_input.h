// The byte layout of the `numerics` fuzz target's inputs: one call of one
// RowOps entry (numerics/row_ops.h) with its rules and its row.
//
//   byte 0     operation (mod 7): f32_from_bf16_row, bf16_from_f32_row,
//              quantize_row, amax_row, rope_row, rope_bf16_rows, indexer_rows
//   byte 1     rules: bits 0-1 Bf16Nan (mod 3), bit 2 E4m3Overflow,
//              bit 3 RopeStyle, bits 4-5 minus-terms Contraction (mod 3),
//              bits 6-7 plus-terms Contraction (mod 3)
//   byte 2     misalignment in elements: bits 0-3 input, bits 4-7 output
//   bytes 3-6  the quantize divisor, fp32 bits, little-endian; for the two
//              "rows" entries a shape word instead (FusedRowsShape below)
//   the rest   the row: bf16 values (uint16 LE) for f32_from_bf16_row, else
//              fp32 values (uint32 LE); for rope_row the first half of the
//              floats is x, then R/2 cos and R/2 sin (R even); for the "rows"
//              entries R/2 cos, R/2 sin, then the bf16 rows, two per word
//
// Any byte string decodes (short ones as an empty row): the target never
// refuses, so every byte libFuzzer flips reaches the row functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "numerics/profile.h"
#include "ops/fused_q/args/fused_q_args.h"

namespace qcheck::fuzzing {

enum class RowOperation : uint8_t {
  kF32FromBf16 = 0, kBf16FromF32, kQuantize, kAmax, kRope, kRopeBf16Rows, kIndexerRows
};
constexpr int kRowOperationCount = 7;
constexpr size_t kNumericsHeaderBytes = 7;
constexpr size_t kNumericsMaxElements = 4096;

struct NumericsInput {
  RowOperation operation = RowOperation::kF32FromBf16;
  Bf16Nan nan_rule = Bf16Nan::k7FFF;
  E4m3Overflow overflow = E4m3Overflow::kSatFinite;
  RopeStyle style = RopeStyle::kNeox;
  Contraction minus_terms = Contraction::kFuseCos;
  Contraction plus_terms = Contraction::kFuseCos;
  unsigned input_misalignment = 0;   // elements, 0..15
  unsigned output_misalignment = 0;  // elements, 0..15
  uint32_t divisor_bits = 0x3F800000u;
  std::vector<uint16_t> bf16;  // the row of f32_from_bf16_row
  std::vector<uint32_t> f32;   // the row of every other operation (rope: x, cos, sin)
};

// The shape word of rope_bf16_rows and indexer_rows (bytes 3-6 as uint32):
//   bits 0-1 rows - 1; bit 2 indexer bf16 round trip before quantizing;
//   bit 3 ScaleCeiling; bits 4-5 ScaleFloor (mod 3); bits 8-17 the row
//   length (dim, mod 513; R = dim rounded down to even for rope_bf16_rows);
//   bits 18-27 the indexer's rope_dim (at most dim, rounded down to even).
struct FusedRowsShape {
  size_t rows, dim, rope_dim;
  bool bf16_before_quant;
  ScaleCeiling ceiling;
  ScaleFloor floor;
};
FusedRowsShape fused_rows_shape(uint32_t word, size_t max_length);

// Never fails; rows longer than kNumericsMaxElements are cut.
NumericsInput decode_numerics_input(const uint8_t* data, size_t size);

// The bytes that decode to `input` (used by the seed corpus generator).
std::vector<uint8_t> encode_numerics_input(const NumericsInput& input);

const char* name_of(RowOperation operation);

}  // namespace qcheck::fuzzing
