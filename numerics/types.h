// The conventions every op of the family shares, as plain enums: how a RoPE
// row pairs its elements, which float type a tensor holds, and how f32 values
// become the narrow codes e4m3fnuz and e2m1 (e4m3fnuz.h, e2m1.h). The numerics
// (rope.h, row_ops.h, the SIMD rows) take them, and each op's launch
// arguments name them (ops/fused_q/args/fused_q_args.h); no op's header is
// needed to use them. name_of gives the names the case forms and reports use.
#pragma once

#include <cstdint>

namespace qcheck {

enum class RopeStyle : uint8_t { kNeox = 0, kInterleaved = 1 };
enum class FloatType : uint8_t { kF32 = 0, kBf16 = 1 };

// What f32 -> e4m3fnuz (AMD's FP8: max 240, 0x80 the only NaN, no -0, no Inf)
// does with values that round above 240 and with +-Inf. Every rule rounds to
// nearest even, sends NaN to 0x80 and a result that rounds to zero to 0x00.
// The encoders we read disagree here (which one a ROCm kernel's cast follows
// is still to measure: SEMANTICS-K.md section 8):
//   kSatFinite:       finite overflow and +-Inf -> +-240 (0x7F / 0xFF): the
//                     analogue of PTX cvt.rn.satfinite (e4m3s), qcheck's choice.
//   kSatFiniteInfNan: finite overflow -> +-240, +-Inf -> 0x80: AMD's software
//                     cast (hip_fp8_impl::cast_to_f8 with clip, as public
//                     copies of it read), which sends Inf and NaN to 0x80
//                     before it rounds or clips.
//   kNan:             finite overflow and +-Inf -> 0x80: ml_dtypes'
//                     float8_e4m3fnuz (0.5.4, checked over all 2^32 inputs).
// Not modelled: the same cast_to_f8 without clip returns (sign << 7) | 0x78
// for a finite overflow (an all-ones exponent and a zero mantissa: the Inf of
// IEEE-like formats), which in e4m3fnuz is the finite +-128; read in public
// copies only, not seen in a kernel of the family.
enum class E4m3FnuzOverflow : uint8_t { kSatFinite = 0, kSatFiniteInfNan = 1, kNan = 2 };

// How f32 -> e2m1 (FP4: 0, 0.5, 1, 1.5, 2, 3, 4, 6 and sign bit 3) rounds
// (SEMANTICS-K.md section 0 "e2m1s" and table 5.4). |x| > 6 and +-Inf give
// +-6 under every rule.
//   kCvtRn:            PTX cvt.rn.satfinite.e2m1x2: round to nearest even;
//                      a negative value that rounds to zero keeps its sign
//                      (0x8). vLLM's Triton and CuTeDSL MXFP4 kernels.
//   kCvtRnNoNegZero:   the same, then 0x8 becomes 0x0 (SGLang's two-stage
//                      FP4 quantizer adds +0.0 before the cvt).
//   kSglangThresholds: SGLang's quant_fp4_e2m1: |x| clamped to 6, the code
//                      counts the thresholds 0.25 0.75 1.25 1.75 2.5 3.5 5
//                      that |x| exceeds, so ties round toward zero; no -0;
//                      NaN -> 6.
enum class E2m1Rounding : uint8_t { kCvtRn = 0, kCvtRnNoNegZero = 1, kSglangThresholds = 2 };

// The order of a float sum's additions (the norm ops' RMSNorm and LayerNorm:
// their bits depend on it; numerics/reduction.h computes each exactly). Every
// partial sum but a Triton block's starts at +0, as a kernel's accumulator
// does, and `lanes` (a power of two) is the number of partial sums a parallel
// order keeps.
//   kSequential:   one sum, x[0], x[1], ... in order (a loop in one thread).
//   kPairwise:     adjacent pairs level by level, the row padded with +0 to
//                  a power of two (a balanced tree).
//   kStridedLanes: lane l adds x[l], x[l + lanes], ... in order, then a
//                  butterfly over the lanes (offsets lanes/2 .. 1, as a CUDA
//                  warp's __shfl_xor_sync reduction does).
//   kBlockedLanes: lane l adds its own contiguous chunk of ceil(n / lanes)
//                  in order, then the butterfly (a thread's registers
//                  first, then the warp).
//   kTritonBlock:  Triton 3.6's tl.sum over a 1-D block, as measured on
//                  sm_90 (tools/triton_probe): the block's blocked layout
//                  gives thread t (of 32 * warps) size_per_thread
//                  contiguous elements of every chunk of
//                  size_per_thread * 32 * warps; each thread folds its
//                  registers left to right starting from its first element
//                  (no +0), then a butterfly over the lanes of each warp
//                  (offsets 16 .. 1), then over the warps (warps/2 .. 1).
//                  Elements past the row are +0 (the masked load's other).
// Which order a given Triton tl.sum or CUDA kernel uses is measured, not
// assumed (issue 38); this names the shapes the oracle can compute.
enum class ReductionOrder : uint8_t {
  kSequential = 0,
  kPairwise = 1,
  kStridedLanes = 2,
  kBlockedLanes = 3,
  kTritonBlock = 4,
};

// How a sum of squares rounds each square (numerics/reduction.h).
//   kRounded: every x * x rounded to f32, then added in the order's way.
//   kFused:   the multiply contracted into the order's additions, as LLVM
//             does by default (Triton; nvcc's `acc += x * x`): an
//             accumulator from +0 takes fma(x, x, acc); a Triton thread's
//             first two squares are fma(a0, a0, RN(a1^2)) (the PTX of
//             tl.sum(x * x) on sm_90: mul of the second element, then
//             fma of the first, third, ...); a thread of one element keeps
//             RN(a^2) and its first butterfly step is fma(a, a, partner's
//             RN(a^2)) (LLVM's rule for an add of a multiply; Triton's
//             LayerNorm variance over 128 lanes, one a thread, gives it on
//             256 of 256 device rows, rounded squares on 223); a pairwise
//             tree's first level is
//             fma(x0, x0, RN(x1^2)).
enum class SquareStep : uint8_t { kRounded = 0, kFused = 1 };

inline const char* name_of(RopeStyle style) { return style == RopeStyle::kNeox ? "neox" : "interleaved"; }
inline const char* name_of(FloatType type) { return type == FloatType::kF32 ? "f32" : "bf16"; }
inline const char* name_of(ReductionOrder order) {
  switch (order) {
    case ReductionOrder::kSequential: return "sequential";
    case ReductionOrder::kPairwise: return "pairwise";
    case ReductionOrder::kStridedLanes: return "strided-lanes";
    case ReductionOrder::kBlockedLanes: return "blocked-lanes";
    case ReductionOrder::kTritonBlock: return "triton-block";
  }
  return "?";
}
inline const char* name_of(SquareStep step) { return step == SquareStep::kRounded ? "squares-rounded" : "squares-fused"; }
inline const char* name_of(E4m3FnuzOverflow rule) {
  switch (rule) {
    case E4m3FnuzOverflow::kSatFinite: return "satfinite";
    case E4m3FnuzOverflow::kSatFiniteInfNan: return "satfinite-inf-nan";
    case E4m3FnuzOverflow::kNan: return "overflow-nan";
  }
  return "?";
}
inline const char* name_of(E2m1Rounding rule) {
  switch (rule) {
    case E2m1Rounding::kCvtRn: return "cvt-rn";
    case E2m1Rounding::kCvtRnNoNegZero: return "cvt-rn-no-neg-zero";
    case E2m1Rounding::kSglangThresholds: return "sglang-thresholds";
  }
  return "?";
}

}  // namespace qcheck
