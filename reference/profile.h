// A Profile names every convention where correct implementations of fused_q
// are allowed to differ (or where real code has shipped a wrong twin). The
// oracle follows exactly one profile; it never widens a tolerance instead.
// Source of every variant: ../shared/SEMANTICS.md ("Numeric building blocks"
// and "What the H200 measurement showed").
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
enum class ScaleCeiling : uint8_t { kExactBits = 0, kLog2f = 1 };

// Where the floor of the scale applies.
//   kAmax1e4:  amax = max(amax, 1e-4f) before the division (default).
//   kScale1e4: scale = ceil(max(RN(amax / 448), 1e-4f)) (FlashMLA's test quantizer).
//   kAmax1e10: amax = max(amax, 1e-10f) (vLLM's older unfused path).
enum class ScaleFloor : uint8_t { kAmax1e4 = 0, kScale1e4 = 1, kAmax1e10 = 2 };

// Division of the MQA fp8 path (x / q_scale).
//   kIeee:          correctly rounded division.
//   kDivFullPow2:   PTX div.full.f32, modelled only where it is exact: q_scale
//                   a power of two (the oracle refuses other q_scale).
enum class Division : uint8_t { kIeee = 0, kDivFullPow2 = 1 };

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

// Order of the three fp32 roundings of the indexer weight.
//   kScaleSoftmaxHead: ((w * scale) * softmax_scale) * head_scale (vLLM, SEMANTICS.md).
//   kFoldedScales:     (w * scale) * RN(softmax_scale * head_scale) (a wrong twin).
enum class WeightsOrder : uint8_t { kScaleSoftmaxHead = 0, kFoldedScales = 1 };

struct Profile {
  std::string name;
  Contraction mqa_fp8_r1 = Contraction::kFuseCos;
  Contraction mqa_fp8_r2 = Contraction::kFuseCos;
  Contraction mqa_bf16_r1 = Contraction::kFuseCos;
  Contraction mqa_bf16_r2 = Contraction::kFuseCos;
  Contraction indexer = Contraction::kFuseCos;
  ScaleCeiling scale_ceiling = ScaleCeiling::kExactBits;
  ScaleFloor scale_floor = ScaleFloor::kAmax1e4;
  Division mqa_division = Division::kIeee;
  Bf16Nan bf16_nan = Bf16Nan::k7FFF;
  F32Nan f32_nan = F32Nan::kCanonical;
  E4m3Overflow e4m3_overflow = E4m3Overflow::kSatFinite;
  WeightsOrder weights_order = WeightsOrder::kScaleSoftmaxHead;
  // DeepSeek's reference rounds the RoPE'd indexer row to bf16 before the
  // quantization; vLLM does not (SEMANTICS.md, task 2).
  bool indexer_bf16_before_quant = false;
};

// The profile this project's kernels implement: cos product fused everywhere,
// exact ceiling, IEEE division, NaN -> 0x7FFF / 0x7F / 0x7FFFFFFF, saturating e4m3.
Profile qcheck_profile();
// The patterns measured on the H200 for vLLM's Triton kernel (c0233fcf).
Profile vllm_triton_profile();

// Looks a named profile up ("qcheck", "vllm-triton"). Returns false when the
// name is unknown; profile_names() lists the known ones for the message.
bool find_profile(const std::string& name, Profile* out);
std::vector<std::string> profile_names();

// One line per field, for reports and --help.
std::string describe(const Profile& profile);

}  // namespace qcheck
