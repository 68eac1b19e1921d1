#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "fuzz/backends/backend.h"
#include "fuzz/backends/plugin.h"
#include "fuzz/buffers/device_mirror.h"
#include "numerics/row_ops.h"
#include "ops/fused_q/oracle/fused_q_oracle.h"
#ifdef QCHECK_HAVE_CPU_MODEL
#include "ops/fused_q/cpu_model/cpu_model.h"
#endif

namespace qcheck {
namespace {

std::string always_runs(const Case&) { return ""; }

Backend oracle_backend(const char* name, const char* description, const RowOps& (*rows)()) {
  Backend b;
  b.name = name;
  b.description = description;
  b.domain = always_runs;
  b.run = [rows](const Case& c, const Profile& profile, TensorSet& tensors) {
    const std::string error = run_fused_q_oracle(make_fused_q_args(c, tensors), profile, rows());
    return error.empty() ? Outcome::ok() : Outcome::invalid_input(error);
  };
  return b;
}

// Planted faults on the CPU: the SIMD oracle, except that a case with
// T % 16 == 7 ends the process by SIGSEGV, as a wild write would
// (cpu-bug-crash, the CPU stand-in for cuda-blocked-bug-wild-write), or never
// returns, as a kernel stuck in a loop (cpu-bug-hang). Campaigns on a machine
// without a GPU prove with them that they survive a crashing or hanging
// worker and attribute it to its input.
Backend fault_backend(const char* name, const char* description, bool hang) {
  Backend b = oracle_backend(name, description, simd_row_ops);
  b.planted_bug = true;
  b.ends_process = true;
  b.fixed_profile = "qcheck";
  b.run = [run = b.run, hang](const Case& c, const Profile& profile, TensorSet& tensors) {
    if (c.num_tokens % 16 == 7) {
      if (!hang) std::raise(SIGSEGV);
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    return run(c, profile, tensors);
  };
  return b;
}

// A planted race on the CPU: the oracle's outputs, with the lowest bit of
// the first index_q_fp8 element flipped on every other run, as a missing
// barrier shows in some runs and not others. The verdict's two runs differ
// (nondeterministic), and the minimizer must refuse to shrink it.
Backend race_backend() {
  Backend b = oracle_backend("cpu-bug-race",
                             "the SIMD oracle with one element that differs every other run (planted race)",
                             simd_row_ops);
  b.planted_bug = true;
  b.fixed_profile = "qcheck";
  b.run = [run = b.run, runs = std::make_shared<uint64_t>(0)](const Case& c, const Profile& p, TensorSet& t) {
    const Outcome o = run(c, p, t);
    const TensorGeometry* g = t.find(TensorId::kIndexQFp8);
    if (o.is_ok() && c.has_indexer && c.num_tokens > 0 && g != nullptr && (*runs)++ % 2 == 1) {
      *t.element(*g, 0, 0, 0) ^= 0x01;
    }
    return o;
  };
  return b;
}

#ifdef QCHECK_HAVE_CPU_MODEL
Backend model_backend(const PlantedCpuBugInfo& info) {
  Backend b;
  b.name = std::string("cpu-model") + (info.backend_suffix[0] ? "-" : "") + info.backend_suffix;
  b.description = std::string("CPU model of the blocked kernel: ") + info.description;
  b.planted_bug = info.is_a_bug;
  b.harmless_twin = !info.is_a_bug && info.bug != PlantedCpuBug::kNone;
  b.fixed_profile = "qcheck";
  b.domain = always_runs;
  const PlantedCpuBug bug = info.bug;
  b.run = [bug](const Case& c, const Profile&, TensorSet& tensors) {
    const std::string error = run_blocked_model(make_fused_q_args(c, tensors), bug);
    return error.empty() ? Outcome::ok() : Outcome::invalid_input(error);
  };
  return b;
}
#endif

Backend cuda_backend(const char* name, const char* description, cuda::KernelDesign design,
                     cuda::LaunchOptions options = {}) {
  Backend b;
  b.name = name;
  b.description = description;
  b.planted_bug = options.planted_bug != cuda::PlantedBug::kNone;
  b.fixed_profile = "qcheck";
  b.can_race = true;
  b.domain = [](const Case&) { return cuda_device_problem(); };
  const std::string what = project_kernel_launch_name(design);
  const DeviceLaunch launch = project_kernel_launch(design, options);
  b.run = [what, launch](const Case& c, const Profile&, TensorSet& tensors) {
    return run_on_cuda_device(what, launch, c, tensors);
  };
  b.run_in_graph = [what, launch](const Case& c, const Profile&, TensorSet& tensors) {
    return run_on_cuda_device(what, launch, c, tensors, LaunchMode::kGraph);
  };
  return b;
}

cuda::LaunchOptions with_config(cuda::BlockedConfig config) {
  cuda::LaunchOptions options;
  options.blocked_config = config;
  return options;
}

std::vector<Backend> make_backends() {
  std::vector<Backend> all;
  all.push_back(
      oracle_backend("cpu-scalar", "the oracle with the scalar spec rows", scalar_row_ops));
  all.push_back(oracle_backend("cpu-simd", "the oracle with the Highway SIMD rows", simd_row_ops));
  all.push_back(fault_backend("cpu-bug-crash", "the SIMD oracle, crashing (SIGSEGV) when T % 16 == 7 (planted fault)",
                              false));
  all.push_back(race_backend());
  all.push_back(fault_backend("cpu-bug-hang", "the SIMD oracle, never returning when T % 16 == 7 (planted hang)",
                              true));
#ifdef QCHECK_HAVE_CPU_MODEL
  for (const PlantedCpuBugInfo& info : planted_cpu_bugs()) all.push_back(model_backend(info));
#endif
  all.push_back(cuda_backend("cuda-legacy",
                             "CUDA kernel, vLLM's per-token design before the seed PR",
                             cuda::KernelDesign::kLegacy));
  all.push_back(cuda_backend("cuda-blocked", "CUDA kernel, the seed PR's token-blocked design",
                             cuda::KernelDesign::kBlocked));
  // The blocked kernel's configurations forced at every T (auto picks one by
  // T, so without these a shape would only ever meet one of them).
  all.push_back(cuda_backend("cuda-blocked-threads256", "CUDA blocked kernel, 256-thread blocks at any T",
                             cuda::KernelDesign::kBlocked, with_config(cuda::BlockedConfig::kThreads256)));
  all.push_back(cuda_backend("cuda-blocked-staged64",
                             "CUDA blocked kernel, 64-thread blocks and the staged path at any T",
                             cuda::KernelDesign::kBlocked, with_config(cuda::BlockedConfig::kStaged64)));
  all.push_back(cuda_backend("cuda-blocked-staged32",
                             "CUDA blocked kernel, 32-thread blocks and the staged path at any T",
                             cuda::KernelDesign::kBlocked, with_config(cuda::BlockedConfig::kStaged32)));
  // A launch past about 2^32 programs runs in parts (params_from_token);
  // parts of 2 token blocks take that path on every shape with T > 32.
  cuda::LaunchOptions parts;
  parts.token_blocks_per_launch = 2;
  all.push_back(cuda_backend("cuda-blocked-parts",
                             "CUDA blocked kernel launched in parts of 2 token blocks "
                             "(the path of launches past 2^32 programs)",
                             cuda::KernelDesign::kBlocked, parts));
  cuda::LaunchOptions tail_bug;
  tail_bug.planted_bug = cuda::PlantedBug::kMissingTailGuard;
  all.push_back(cuda_backend("cuda-blocked-bug-tail",
                             "CUDA blocked kernel with the tail mask removed (planted bug)",
                             cuda::KernelDesign::kBlocked, tail_bug));
  cuda::LaunchOptions wild_write;
  wild_write.planted_bug = cuda::PlantedBug::kWildWrite;
  all.push_back(cuda_backend("cuda-blocked-bug-wild-write",
                             "CUDA blocked kernel writing through a wild pointer when T % 16 == 7: an "
                             "illegal-address fault that ends the CUDA context (planted fault)",
                             cuda::KernelDesign::kBlocked, wild_write));
  all.back().ends_process = true;
  return all;
}

}  // namespace

const std::vector<Backend>& backends() {
  static const std::vector<Backend> all = make_backends();
  return all;
}

namespace {

std::string plugin_dir() {
  const char* dir = std::getenv("QCHECK_PLUGIN_DIR");
  return dir != nullptr && dir[0] != '\0' ? dir : QCHECK_DEFAULT_PLUGIN_DIR;
}

// The CUDA catalogue's names: backend "PREFIX" + NAME is the plugin
// library "FILE" + NAME + ".so" (ops/fused_q/plugins/CMakeLists.txt names them);
// a twin is a change that must not be reported.
struct MutantNaming {
  std::string backend, file;
  bool twin;
};
const MutantNaming kMutantNamings[] = {{"cuda-blocked+bug=", "libqcheck_mutant_blocked_", false},
                                       {"cuda-legacy+bug=", "libqcheck_mutant_legacy_", false},
                                       {"cuda-blocked+twin=", "libqcheck_twin_blocked_", true}};

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

const MutantNaming* mutant_naming(const std::string& name) {
  for (const MutantNaming& n : kMutantNamings) {
    if (starts_with(name, n.backend)) return &n;
  }
  return nullptr;
}

// The backend `name` over the plugin at `path`, made on first use and kept
// for the process; nullptr and *error when the plugin does not load.
const Backend* plugin_backend_named(const std::string& name, const std::string& path, const MutantNaming* planted,
                                    std::string* error) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<Backend>> made;
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<Backend>& backend = made[name];
  if (backend == nullptr) {
    const LoadedPlugin* plugin = nullptr;
    const std::string why = load_plugin(path, &plugin);
    if (!why.empty()) {
      made.erase(name);
      if (error != nullptr) *error = why;
      return nullptr;
    }
    backend = std::make_unique<Backend>(plugin_backend(*plugin));
    if (planted != nullptr) {
      // A planted bug (or twin) of the CUDA catalogue, under its backend name.
      backend->name = name;
      backend->planted_bug = !planted->twin;
      backend->harmless_twin = planted->twin;
      backend->description = "CUDA " + plugin->name + " (ops/fused_q/kernels/planted.cuh)";
    }
  }
  return backend.get();
}

}  // namespace

const Backend* find_backend(const std::string& name, std::string* error) {
  for (const Backend& b : backends()) {
    if (b.name == name) return &b;
  }
  const std::string prefix = "plugin:";
  if (const MutantNaming* n = mutant_naming(name)) {
    const std::string library = plugin_dir() + "/" + n->file + name.substr(n->backend.size()) + ".so";
    const Backend* b = plugin_backend_named(name, library, n, error);
    if (b == nullptr && error != nullptr) {
      *error = "planted bug " + name + ": " + *error +
               " (build with -DQCHECK_MUTANT_KERNELS=ON; QCHECK_PLUGIN_DIR names the folder of the libraries)";
    }
    return b;
  }
  if (starts_with(name, prefix)) {
    return plugin_backend_named(name, name.substr(prefix.size()), nullptr, error);
  }
  if (error != nullptr) {
    *error = "unknown backend " + name + " (known: " + backend_names() + ", plugin:PATH, cuda-blocked+bug=NAME)";
  }
  return nullptr;
}

std::vector<std::string> planted_cuda_bug_backends() {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(plugin_dir(), error)) {
    const std::string file = entry.path().filename().string();
    if (file.size() < 4 || file.compare(file.size() - 3, 3, ".so") != 0) continue;
    const std::string stem = file.substr(0, file.size() - 3);
    for (const MutantNaming& n : kMutantNamings) {
      if (starts_with(stem, n.file)) names.push_back(n.backend + stem.substr(n.file.size()));
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string backend_names() {
  std::string names;
  for (const Backend& b : backends()) names += (names.empty() ? "" : ", ") + b.name;
  return names;
}

}  // namespace qcheck
