// The kernels under test, one registry chosen by name. Every consumer (replay,
// fuzz targets, the covering grid) looks backends up here.
//
//   cpu-scalar, cpu-simd        the oracle itself (scalar or Highway rows),
//                               following the verdict's profile
//   cpu-model[-bug-...]         the CPU model of the blocked kernel and its
//                               planted bugs (ops/fused_q/cpu_model/cpu_model.h), profile qcheck
//   cuda-legacy, cuda-blocked   the CUDA kernels (ops/fused_q/kernels/fused_q_launch.h),
//   cuda-blocked-bug-tail       profile qcheck; the last has a planted bug
//   cpu-bug-crash, cpu-bug-hang planted faults: on cases with T % 16 == 7 the
//   cuda-blocked-bug-wild-write process crashes, hangs or its CUDA context dies
//   cpu-bug-race                a planted race: one element differs every other run
//   plugin:PATH                 a kernel built outside the project, loaded from a
//                               shared library (include/qcheck/qcheck_plugin.h, fuzz/backends/plugin.h)
//   cuda-blocked+bug=NAME       a bug of the CUDA catalogue (ops/fused_q/kernels/planted.cuh): the
//   cuda-legacy+bug=NAME        kernels compiled with it, loaded as a plugin
//   cuda-blocked+twin=NAME      a harmless twin of that catalogue (must not be reported)
//
// The CUDA backends are listed in every build; without CUDA (or without a
// device) their domain says why they cannot run.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "fuzz/buffers/tensors.h"
#include "fuzz/case/case.h"
#include "fuzz/case/outcome.h"
#include "numerics/profile.h"

namespace qcheck {

struct Backend {
  std::string name;
  std::string description;
  // A planted bug is expected to fail (it proves the gate fires); a real
  // target is expected to pass.
  bool planted_bug = false;
  // A planted change that must NOT be reported (copying ql_nope onto itself
  // under the alias): a false alarm check of the catalogue (qcheck-mutants).
  bool harmless_twin = false;
  // A planted fault: on some cases the run ends the process (a crash) or
  // its CUDA context (an illegal address), so nothing else may run in that
  // process afterwards; tests that walk every planted bug leave it out.
  bool ends_process = false;
  // The kernel runs on a GPU, where two runs of one case may race (blocks
  // and warps in another order, shared memory left by other blocks): a
  // verdict with VerdictOptions::race_runs runs a large case again and
  // compares the runs' bits, and the fuzz loops add race cases.
  bool can_race = false;
  // The one profile the backend implements whatever the case says (this
  // project's kernels and the CPU model: "qcheck"); empty for the oracle
  // backends, which follow the case's profile. --profile overrides both.
  std::string fixed_profile;
  // "" when the backend can run the case here, else why not (asked at run
  // time: e.g. cudaGetDeviceCount finds no device).
  std::function<std::string(const Case&)> domain;
  // Runs the launch over `tensors` (built from the case), writing its
  // outputs in place. `profile` is the verdict's; backends that implement one
  // fixed profile ignore it.
  std::function<Outcome(const Case&, const Profile& profile, TensorSet& tensors)> run;
  // The same launch captured in a CUDA graph and replayed (the CUDA
  // backends and CUDA plugins); empty for the others.
  std::function<Outcome(const Case&, const Profile& profile, TensorSet& tensors)> run_in_graph;
  // Moves a case into the cases the backend supports (a plugin's declared
  // domain), for the mutator; empty: every case.
  std::function<void(Case&)> fit;
  // "" when the kernel supports the case (a plugin's declared domain and
  // its supports callback), else why not; empty: every case. The
  // minimizer proposes no candidate it refuses.
  std::function<std::string(const Case&)> outside;
};

// Every backend, in a fixed order.
const std::vector<Backend>& backends();

// nullptr when no backend has that name. "plugin:PATH" loads the plugin
// (once per process); *error (when given) then says why it failed.
const Backend* find_backend(const std::string& name, std::string* error = nullptr);

// The CUDA planted-bug catalogue built here (ops/fused_q/kernels/planted.cuh): the names
// "cuda-blocked+bug=NAME" / "cuda-legacy+bug=NAME" (and its harmless twins,
// "cuda-blocked+twin=NAME") of the plugin libraries in QCHECK_PLUGIN_DIR
// (default: the build tree's capi/plugins).
std::vector<std::string> planted_cuda_bug_backends();

// "a, b, c": every backend name, for messages.
std::string backend_names();

}  // namespace qcheck
