// A CPU model of the token-blocked CUDA kernel: it walks the same
// decomposition (programs of 16 tokens x one head of one task, with a masked
// tail block) on host pointers, so the structural bugs of GPU kernels can be
// planted and found on the CPU too. With PlantedCpuBug::kNone it must give
// the oracle's bytes (profile qcheck) for every launch.
#pragma once

#include <string>
#include <vector>

#include "reference/fused_q_args.h"

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
