// The planted-bug catalogue of the CUDA kernels (issue: prove the fuzzers
// find real bugs). A mutant build compiles the kernels with
// -DQCHECK_PLANTED_BUG=N (ops/fused_q/plugins/CMakeLists.txt: one plugin library
// per bug, ops/fused_q/plugins/mutant_plugin.cc), and each `if constexpr
// (planted::is(planted::kX))` below and in the kernels turns on one bug;
// the default build has N = 0 and every such branch compiles away, so the
// kernels under test are the same code as without the catalogue. Each bug
// imitates one this family shipped or a semantic twin of the spec
// (SEMANTICS.md, "Bugs this kernel family really shipped"); the comment says
// which, and where it lives says how narrow its path is. A twin (kTwin...)
// is a change that must NOT be reported; a bug the GPU cannot show is
// proven equivalent by ops/fused_q/mutants/equivalence.h.
#pragma once

#ifndef QCHECK_PLANTED_BUG
#define QCHECK_PLANTED_BUG 0
#endif

namespace qcheck::cuda::planted {

enum Bug : int {
  kNone = 0,
  // Numerics shared by every path (device_numerics.cuh, device_access.cuh):
  kTruncatingBf16 = 1,       // bf16 outputs truncated instead of rounded to nearest even
  kNonSaturatingE4m3 = 2,    // e4m3 overflow (and +-Inf) gives NaN 0x7F instead of +-448
  kNanSignKept = 3,          // a negative NaN becomes 0xFF instead of 0x7F
  kSinSignFlipped = 4,       // every RoPE term adds the sin product with the wrong sign
  kFtzSubnormals = 5,        // RoPE results below the smallest normal flushed to zero (--use_fast_math)
  kScaleFloor = 6,           // UE8M0 scale rounded down to a power of two instead of up
  kLog2fCeiling = 7,         // scale = 2^ceil(log2f(amax / 448)): the log2f band (SEMANTICS.md (A))
  kFloorOnScale = 8,         // the 1e-4 floor applied to the scale instead of to amax
  kEps1e10 = 9,              // amax floored at 1e-10 instead of 1e-4
  kNonPow2Scale = 10,        // scale = amax / 448 as is (UE8M0 skipped: ROCm aiter #3451)
  kWeightsOtherOrder = 11,   // weight = (w * (softmax_scale * head_scale)) * scale
  kWeightsMissingScale = 12, // weight = (w * softmax_scale) * head_scale: the quant scale left out
  kWeightsUnitColumn = 13,   // index_weights read with column stride 1 whatever the view says
  kOffset32 = 14,            // element offsets in unsigned 32 bits, as `blockIdx.x * stride` computes them:
                             // wrong once one view spans 2^32 elements (large tensors only)
  // Narrow paths:
  kCosSinSwapped = 15,       // the interleaved vector loads read cos from the sin half (vector paths only)
  kBf16CachePairSwap = 16,   // 4-value bf16 cache loads swap the two values of each word (bf16 caches,
                             // vector path only)
  kMqaPairsWrong = 17,       // MQA RoPE pairs (j, j+4) of a chunk instead of (2i, 2i+1)
  kBf16BeforeQuant = 18,     // indexer values rounded to bf16 before the amax and the codes
                             // (register and two-pass paths; the staged path is right)
  kMissingBarrier = 19,      // staged path: the barrier after the cp.async copies is gone (a race)
  kPartsSkipWeightsOut = 20, // a launch in parts does not advance index_weights_out (parts only)
  // Host-side launch facts (kernel_params.cc):
  kIndexerRopeSwapped = 21,  // NeoX and interleaved swapped in the indexer (vLLM #28968, sglang #30088)
  kHeadScaleLocal = 22,      // head scale recomputed from the launch's NI instead of the argument
  kSkipCopyUnaliased = 23,   // bf16 packed path: the ql_nope copy skipped although it does not alias
  kOddHeadDropsLast = 24,    // odd H: the last MQA head gets no program
  kHasIndexerIgnored = 25,   // shared (no-indexer) layers still write index_weights_out (zeros)
  // The legacy kernel's grid (legacy_kernel.cu):
  kTokensOnGridY = 26,       // tokens on grid y: the launch fails from T = 65536 (vLLM #52381)
  kGridSizedByNi = 27,       // grid z = NI: MQA heads from 2 * NI on are never written
  // More narrow paths:
  kFp8Reciprocal = 28,       // fp8 packed path: x * RN(1 / q_scale) instead of RN(x / q_scale) (fast-math
                             // division; only a q_scale that is not a power of two shows it)
  kNopeContiguousAssumed = 29,  // ql_nope read with the contiguous strides whatever its view says (only a
                                // padded or head-major ql_nope, as the absorbed bmm writes it, shows it)
  kModelShapeHalfAmax = 30,  // the kernels compiled for the model shape (D = 128, R = 64) reduce the amax over
                             // 8 lanes of the 16 that hold a row: the RoPE half and the pass-through half
                             // get scales of their own
  kStagedCacheRowBytes = 32,  // staged MQA task: cache rows taken as 4 bytes per value whatever the cache
                              // dtype (only a bf16 mqa_cache on the staged path shows it)
  kWeightsOutTruncated = 33,  // a bf16 index_weights_out truncated instead of rounded (only that dtype)
  // Rules that only some values decide (the recipes nan-rows, contraction and ties reach them):
  kIndexerUnfused = 34,      // indexer RoPE terms RN(RN(a*c) + RN(b*s)) instead of the FMA (f32 indexer caches only)
  kMqaFp8R1Unfused = 35,     // fp8 path: MQA r1 terms without the FMA (f32 mqa caches only)
  kE4m3TiesAway = 36,        // e4m3 conversions round a tie in the normal range away from zero, not to even
  kNanRowScaleNan = 37,      // the amax starts from NaN (as from the row's first element) and the floor is
                             // amax < 1e-4 ? 1e-4 : amax: an all-NaN indexer row gets scale NaN
  // A harmless twin: must NOT be reported.
  kTwinCopyWhenAliased = 31,  // under the exact alias, ql_nope is copied onto itself anyway
  kBugCount = 38,
};

constexpr int kBug = QCHECK_PLANTED_BUG;
static_assert(kBug >= 0 && kBug < kBugCount, "QCHECK_PLANTED_BUG must name a bug of ops/fused_q/kernels/planted.cuh");

// (host and device: kernel_params.cc asks too)
#ifdef __CUDACC__
#define QCHECK_PLANTED_HOST_DEVICE __host__ __device__
#else
#define QCHECK_PLANTED_HOST_DEVICE
#endif
QCHECK_PLANTED_HOST_DEVICE constexpr bool is(Bug bug) { return kBug == bug; }
QCHECK_PLANTED_HOST_DEVICE constexpr bool any() { return kBug != kNone; }

}  // namespace qcheck::cuda::planted
