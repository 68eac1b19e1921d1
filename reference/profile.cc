#include "reference/profile.h"

#include <sstream>

namespace qcheck {

Profile qcheck_profile() {
  Profile p;  // The defaults are this project's conventions.
  p.name = "qcheck";
  return p;
}

Profile vllm_triton_profile() {
  // SEMANTICS.md, "What the H200 measurement showed": bit-exact matches only
  // with these contraction patterns and the log2f ceiling.
  Profile p;
  p.name = "vllm-triton";
  p.mqa_fp8_r1 = Contraction::kFuseSin;
  p.mqa_fp8_r2 = Contraction::kFuseSin;
  p.mqa_bf16_r1 = Contraction::kFuseCos;
  p.mqa_bf16_r2 = Contraction::kFuseSin;
  p.indexer = Contraction::kFuseCos;
  p.scale_ceiling = ScaleCeiling::kLog2f;
  p.mqa_division = Division::kDivFullPow2;
  return p;
}

bool find_profile(const std::string& name, Profile* out) {
  if (name == "qcheck") {
    *out = qcheck_profile();
    return true;
  }
  if (name == "vllm-triton") {
    *out = vllm_triton_profile();
    return true;
  }
  return false;
}

std::vector<std::string> profile_names() { return {"qcheck", "vllm-triton"}; }

namespace {
const char* name_of(Contraction c) {
  switch (c) {
    case Contraction::kNone: return "none";
    case Contraction::kFuseCos: return "fuse-cos";
    case Contraction::kFuseSin: return "fuse-sin";
  }
  return "?";
}
}  // namespace

std::string describe(const Profile& p) {
  std::ostringstream s;
  s << "profile " << p.name << ": mqa fp8 r1 " << name_of(p.mqa_fp8_r1) << ", r2 "
    << name_of(p.mqa_fp8_r2) << "; mqa bf16 r1 " << name_of(p.mqa_bf16_r1) << ", r2 "
    << name_of(p.mqa_bf16_r2) << "; indexer " << name_of(p.indexer) << "; scale ceiling "
    << (p.scale_ceiling == ScaleCeiling::kExactBits ? "exact-bits" : "log2f") << ", floor "
    << (p.scale_floor == ScaleFloor::kAmax1e4    ? "amax>=1e-4"
        : p.scale_floor == ScaleFloor::kScale1e4 ? "scale>=1e-4"
                                                 : "amax>=1e-10")
    << "; division " << (p.mqa_division == Division::kIeee ? "ieee" : "div.full(pow2 q_scale)")
    << "; bf16 NaN "
    << (p.bf16_nan == Bf16Nan::k7FFF   ? "0x7FFF"
        : p.bf16_nan == Bf16Nan::k7FC0 ? "0x7FC0"
                                       : "keep-sign-quiet")
    << "; f32 NaN " << (p.f32_nan == F32Nan::kCanonical ? "0x7FFFFFFF" : "host-propagated")
    << "; e4m3 " << (p.e4m3_overflow == E4m3Overflow::kSatFinite ? "satfinite" : "overflow-nan")
    << "; weights "
    << (p.weights_order == WeightsOrder::kScaleSoftmaxHead ? "((w*scale)*softmax)*head"
                                                           : "(w*scale)*(softmax*head)")
    << (p.indexer_bf16_before_quant ? "; indexer row rounded to bf16 before quant" : "");
  return s.str();
}

}  // namespace qcheck
