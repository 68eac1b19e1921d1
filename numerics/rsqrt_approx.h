// The Hopper GPUs' approximate reciprocal square root (PTX rsqrt.approx.f32
// and rsqrt.approx.ftz.f32 on sm_90: what Triton's tl.rsqrt and CUDA's rsqrtf
// compile to), bit for bit on the CPU. Measured on the device
// (tools/rsqrt_table): for a normal x the result is a function of the
// mantissa and of the exponent's parity alone, within -2..+1 ulp of the
// correctly rounded rsqrt_rn(x). So a table of 2^24 two-bit corrections,
// indexed by (parity, mantissa), added to rsqrt_rn's bits reproduces it; the
// GPU gate's sweep (tests/gpu) compares every f32 with the hardware.
#pragma once

#include <cstddef>
#include <cstdint>

namespace qcheck::spec {

// Entry i (i = (exponent & 1) << 23 | mantissa) is the 2 bits at byte i / 4,
// bits 2 * (i % 4) and up: the hardware's bits minus rsqrt_rn's, plus 2.
constexpr size_t kRsqrtApproxEntries = size_t{1} << 24;
constexpr size_t kRsqrtApproxTableBytes = kRsqrtApproxEntries / 4;

// The entry of a positive normal f32's bits.
inline uint32_t rsqrt_approx_index(uint32_t bits) { return (((bits >> 23) & 1u) << 23) | (bits & 0x7FFFFFu); }

// The instruction's value from a correction table (the embedded one, or one
// being generated). ftz: subnormal inputs are zeros of their sign (+-Inf);
// otherwise a subnormal x is taken as x * 2^24 and its result times 2^12.
// x = +-0: +-Inf; x < 0 and NaN: 0x7FFFFFFF (the GPU's canonical NaN);
// +Inf: +0.
float rsqrt_approx_with(const uint8_t* table, float x, bool ftz);

// The table measured on the device (numerics/rsqrt_approx_table.bin, in the
// library), its size (kRsqrtApproxTableBytes unless the file was cut), and
// the instruction's value from it: rsqrt.approx.ftz.f32 with ftz, else
// rsqrt.approx.f32 (CUDA's rsqrtf).
const uint8_t* rsqrt_approx_table();
size_t rsqrt_approx_table_bytes();
float rsqrt_approx(float x, bool ftz);

}  // namespace qcheck::spec
