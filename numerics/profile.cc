#include "numerics/profile.h"

#include <sstream>

namespace qcheck {

// The named profiles are fused_q's for now (numerics/profile.h says why they
// sit here). Each profile below names a convention of a real implementation. Sources:
// ../shared/SEMANTICS.md, "Other implementations" (read from their public
// sources, 2026-12) and "What the H200 measurement showed". Fields not set
// keep this project's conventions (Profile's defaults).

Profile qcheck_profile() {
  Profile p;  // The defaults are this project's conventions.
  p.name = "qcheck";
  return p;
}

Profile vllm_triton_profile() {
  // vLLM's Triton fused_q (c0233fcf): bit-exact matches on the H200 only
  // with these contraction patterns and the log2f ceiling. Its MQA fp8
  // division is Triton's '/', div.full.f32: exact for a power-of-two q_scale,
  // an acceptance set of codes within 2 ulp otherwise.
  Profile p;
  p.name = "vllm-triton";
  p.mqa_fp8_r1 = Contraction::kFuseSin;
  p.mqa_fp8_r2 = Contraction::kFuseSin;
  p.mqa_bf16_r1 = Contraction::kFuseCos;
  p.mqa_bf16_r2 = Contraction::kFuseSin;
  p.scale_ceiling = ScaleCeiling::kLog2f;
  p.mqa_division = Division::kDivFull;
  return p;
}

namespace {

Profile exact_reciprocal_profile() {
  // vLLM's CuTe DSL fused_q: s0 = amax * (1/448) (the fp32 constant), the
  // exact bit ceiling, codes times the exact reciprocal, MQA x * (1/q_scale),
  // weights w * scale * (softmax_scale * head_scale) with the constants
  // folded first. Its contraction is not known: this project's patterns.
  Profile p;
  p.name = "exact-reciprocal";
  p.scale_quotient = ScaleQuotient::kTimesReciprocal;
  p.indexer_codes = Quotient::kTimesReciprocal;
  p.mqa_division = Division::kTimesReciprocal;
  p.weights_order = WeightsOrder::kFoldedScales;
  return p;
}

Profile plain_scale_profile() {
  // SGLang's fused indexer query (JIT CUDA): the scale is not a power of
  // two, max(amax, 1e-4) / 448, codes x * (1/scale), weights
  // w * (softmax_scale * head_scale) * scale.
  Profile p;
  p.name = "plain-scale";
  p.scale_ceiling = ScaleCeiling::kNone;
  p.indexer_codes = Quotient::kTimesReciprocal;
  p.weights_order = WeightsOrder::kFoldedThenScale;
  return p;
}

Profile torch_eager_profile() {
  // The reference people write in PyTorch eager as a test oracle, run on the
  // GPU (python/examples/torch_eager_fused_q.py): one op per product (no
  // FMA); torch.amax (NaN propagates, through clamp too); the
  // exp2(ceil(log2(.))) ceiling; .to(torch.float8_e4m3fn) (no saturation:
  // NaN above 464 and for Inf); weights one multiply at a time; bf16 and fp32
  // NaNs the device's (0x7FFF, 0x7FFFFFFF). A tensor divided by a Python
  // float is, on CUDA, a multiply by RN(1/d) (measured on the H200 with torch
  // 2.11: amax / 448.0 and x / q_scale; on the CPU torch divides exactly);
  // a tensor by a tensor (x / scale) is IEEE.
  Profile p;
  p.name = "torch-eager";
  p.mqa_fp8_r1 = p.mqa_fp8_r2 = p.mqa_bf16_r1 = p.mqa_bf16_r2 = Contraction::kNone;
  p.indexer_minus = p.indexer_plus = Contraction::kNone;
  p.scale_quotient = ScaleQuotient::kTimesReciprocal;
  p.mqa_division = Division::kTimesReciprocal;
  p.scale_ceiling = ScaleCeiling::kLog2f;
  p.amax_nan = AmaxNan::kPropagate;
  p.e4m3_overflow = E4m3Overflow::kNan;
  return p;
}

Profile flashmla_profile() {
  // FlashMLA's test quantizer: the 1e-4 floor applies to the scale, not to
  // amax (SEMANTICS.md, variant B).
  Profile p;
  p.name = "flashmla";
  p.scale_floor = ScaleFloor::kScale1e4;
  return p;
}

using ProfileMaker = Profile (*)();
struct NamedProfile {
  const char* name;
  ProfileMaker make;
};
constexpr NamedProfile kProfiles[] = {
    {"qcheck", qcheck_profile},
    {"vllm-triton", vllm_triton_profile},
    {"exact-reciprocal", exact_reciprocal_profile},
    {"plain-scale", plain_scale_profile},
    {"torch-eager", torch_eager_profile},
    {"flashmla", flashmla_profile},
};
constexpr char kAnyFmaSuffix[] = "+any-fma";

}  // namespace

bool find_profile(const std::string& name, Profile* out) {
  std::string base = name;
  const std::string suffix = kAnyFmaSuffix;
  const bool any = base.size() > suffix.size() && base.compare(base.size() - suffix.size(), suffix.size(), suffix) == 0;
  if (any) base.resize(base.size() - suffix.size());
  for (const NamedProfile& named : kProfiles) {
    if (base != named.name) continue;
    *out = named.make();
    out->name = name;
    out->any_contraction = any;
    return true;
  }
  return false;
}

std::vector<std::string> profile_names() {
  std::vector<std::string> names;
  for (const NamedProfile& named : kProfiles) names.push_back(named.name);
  return names;
}

namespace {
const char* name_of(Contraction c) {
  switch (c) {
    case Contraction::kNone: return "none";
    case Contraction::kFuseCos: return "fuse-cos";
    case Contraction::kFuseSin: return "fuse-sin";
  }
  return "?";
}

const char* name_of(ScaleCeiling c) {
  switch (c) {
    case ScaleCeiling::kExactBits: return "exact-bits";
    case ScaleCeiling::kLog2f: return "log2f";
    case ScaleCeiling::kNone: return "none (not a power of two)";
  }
  return "?";
}

const char* name_of(Division d) {
  switch (d) {
    case Division::kIeee: return "ieee";
    case Division::kDivFull: return "div.full (exact for a power-of-two q_scale, else within 2 ulp)";
    case Division::kTimesReciprocal: return "x*(1/q_scale)";
    case Division::kIeeeMinus2Ulp: return "ieee-2ulp";
    case Division::kIeeePlus2Ulp: return "ieee+2ulp";
  }
  return "?";
}

const char* name_of(WeightsOrder w) {
  switch (w) {
    case WeightsOrder::kScaleSoftmaxHead: return "((w*scale)*softmax)*head";
    case WeightsOrder::kFoldedScales: return "(w*scale)*(softmax*head)";
    case WeightsOrder::kFoldedThenScale: return "(w*(softmax*head))*scale";
  }
  return "?";
}
}  // namespace

std::string describe(const Profile& p) {
  std::ostringstream s;
  s << "profile " << p.name << ": mqa fp8 r1 " << name_of(p.mqa_fp8_r1) << ", r2 " << name_of(p.mqa_fp8_r2)
    << "; mqa bf16 r1 " << name_of(p.mqa_bf16_r1) << ", r2 " << name_of(p.mqa_bf16_r2) << "; indexer - "
    << name_of(p.indexer_minus) << ", + " << name_of(p.indexer_plus)
    << (p.any_contraction ? " (any pattern per row accepted)" : "") << "; scale "
    << (p.scale_quotient == ScaleQuotient::kDivide ? "amax/448" : "amax*(1/448)") << ", ceiling "
    << name_of(p.scale_ceiling) << ", floor "
    << (p.scale_floor == ScaleFloor::kAmax1e4    ? "amax>=1e-4"
        : p.scale_floor == ScaleFloor::kScale1e4 ? "scale>=1e-4"
                                                 : "amax>=1e-10")
    << ", amax NaN " << (p.amax_nan == AmaxNan::kIgnore ? "ignored" : "propagated") << ", codes "
    << (p.indexer_codes == Quotient::kDivide ? "x/scale" : "x*(1/scale)") << "; division " << name_of(p.mqa_division)
    << "; bf16 NaN "
    << (p.bf16_nan == Bf16Nan::k7FFF   ? "0x7FFF"
        : p.bf16_nan == Bf16Nan::k7FC0 ? "0x7FC0"
                                       : "keep-sign-quiet")
    << "; f32 NaN " << (p.f32_nan == F32Nan::kCanonical ? "0x7FFFFFFF" : "host-propagated") << "; e4m3 "
    << (p.e4m3_overflow == E4m3Overflow::kSatFinite ? "satfinite" : "overflow-nan") << "; weights "
    << name_of(p.weights_order) << (p.indexer_bf16_before_quant ? "; indexer row rounded to bf16 before quant" : "");
  return s.str();
}

}  // namespace qcheck
