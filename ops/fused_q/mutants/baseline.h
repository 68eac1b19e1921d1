// The fixed-grid baseline: the test that ships with vLLM's fused_q kernel,
// rebuilt in this project (SEMANTICS.md, "The test that ships with the
// kernel"), so that qcheck-mutants can say how many planted bugs that kind of
// test would have caught beside what the fuzzer finds. Its grid: (T, H) in
// {(1,8), (4,8), (17,8), (512,8), (4096,8), (17,64)} x indexer rope
// {interleaved, NeoX} on the fp8 path, seed 2, q_scale 0.37, positions
// arange(T) % 8192, fp32 weights and caches, contiguous inputs, the
// DeepSeek-V3.2 dims (R 64, L 512, D 128, NI 64); plus no indexer at
// T in {1, 17, 512}, the bf16 packed path at T in {1, 17, 512} with and without
// the indexer, and (optionally: 1.5 GB) one T = 65536 case. Its tolerances:
// fp8 codes within 1 ulp, bf16 rtol = atol = 1e-2, weights rtol = atol = 1e-3;
// outputs only (no sentinels, padding, inputs or untouched outputs; outputs
// start as NaN poison, as torch.empty's garbage would rarely pass).
#pragma once

#include <string>
#include <vector>

#include "fuzz/backends/backend.h"
#include "fuzz/case/case.h"

namespace qcheck {

struct BaselineCase {
  std::string name;  // "fp8 T=17 H=8 interleaved"
  Case c;
};

std::vector<BaselineCase> vllm_test_grid(bool with_token_limit_case);

struct BaselineResult {
  bool caught = false;      // some case failed the tolerances (or the backend errored)
  int cases_run = 0;
  int cases_failed = 0;
  std::string first_failure;  // "CASE NAME: tensor[t, h, d] expected E got G" or the error
};

// Runs the backend once per grid case (under its fixed profile, else qcheck)
// and compares its outputs with the oracle's within the tolerances above.
BaselineResult run_baseline(const Backend& backend, bool with_token_limit_case);

}  // namespace qcheck
