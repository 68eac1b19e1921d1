// The canonical binary form of a Case: what libFuzzer mutates and what corpus
// files and crash artifacts hold.
//
//   magic "QCKC" | version (uint16, little-endian) | the fields of
//   fuzz/case/case_fields.h in order: integers int64, enums and bools one byte,
//   fp32 scales uint32, seed and memory limit uint64 (all little-endian),
//   profile as a length byte (<= 32) and that many bytes of [a-z0-9._-];
//   version 2 only: the value edits, a uint16 count (>= 1) and per edit its
//   tensor (one byte), row, rows, head, element, elements (int64) and bits
//   (uint64). A case without edits is written as version 1, so every case
//   file of version 1 keeps its bytes.
//   Version 3 names its op and schema (core/op/any_case.h, the form of every
//   op): this decoder reads it when the op is fused_q (schema 1), with the
//   same fields and an edit count that may be 0; an edit's tensor byte is
//   then an index into fused_q's tensor table, which lists the tensors in
//   TensorId's order, so it is the same byte. fused_q writes versions 1 and 2.
//
// Decoding is strict, so that decode then encode gives the same bytes (in
// the version read: encode_case for 1 and 2, encode_any_case for 3):
// truncation, a wrong magic or version, an out-of-range enum, a bool other
// than 0/1, a bad profile byte and trailing bytes are all refused. Decoding
// does not validate the case (validate_case does).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/case/case.h"

namespace qcheck {

constexpr uint16_t kCaseBinaryVersion = 1;           // without edits
constexpr uint16_t kCaseBinaryVersionWithEdits = 2;  // with value edits
constexpr char kCaseBinaryMagic[4] = {'Q', 'C', 'K', 'C'};

std::vector<uint8_t> encode_case(const Case& c);

// "" and *out set on success, else one line naming the field (out untouched).
std::string decode_case(const uint8_t* data, size_t size, Case* out);
inline std::string decode_case(const std::vector<uint8_t>& bytes, Case* out) {
  return decode_case(bytes.data(), bytes.size(), out);
}

// 16 hex digits of XXH64 over the binary form: names corpus files by content.
std::string case_digest(const Case& c);

}  // namespace qcheck
