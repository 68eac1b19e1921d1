#include "fuzz/verdict/element_bits.h"

#include <cmath>
#include <cstring>

#include "numerics/conversions.h"
#include "numerics/e2m1.h"
#include "numerics/e4m3fnuz.h"
#include "numerics/float_bits.h"

namespace qcheck {

uint32_t load_bits(const uint8_t* p, ElementType type) {
  switch (element_bytes(type)) {
    case 1: return p[0];
    case 2: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    default: {  // 4 bytes, or the low 4 of an int64
      uint32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
  }
}

int codes_per_element(ElementType type) { return type == ElementType::kE2m1x2 ? 2 : 1; }

uint32_t code_of(ElementType type, uint32_t element_bits, int k) {
  return type == ElementType::kE2m1x2 ? (element_bits >> (4 * k)) & 0xFu : element_bits;
}

bool is_float_type(ElementType type) {
  switch (type) {
    case ElementType::kF32:
    case ElementType::kBf16:
    case ElementType::kE4m3:
    case ElementType::kE2m1x2:
    case ElementType::kE4m3fnuz: return true;
    case ElementType::kInt64:
    case ElementType::kInt32:
    case ElementType::kU8:
    case ElementType::kUe8m0: return false;
  }
  return false;
}

uint32_t sign_mask(ElementType type) {
  switch (type) {
    case ElementType::kE4m3:
    case ElementType::kE4m3fnuz: return 0x80u;
    case ElementType::kE2m1x2: return 0x8u;
    case ElementType::kBf16: return 0x8000u;
    case ElementType::kF32: return 0x80000000u;
    default: return 0;
  }
}

bool is_nan_code(ElementType type, uint32_t bits) {
  switch (type) {
    case ElementType::kE4m3: return (bits & 0x7Fu) == 0x7Fu;  // E4M3FN: no Inf, 0x7F/0xFF NaN
    case ElementType::kE4m3fnuz: return bits == spec::kE4m3FnuzNan;
    case ElementType::kBf16: return (bits & 0x7FFFu) > 0x7F80u;
    case ElementType::kF32: return is_nan_bits(bits);
    case ElementType::kUe8m0: return bits == 0xFFu;
    default: return false;  // e2m1 and the integers have no NaN
  }
}

int64_t order_key(ElementType type, uint32_t bits) {
  switch (type) {
    case ElementType::kInt32: return static_cast<int32_t>(bits);
    case ElementType::kInt64: return static_cast<int32_t>(bits);  // the low 32 bits the comparer loads
    case ElementType::kU8:
    case ElementType::kUe8m0: return bits;
    default: {
      // Sign-magnitude to a signed integer, so adjacent codes differ by one.
      const uint32_t magnitude = bits & ~sign_mask(type);
      return (bits & sign_mask(type)) ? -int64_t(magnitude) : int64_t(magnitude);
    }
  }
}

double decode_code(ElementType type, uint32_t bits) {
  switch (type) {
    case ElementType::kE4m3: return spec::f32_from_e4m3(static_cast<uint8_t>(bits));
    case ElementType::kE4m3fnuz: return spec::f32_from_e4m3fnuz(static_cast<uint8_t>(bits));
    case ElementType::kE2m1x2: return spec::f32_from_e2m1(static_cast<uint8_t>(bits & 0xFu));
    case ElementType::kBf16: return spec::f32_from_bf16(static_cast<uint16_t>(bits));
    case ElementType::kF32: return float_from_bits(bits);
    case ElementType::kUe8m0: return bits == 0xFFu ? NAN : std::ldexp(1.0, int(bits) - 127);
    case ElementType::kInt32:
    case ElementType::kInt64: return static_cast<int32_t>(bits);
    case ElementType::kU8: return bits;
  }
  return 0;
}

double min_normal(ElementType type) {
  switch (type) {
    case ElementType::kE4m3: return std::ldexp(1.0, -6);
    case ElementType::kE4m3fnuz: return std::ldexp(1.0, -7);
    case ElementType::kE2m1x2: return 1.0;
    case ElementType::kBf16:
    case ElementType::kF32: return std::ldexp(1.0, -126);
    default: return 0;
  }
}

}  // namespace qcheck
