#include "ops/fused_k/planted/planted.h"

namespace qcheck::fused_k::planted {

const char* name_of(Bug bug) {
  switch (bug) {
    case kNone: return "none";
    case kIndexRopeStyleSwapped: return "index-rope-style-swapped";
    case kUe8m0Skipped: return "ue8m0-skipped";
    case kScaleRoundedAfterCodes: return "scale-rounded-after-codes";
    case kLnWeightReadAsBf16: return "ln-weight-read-as-bf16";
    case kLnBiasReadAsBf16: return "ln-bias-read-as-bf16";
    case kNoAmaxFloor: return "no-amax-floor";
    case kVarianceUncentred: return "variance-uncentred";
    case kShuffledWrittenFlat: return "shuffled-written-flat";
    case kScaleInterleavedPerToken: return "scale-interleaved-per-token";
    case kDenseBlockStride: return "dense-block-stride";
    case kIndexSlotsIgnored: return "index-slots-ignored";
    case kUe8m0WordOneByte: return "ue8m0-word-one-byte";
    case kRmsBf16BeforeWeight: return "rms-bf16-before-weight";
    case kKpeNotRotated: return "kpe-not-rotated";
    case kSlotMinusOneWritten: return "slot-minus-one-written";
    case kKScaleMultiplied: return "k-scale-multiplied";
    case kNoSaturation: return "no-saturation";
    case kDsTileOf64: return "ds-tile-of-64";
    case kNvfp4ScalesUnpermuted: return "nvfp4-scales-unpermuted";
    case kNvfp4NibblesSwapped: return "nvfp4-nibbles-swapped";
    case kQTailDropped: return "q-tail-dropped";
    case kTopkWidthAsStride: return "topk-width-as-stride";
    case kEpsAfterRsqrt: return "eps-after-rsqrt";
    case kFnuzScaleOf448: return "fnuz-scale-of-448";
    case kOcpBytesOnFnuz: return "ocp-bytes-on-fnuz";
    case kOffset32: return "offset-32";
    case kTwinFmaOperandsSwapped: return "twin-fma-operands-swapped";
    case kTwinDivideByPow2: return "twin-divide-by-pow2";
    case kTwinMaxOtherOrder: return "twin-max-other-order";
    case kTwinScaleTimesReciprocal448: return "twin-scale-times-reciprocal-448";
    case kCount: break;
  }
  return "?";
}

bool is_twin(Bug bug) { return bug >= kTwinFmaOperandsSwapped && bug < kCount; }

bool needs_large_cache(Bug bug) { return bug == kOffset32; }

}  // namespace qcheck::fused_k::planted
