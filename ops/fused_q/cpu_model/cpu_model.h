// A CPU model of the token-blocked CUDA kernel: it walks the same
// decomposition (programs of 16 tokens x one head of one task, with a masked
// tail block) on host pointers, so the structural bugs of GPU kernels can be
// planted and found on the CPU too. With PlantedCpuBug::kNone it must give
// the oracle's bytes (profile qcheck) for every launch.
#pragma once

#include <string>
#include <vector>

#include "ops/fused_q/args/fused_q_args.h"

namespace qcheck {

// The model's variants. Each bug is one small deviation placed where a kernel
// author would make it (SEMANTICS.md "Bugs this kernel family really shipped").
enum class PlantedCpuBug {
  kNone,
  kTruncatingBf16,       // every bf16 output (rope tail, q_pe_out, bf16 weights) truncated
                         // instead of rounded to nearest even
  kSkipLastTailToken,    // the masked tail block handles T % 16 - 1 tokens; full blocks are right
  kSwappedIndexerRope,   // NeoX and interleaved swapped in the indexer (silent when R = 2)
  kLog2fScale,           // UE8M0 ceiling via log2f instead of the exact bit rule: half the
                         // scale in the band of SEMANTICS.md (A), right everywhere else
  kCopyWhenAliased,      // (harmless twin) copies ql_nope onto itself under the exact alias
  kSkipCopyUnaliased,    // bf16 packed path: skips the ql_nope front copy although it does
                         // not alias (as if the bmm always wrote the front)
  kUnitWeightsColumn,    // reads index_weights with column stride 1 whatever the view says
  // Below: SEMANTICS.md's real bugs and semantic twins, one line each (tests/fuzz/planted_bugs_test.cc).
  kMqaSinSignFlipped,    // MQA rope r1 = x1*c + x2*s, r2 = x2*c - x1*s: rotation by -theta (sin sign flipped)
  kSwappedCosSin,        // MQA rope reads cos from the sin half of the cache row and sin from the cos half
  kMqaNeoxRope,          // MQA rope with NeoX pairs (j, j + R/2) instead of interleaved (silent when R = 2)
  kFloorScale,           // UE8M0 scale rounded down to a power of two (bits & 0x7F800000) instead of up
  kScaleFloorOnScale,    // the 1e-4 floor on the scale, not on amax (FlashMLA's test quantizer, variant B)
  kAmaxEps1e10,          // amax floor 1e-10 instead of 1e-4 (vLLM's older unfused path, variant C)
  kNonPow2Scale,         // no UE8M0 rounding: scale = RN(amax / 448) as is (SGLang's fused indexer query)
  kNonSaturatingE4m3,    // e4m3 overflow and +-Inf give NaN 0x7F/0xFF, not +-448 (torch eager, ml_dtypes)
  kE4m3NanSign,          // e4m3 keeps a NaN's sign, 0xFF for a negative NaN (ml_dtypes) instead of 0x7F
  kFastMathFtz,          // nvcc --use_fast_math (-ftz): fp32 ops flush subnormal operands and results to +-0
  kBf16BeforeQuant,      // indexer rope rounded to bf16 before quantization (DeepSeek reference, vLLM unfused)
  kWeightsFoldedOrder,   // weights (w * RN(softmax_scale * head_scale)) * scale (SGLang's order)
  kWeightsWithoutScale,  // weights (w * softmax_scale) * head_scale: the UE8M0 scale never multiplied in
  kRecomputedHeadScale,  // head_scale recomputed as RN(NI^-0.5) from the launch's NI, the argument ignored
  kOddHeadsDropLast,     // MQA programs of two heads (H / 2 of them): with odd H the last head is never written
  kHasIndexerIgnored,    // has_indexer false: the indexer's loads are masked to 0 but its stores still run
  kMqaGridSizedByNi,     // grid sized by NI, 2 MQA heads a program: heads >= 2*NI unwritten (all, if no indexer)
  // Below: rules that only some values decide (issue 27's recipes aim at them).
  kIndexerUnfused,       // indexer RoPE terms RN(RN(a*c) + RN(b*s)): no FMA (the profile fuses the cos product)
  kMqaFp8R1Unfused,      // fp8 path, MQA r1 terms without the FMA (r2 and the bf16 paths as the profile says)
  kE4m3TiesAwayIndexer,  // indexer codes round ties away from zero instead of to even
  kE4m3TiesAwayMqa,      // fp8 path: query_out codes (nope and rope) round ties away from zero
  kBf16TiesAwayMqa,      // bf16 paths: the RoPE'd q_pe rounds ties away from zero
  kNanRowScaleNan,       // an all-NaN indexer row's scale is NaN, not the 1e-4 floor's (amax < 1e-4 ? 1e-4 : amax)
};

struct PlantedCpuBugInfo {
  PlantedCpuBug bug;
  const char* backend_suffix;  // "" for the correct model, else e.g. "bug-truncating-bf16"
  const char* description;
  bool is_a_bug;               // false for harmless twins that must pass
};

// Every model variant, the correct one first.
const std::vector<PlantedCpuBugInfo>& planted_cpu_bugs();

// Runs the model over host pointers, following profile qcheck. Validates
// first with check_oracle_inputs(args), so every variant
// returns "" or exactly the oracle's message and writes nothing on refusal.
// With kNone (and kCopyWhenAliased) every byte equals run_fused_q_oracle's
// under profile qcheck.
std::string run_blocked_model(const FusedQArgs& args, PlantedCpuBug bug);

}  // namespace qcheck
