// The conventions every op of the family shares, as plain enums: how a RoPE
// row pairs its elements and which float type a tensor holds. The numerics
// (rope.h, row_ops.h, the SIMD rows) take them, and each op's launch
// arguments name them (ops/fused_q/args/fused_q_args.h); no op's header is
// needed to use them. name_of gives the names the case forms and reports use.
#pragma once

#include <cstdint>

namespace qcheck {

enum class RopeStyle : uint8_t { kNeox = 0, kInterleaved = 1 };
enum class FloatType : uint8_t { kF32 = 0, kBf16 = 1 };

inline const char* name_of(RopeStyle style) { return style == RopeStyle::kNeox ? "neox" : "interleaved"; }
inline const char* name_of(FloatType type) { return type == FloatType::kF32 ? "f32" : "bf16"; }

}  // namespace qcheck
