// Scalar spec of the quotients a fused_q kernel encodes into e4m3: an
// indexer element over its row scale, an MQA element over q_scale. Which
// rule applies is a profile's choice (numerics/profile.h: Quotient,
// Division).
#pragma once

#include <cstdint>

#include "numerics/profile.h"

namespace qcheck::spec {

// x / d under the rule: RN(x / d), or RN(x * RN(1 / d)).
float quotient(float x, float d, Quotient rule);

// x / q_scale under the MQA division rule. kDivFull gives the IEEE quotient
// (the centre of its acceptance set); kIeeeMinus2Ulp / kIeeePlus2Ulp the
// IEEE quotient moved two fp32 steps down / up, stopping at a zero of the
// same sign (Inf and NaN stay).
float mqa_quotient(float x, float q_scale, Division rule);

// True when every x / q_scale under `rule` equals RN(x / q_scale) for this
// q_scale: kIeee, or q_scale a power of two (its reciprocal is exact, and
// div.full is exact there) for kDivFull and kTimesReciprocal.
bool division_is_ieee(Division rule, float q_scale);

// The e4m3 code of a quotient: a NaN quotient is first pinned to the
// canonical 0x7FFFFFFF that GPU arithmetic produces (every profile models
// a kernel on the GPU), so the non-saturating rule gives 0x7F for it.
uint8_t e4m3_of_quotient(float q, E4m3Overflow overflow);

}  // namespace qcheck::spec
