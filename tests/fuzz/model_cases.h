// The Cases the CPU model tests walk, built from the harness's Case (fuzz/case/case.h):
// a small base case, the covering grid, launches with the real and the edge
// dimensions, and one call that runs a model variant through the verdict with
// the oracle on its scalar rows. Nothing here builds tensors: every launch
// goes through the harness's one data path (Case -> TensorSet -> backend ->
// oracle -> Verdict).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fuzz/case/case.h"
#include "fuzz/verdict/verdict.h"

namespace qcheck::test {

// q_scale bit patterns: production's 1.0 and a value that is not a power of
// two (0.37f), so the fp8 path's division is exercised off the exact case.
constexpr uint32_t kQScaleOne = 0x3F800000u;
constexpr uint32_t kQScale037 = 0x3EBD70A4u;

// T = 17 (one full block of 16 and a one-token tail), H = 3, NI = 2, D = 32,
// R = 16, L = 24, P = 40, noise values (ValueRecipe::kNormal), contiguous
// views, f32 caches and weights, bf16 packed path with the indexer on.
Case model_base_case();

// model_base_case() with `edit` applied and the default softmax/head scales
// recomputed for the edited D and NI.
Case model_case(const std::function<void(Case&)>& edit);

// How the views of a grid case sit in memory.
//   kContiguous  every tensor packed
//   kPadded      every input (caches too) and every output with padded rows
//   kProduction  q_pe the tail of a [.., 128 + R] row, ql_nope head-major (as
//                the absorbed bmm writes it; contiguous under the alias, where
//                it takes query_out's strides), padded weights rows, padded
//                outputs
enum class LayoutMix { kContiguous, kPadded, kProduction };
void apply_layout_mix(LayoutMix mix, Case& c);

// Every query mode (fp8 packed; bf16 packed with and without the exact alias;
// bf16 separate) x indexer (NeoX, interleaved, off) x T in {1, 15, 16, 17, 33}
// x four dtype mixes of the caches and the weights in/out x the three layout
// mixes x weights column stride {1, 2}; q_scale 1.0 and 0.37 alternate with
// the dtype mix, the production layouts pass a head_scale that is not
// RN(NI^-0.5) of the case's NI (DeepSeek-V3.2's 0.125), positions recipes
// and seeds vary per case. Values are
// ValueRecipe::kMixed (a recipe per row: noise, magnitudes, specials, scale
// edges, zero rows, the UE8M0 band, cancellation); then the recipes nan-rows,
// contraction and ties once per query mode. Small dims so that the grid runs
// in seconds, even under ASan.
std::vector<Case> model_grid();

// Per query path: the real dimensions (GLM-5 at TP4: H 16, NI 32, D 128,
// R 64, L 512, production layouts), odd heads with R = D (no pass-through
// part) and column stride 3, and the smallest dims the launch accepts
// (H 1, NI 1, D 16, R 2, L 8).
std::vector<Case> real_and_edge_dims();

// run_verdict of the backend named `backend` ("cpu-model" or
// "cpu-model-<suffix>") with the oracle on its scalar rows, listing up to
// `max_listed` mismatches (kListAll: every one, for the detail tests). Fails
// the calling test (and returns a runtime-error verdict) when no backend has
// that name.
constexpr size_t kListAll = static_cast<size_t>(-1);
Verdict verdict_of(const std::string& backend, const Case& c, size_t max_listed = 20);

// "cpu-model" for an empty suffix, else "cpu-model-<suffix>".
std::string model_backend_name(const char* suffix);

}  // namespace qcheck::test
