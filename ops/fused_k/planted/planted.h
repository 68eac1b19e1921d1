// fused_k's planted-bug catalogue: one-line changes to its CUDA kernel and to
// its CPU model, each of a kind this family shipped (issue 38,
// SEMANTICS-K.md), to prove the comparison finds them. Both are templates
// over the bug (kernels/fused_k_kernel.cu, cpu_model/); every `if constexpr
// (Bug == kX)` compiles away in the kernel under test (Bug = kNone), so it is
// the same code as without the catalogue. A twin changes the code but not one
// bit of any output: it must NOT be reported. Plain C++.
#pragma once

namespace qcheck::fused_k::planted {

enum Bug : int {
  kNone = 0,
  // Index-K prep
  kIndexRopeStyleSwapped = 1,     // NeoX and interleaved swapped on the key only (the query side right)
  kUe8m0Skipped = 2,              // the exact RN(amax / 448) stored and divided by: no power of two
  kScaleRoundedAfterCodes = 3,    // codes from the exact RN(amax / 448), the power of two stored after
  kLnWeightReadAsBf16 = 4,        // an f32 LayerNorm weight read as bf16 (its top half)
  kLnBiasReadAsBf16 = 5,          // an f32 LayerNorm bias read as bf16
  kNoAmaxFloor = 6,               // no 1e-4 floor: an all-zero row's scale is 0 and its codes NaN
  kVarianceUncentred = 7,         // LayerNorm variance as RN(E[x^2] - mean^2), not of the centred row
  kShuffledWrittenFlat = 8,       // the shuffled layout chosen by the wrong predicate (block_size > 64)
  kScaleInterleavedPerToken = 9,  // the scale word after each token's codes, not at the block's end
  kDenseBlockStride = 10,         // block_stride taken as block_size * (D + 4): padded caches shifted
  kIndexSlotsIgnored = 11,        // index_slot_mapping ignored: the MLA slots used
  kUe8m0WordOneByte = 12,         // the ue8m0 scale word holds the exponent in byte 0 only
  // KV latent and the MLA cache
  kRmsBf16BeforeWeight = 13,      // x * r rounded to bf16 before the weight (where the profile keeps f32)
  kKpeNotRotated = 14,            // k_pe stored without its RoPE
  kSlotMinusOneWritten = 15,      // slot -1 not skipped: an entry written before the cache
  kKScaleMultiplied = 16,         // fp8: x * k_scale instead of x / k_scale
  kNoSaturation = 17,             // e4m3 overflow (|x| >= 464, Inf) gives NaN 0x7F instead of +-448
  kDsTileOf64 = 18,               // fp8_ds_mla: each tile's amax over its first 64 values only
  kNvfp4ScalesUnpermuted = 19,    // nvfp4_ds_mla: tile t's scale at byte 320 + t, not the permuted byte
  kNvfp4NibblesSwapped = 20,      // nvfp4_ds_mla: the odd element in the low nibble
  // Q latent and the top-k buffer
  kQTailDropped = 21,             // Q rows: elements past 32 * floor(Q / 32) never written
  kTopkWidthAsStride = 22,        // top-k rows taken K apart, whatever the row stride
  kEpsAfterRsqrt = 23,            // r = rsqrt(mean square) + eps instead of rsqrt(mean square + eps)
  // An FNUZ indexer cache
  kFnuzScaleOf448 = 24,           // the scale from 448, OCP's maximum, on an FNUZ cache (224)
  kOcpBytesOnFnuz = 25,           // OCP e4m3 codes written where the cache holds e4m3fnuz
  // Large caches only
  kOffset32 = 26,                 // a cache entry's byte offset in 32 bits: wrong past 2 GiB (shown past 4 GiB)
  // Twins: the same bits by construction
  kTwinFmaOperandsSwapped = 27,   // fma(cos, a, ..) for fma(a, cos, ..): multiplication commutes
  kTwinDivideByPow2 = 28,         // x / scale for x * (1 / scale): the scale is a power of two
  kTwinMaxOtherOrder = 29,        // the amax's lanes combined 1 .. 16: a maximum has no order
  kTwinScaleTimesReciprocal448 = 30,  // RN(amax * RN(1/448)) for RN(amax / 448): 4.6 M of 8.4 M
                                      // mantissas give another quotient, but never one on the other side
                                      // of a power of two, so the ceiling hides them (tests/fused_k)
  kCount = 31,
};

// The bug's name (kebab case, as the catalogue's report prints it), whether
// it is a twin, and whether only a cache past 2 GiB shows it.
const char* name_of(Bug bug);
bool is_twin(Bug bug);
bool needs_large_cache(Bug bug);

}  // namespace qcheck::fused_k::planted
