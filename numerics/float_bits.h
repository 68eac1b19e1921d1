// Bit-level views of floating-point values. Verdicts compare these integers,
// never floats: float == equates -0 with +0 and fails every NaN.
#pragma once

#include <cstdint>
#include <cstring>

namespace qcheck {

inline uint32_t bits_of(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

inline float float_from_bits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

constexpr uint32_t kF32SignMask = 0x80000000u;
constexpr uint32_t kF32AbsMask = 0x7FFFFFFFu;
constexpr uint32_t kF32ExponentMask = 0x7F800000u;
constexpr uint32_t kF32InfBits = 0x7F800000u;

inline bool is_nan_bits(uint32_t bits) { return (bits & kF32AbsMask) > kF32InfBits; }

}  // namespace qcheck
