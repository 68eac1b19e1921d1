// Runs the CPU model (one variant) and the oracle (profile qcheck, scalar
// rows) on two identical tensor sets built from one LaunchSpec and says which
// buffers ended up different; plus the covering grid of launches the tests
// walk.
#pragma once

#include <string>
#include <vector>

#include "fuzz/cpu_model.h"
#include "tests/fuzz/launch_tensors.h"

namespace qcheck::test {

struct ModelVsOracle {
  std::string oracle_error;              // "" when the oracle accepted the launch
  std::string model_error;               // "" when the model accepted it
  std::vector<std::string> differing;    // buffers whose bytes differ, in buffer order
  std::string detail;                    // compare_buffers() text, "" when equal

  bool same() const { return oracle_error == model_error && differing.empty(); }
};

ModelVsOracle run_model_and_oracle(const LaunchSpec& spec, PlantedCpuBug bug);

// Every path (fp8, bf16 packed with and without the alias, bf16 separate) x
// indexer (NeoX, interleaved, off) x T in {1, 15, 16, 17, 33} x four dtype
// mixes of caches and weights x three layout mixes (contiguous; padded rows
// with q_pe as a view of a wider row; head-major ql_nope with padded outputs)
// x weights column stride {1, 2}; q_scale 1.0 or 0.37. Small dims (H 3, NI 2,
// D 32, R 16, L 24) so the grid runs in seconds, even under ASan.
std::vector<LaunchSpec> covering_grid();

// A few launches with the real dimensions (R 64, D 128, L 512, GLM-5 TP4
// heads) and with edge dimensions (odd H, R = D, R = 2, D = 16, L = 8).
std::vector<LaunchSpec> shape_launches();

}  // namespace qcheck::test
