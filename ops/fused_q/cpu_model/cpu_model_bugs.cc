// The CPU model's planted-bug catalogue: each bug's backend name and what it
// plants (the model in cpu_model.cc asks for one with planted(bug)). A new
// bug is an enum value (cpu_model.h) and its entry here.
#include "ops/fused_q/cpu_model/cpu_model.h"

namespace qcheck {

const std::vector<PlantedCpuBugInfo>& planted_cpu_bugs() {
  static const std::vector<PlantedCpuBugInfo> list = {
      {PlantedCpuBug::kNone, "", "the correct token-blocked model (profile qcheck)", false},
      {PlantedCpuBug::kTruncatingBf16, "bug-truncating-bf16",
       "bf16 outputs (rope tail, q_pe_out, bf16 weights) truncated instead of rounded to nearest even",
       true},
      {PlantedCpuBug::kSkipLastTailToken, "bug-skip-last-tail-token",
       "the masked tail block handles one token too few (T % 16 - 1)", true},
      {PlantedCpuBug::kSwappedIndexerRope, "bug-swapped-indexer-rope",
       "the indexer RoPE uses NeoX where interleaved is asked and vice versa", true},
      {PlantedCpuBug::kLog2fScale, "bug-log2f-scale",
       "UE8M0 ceiling as exp2(ceil(log2f(s0))): half the scale in the band of SEMANTICS.md (A)",
       true},
      {PlantedCpuBug::kCopyWhenAliased, "copy-when-aliased",
       "harmless twin: copies ql_nope onto itself when it aliases the front of q_out", false},
      {PlantedCpuBug::kSkipCopyUnaliased, "bug-skip-copy-unaliased",
       "bf16 packed path: the ql_nope front copy is skipped although ql_nope does not alias q_out",
       true},
      {PlantedCpuBug::kUnitWeightsColumn, "bug-unit-weights-column",
       "index_weights read with column stride 1 whatever the view says", true},
      {PlantedCpuBug::kMqaSinSignFlipped, "bug-mqa-sin-sign",
       "MQA rope with the sin term's sign flipped (r1 = x1*c + x2*s, r2 = x2*c - x1*s)", true},
      {PlantedCpuBug::kSwappedCosSin, "bug-swapped-cos-sin",
       "MQA rope reads cos from the sin half of the cache row and sin from the cos half", true},
      {PlantedCpuBug::kMqaNeoxRope, "bug-mqa-neox-rope",
       "MQA rope with NeoX pairs (j, j + R/2) instead of interleaved pairs (2i, 2i+1)", true},
      {PlantedCpuBug::kFloorScale, "bug-floor-scale",
       "UE8M0 scale rounded down to a power of two instead of up", true},
      {PlantedCpuBug::kScaleFloorOnScale, "bug-floor-on-scale",
       "the 1e-4 floor applied to the scale instead of to amax (FlashMLA's test quantizer)", true},
      {PlantedCpuBug::kAmaxEps1e10, "bug-eps-1e-10",
       "amax floored at 1e-10 instead of 1e-4 (vLLM's older unfused path)", true},
      {PlantedCpuBug::kNonPow2Scale, "bug-non-pow2-scale",
       "the scale RN(amax / 448) used as is, not rounded up to a power of two", true},
      {PlantedCpuBug::kNonSaturatingE4m3, "bug-non-saturating-e4m3",
       "e4m3 overflow and +-Inf become NaN (0x7F / 0xFF) instead of saturating to +-448", true},
      {PlantedCpuBug::kE4m3NanSign, "bug-e4m3-nan-sign",
       "e4m3 keeps a NaN's sign (0xFF for a negative NaN) instead of giving 0x7F", true},
      {PlantedCpuBug::kFastMathFtz, "bug-fast-math-ftz",
       "fp32 arithmetic flushes subnormal operands and results to zero (nvcc --use_fast_math)", true},
      {PlantedCpuBug::kBf16BeforeQuant, "bug-bf16-before-quant",
       "the indexer rope result rounded to bf16 before the quantization", true},
      {PlantedCpuBug::kWeightsFoldedOrder, "bug-weights-order",
       "weights (w * RN(softmax_scale * head_scale)) * scale instead of "
       "((w * scale) * softmax_scale) * head_scale",
       true},
      {PlantedCpuBug::kWeightsWithoutScale, "bug-weights-missing-scale",
       "weights (w * softmax_scale) * head_scale: the UE8M0 scale is left out", true},
      {PlantedCpuBug::kRecomputedHeadScale, "bug-recomputed-head-scale",
       "head_scale recomputed as RN(NI^-0.5) from the launch's NI instead of taken from the argument", true},
      {PlantedCpuBug::kOddHeadsDropLast, "bug-odd-heads-drop-last",
       "MQA programs cover two heads each (H / 2 programs): with odd H the last MQA head is never written",
       true},
      {PlantedCpuBug::kHasIndexerIgnored, "bug-has-indexer-ignored",
       "has_indexer = false masks the indexer's loads (to 0) but not its stores: its outputs are written",
       true},
      {PlantedCpuBug::kMqaGridSizedByNi, "bug-mqa-grid-sized-by-ni",
       "the head axis of the grid is sized by NI with two MQA heads a program: MQA heads >= 2 * NI "
       "(every head without an indexer) are never written",
       true},
      // Rules that only some values decide: the recipes nan-rows, contraction and ties reach them.
      {PlantedCpuBug::kIndexerUnfused, "bug-indexer-unfused",
       "indexer RoPE terms without the FMA, RN(RN(a*c) + RN(b*s)), where the profile fuses the cos product", true},
      {PlantedCpuBug::kMqaFp8R1Unfused, "bug-mqa-fp8-r1-unfused",
       "fp8 path: MQA r1 terms without the FMA (r2 and the bf16 paths fused as the profile says)", true},
      {PlantedCpuBug::kE4m3TiesAwayIndexer, "bug-e4m3-ties-away-indexer",
       "indexer codes: an e4m3 tie rounds away from zero instead of to even", true},
      {PlantedCpuBug::kE4m3TiesAwayMqa, "bug-e4m3-ties-away-fp8-query",
       "fp8 path: query_out's e4m3 ties round away from zero instead of to even", true},
      {PlantedCpuBug::kBf16TiesAwayMqa, "bug-bf16-ties-away-q-pe",
       "bf16 paths: the RoPE'd q_pe's bf16 ties round away from zero instead of to even", true},
      {PlantedCpuBug::kNanRowScaleNan, "bug-nan-row-scale-nan",
       "an all-NaN indexer row gets scale NaN (amax < 1e-4 ? 1e-4 : amax keeps the NaN), not the floor's",
       true},
  };
  return list;
}

}  // namespace qcheck
