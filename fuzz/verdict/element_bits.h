// What an element's bits mean, per element type: how to load them, which are
// NaN, their value and their place in the format's numeric order. The
// comparer classifies mismatches with these and reports print values with
// them. Bits are compared as integers; values are only for reports.
//
// A kE2m1x2 element is a byte holding two codes (low nibble first); it is
// loaded as a byte and compared code by code: a mismatch of such a tensor
// carries one code's bits, and its dim counts codes (2 * byte + nibble).
#pragma once

#include <cstdint>

#include "fuzz/case/tensor_plan.h"

namespace qcheck {

// Bits of one element at p (the low 32 bits of an int64).
uint32_t load_bits(const uint8_t* p, ElementType type);

// Codes in one element (2 for kE2m1x2, else 1) and code k of its bits.
int codes_per_element(ElementType type);
uint32_t code_of(ElementType type, uint32_t element_bits, int k);

// For one code's bits:
bool is_nan_code(ElementType type, uint32_t bits);
// Float formats have a sign bit and zeros (+0 and -0, or only 0); integer
// and scale types compare as numbers.
bool is_float_type(ElementType type);
uint32_t sign_mask(ElementType type);  // 0 for types without a sign bit
// Position in the numeric order: adjacent codes one apart, +0 and -0 both 0.
int64_t order_key(ElementType type, uint32_t bits);
// The value (floats widened exactly, NaN as NaN, integers as integers).
double decode_code(ElementType type, uint32_t bits);
// The smallest positive normal value of a float format (0 for the others).
double min_normal(ElementType type);

}  // namespace qcheck
