// A Profile names every convention where correct implementations of fused_q
// are allowed to differ (or where real code has shipped a wrong twin). The
// oracle follows exactly one profile; it never widens a tolerance instead.
// Source of every variant: ../shared/SEMANTICS.md ("Numeric building blocks"
// and "What the H200 measurement showed").
// The table lives with the family's numerics because its conventions (the
// contraction patterns, the UE8M0 ceiling and floor, the quotients, the NaN
// bits, the e4m3 overflow) are the family's. It still names fused_q's sites
// (mqa_fp8_r1 .. indexer_plus, mqa_division, weights_order) and its named
// profiles; a later step splits those into ops/fused_q/oracle.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace qcheck {

// Which of the two products of a RoPE term is fused into an FMA. For
// r = a*c + b*s (b carrying the sign of the formula):
//   kNone:    RN(RN(a*c) + RN(b*s))
//   kFuseCos: fma(a, c, RN(b*s))
//   kFuseSin: fma(b, s, RN(a*c))
enum class Contraction : uint8_t { kNone = 0, kFuseCos = 1, kFuseSin = 2 };

// How the power-of-two ceiling of s0 = RN(amax / 448) is taken.
//   kExactBits: (bits(s0) + 0x7FFFFF) & 0x7F800000 (DeepGEMM, DeepSeek reference).
//   kLog2f:     exp2(ceil(log2f(s0))) with log2f rounded to fp32 (vLLM Triton).
//   kNone:      no ceiling: the scale is s0 itself, not a power of two
//               (SGLang's fused indexer query).
enum class ScaleCeiling : uint8_t { kExactBits = 0, kLog2f = 1, kNone = 2 };

// How s0 comes from amax.
//   kDivide:          RN(amax / 448) (vLLM Triton, DeepGEMM).
//   kTimesReciprocal: RN(amax * RN(1/448)) (vLLM CuTe DSL, DeepSeek reference,
//                     SGLang Triton, TensorRT-LLM); 1/448 is not exact, so
//                     s0 differs for some amax.
enum class ScaleQuotient : uint8_t { kDivide = 0, kTimesReciprocal = 1 };

// How a quotient x / d (an indexer code over its scale, an MQA element over
// q_scale) is taken.
//   kDivide:          RN(x / d).
//   kTimesReciprocal: RN(x * RN(1/d)); the same as kDivide when d is a power
//                     of two (the reciprocal is exact).
enum class Quotient : uint8_t { kDivide = 0, kTimesReciprocal = 1 };

// What a NaN element does to the row's amax.
//   kIgnore:    maxnum: NaN lanes are skipped (fmaxf, Triton's tl.max).
//   kPropagate: the amax is NaN, and stays NaN through the floor (torch.amax
//               and torch.clamp): scale NaN, every code of the row NaN.
enum class AmaxNan : uint8_t { kIgnore = 0, kPropagate = 1 };

// Where the floor of the scale applies.
//   kAmax1e4:  amax = max(amax, 1e-4f) before the division (default).
//   kScale1e4: scale = ceil(max(RN(amax / 448), 1e-4f)) (FlashMLA's test quantizer).
//   kAmax1e10: amax = max(amax, 1e-10f) (vLLM's older unfused path).
enum class ScaleFloor : uint8_t { kAmax1e4 = 0, kScale1e4 = 1, kAmax1e10 = 2 };

// Division of the MQA fp8 path (x / q_scale).
//   kIeee:             correctly rounded division.
//   kDivFull:          PTX div.full.f32 (Triton's '/'): exact where q_scale is
//                      a power of two; otherwise its bits are unspecified
//                      within 2 ulp, and the verdict accepts the code of every
//                      quotient within 2 ulp of RN(x / q_scale) (fuzz/verdict/judge.h).
//                      The expected set holds the IEEE codes.
//   kTimesReciprocal:  x * RN(1 / q_scale) (vLLM CuTe DSL).
//   kIeeeMinus2Ulp, kIeeePlus2Ulp: the IEEE quotient moved 2 ulp down / up
//                      (never across zero): the bounds of kDivFull's
//                      acceptance set, used only by the verdict.
enum class Division : uint8_t {
  kIeee = 0,
  kDivFull = 1,
  kTimesReciprocal = 2,
  kIeeeMinus2Ulp = 3,
  kIeeePlus2Ulp = 4,
};

// Bits of a bf16 NaN produced by a conversion.
//   k7FFF:         every NaN -> 0x7FFF (H200 cvt.rn.bf16.f32, __float2bfloat16_rn).
//   k7FC0:         every NaN -> 0x7FC0 (PyTorch on the CPU).
//   kKeepSignQuiet: sign and top payload kept, quiet bit set (ml_dtypes).
enum class Bf16Nan : uint8_t { k7FFF = 0, k7FC0 = 1, kKeepSignQuiet = 2 };

// Bits of an fp32 NaN that arithmetic produces and a kernel stores (the fp32
// indexer weights: ((w * scale) * softmax_scale) * head_scale).
//   kCanonical:     every NaN result is 0x7FFFFFFF (NVIDIA GPUs: fmul/fma of
//                   sm_20 and later; measured on the H200 on the weights).
//   kHostPropagate: the host's IEEE arithmetic (x86 SSE: the first NaN
//                   operand, quieted, so the input's sign and payload survive).
enum class F32Nan : uint8_t { kCanonical = 0, kHostPropagate = 1 };

// What an e4m3 conversion does above 448 (after rounding) and with Inf/NaN.
//   kSatFinite: PTX cvt.rn.satfinite: overflow and +-Inf -> +-448, NaN -> 0x7F.
//   kNan:       PyTorch eager, ml_dtypes: overflow and +-Inf -> NaN with the
//               input's sign (0x7F / 0xFF), NaN keeps its sign.
enum class E4m3Overflow : uint8_t { kSatFinite = 0, kNan = 1 };

// Order of the fp32 roundings of the indexer weight.
//   kScaleSoftmaxHead: ((w * scale) * softmax_scale) * head_scale (vLLM Triton, SEMANTICS.md).
//   kFoldedScales:     (w * scale) * RN(softmax_scale * head_scale) (vLLM CuTe DSL).
//   kFoldedThenScale:  (w * RN(softmax_scale * head_scale)) * scale (SGLang's
//                      fused indexer query).
enum class WeightsOrder : uint8_t { kScaleSoftmaxHead = 0, kFoldedScales = 1, kFoldedThenScale = 2 };

struct Profile {
  std::string name;
  Contraction mqa_fp8_r1 = Contraction::kFuseCos;
  Contraction mqa_fp8_r2 = Contraction::kFuseCos;
  Contraction mqa_bf16_r1 = Contraction::kFuseCos;
  Contraction mqa_bf16_r2 = Contraction::kFuseCos;
  Contraction indexer_minus = Contraction::kFuseCos;  // r_j with sign - (x_j*c - x_partner*s)
  Contraction indexer_plus = Contraction::kFuseCos;   // r_j with sign +
  ScaleCeiling scale_ceiling = ScaleCeiling::kExactBits;
  ScaleFloor scale_floor = ScaleFloor::kAmax1e4;
  ScaleQuotient scale_quotient = ScaleQuotient::kDivide;
  AmaxNan amax_nan = AmaxNan::kIgnore;
  Quotient indexer_codes = Quotient::kDivide;  // x / scale
  Division mqa_division = Division::kIeee;
  Bf16Nan bf16_nan = Bf16Nan::k7FFF;
  F32Nan f32_nan = F32Nan::kCanonical;
  E4m3Overflow e4m3_overflow = E4m3Overflow::kSatFinite;
  WeightsOrder weights_order = WeightsOrder::kScaleSoftmaxHead;
  // DeepSeek's reference rounds the RoPE'd indexer row to bf16 before the
  // quantization; vLLM does not (SEMANTICS.md, task 2).
  bool indexer_bf16_before_quant = false;
  // An acceptance set instead of one pattern: each output row may follow any
  // of the nine (minus terms, plus terms) contraction patterns, one pattern
  // per row (the name's suffix "+any-fma"; fuzz/verdict/judge.h).
  bool any_contraction = false;
};

// The profile this project's kernels implement: cos product fused everywhere,
// exact ceiling, IEEE division, NaN -> 0x7FFF / 0x7F / 0x7FFFFFFF, saturating e4m3.
Profile qcheck_profile();
// The patterns measured on the H200 for vLLM's Triton kernel (c0233fcf).
Profile vllm_triton_profile();
// The other named profiles are documented, each with its source, in
// numerics/profile.cc.

// Looks a named profile up: a name of profile_names(), optionally with the
// suffix "+any-fma" (any_contraction). Returns false when the name is
// unknown.
bool find_profile(const std::string& name, Profile* out);
// "qcheck", "vllm-triton", "exact-reciprocal", "plain-scale", "torch-eager", "flashmla".
std::vector<std::string> profile_names();

// One line per field, for reports and --help.
std::string describe(const Profile& profile);

}  // namespace qcheck
