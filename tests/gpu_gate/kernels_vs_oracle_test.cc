// The GPU gate: both CUDA kernels (the blocked one in each configuration)
// against the oracle, bit for bit, over the
// covering grid and the token-limit cases, through the harness's one data
// path (run_verdict: guarded buffers, two poison fills, sentinels, inputs).
// QCHECK_SMALL=1 selects the small-shape grid (for compute-sanitizer).
// The same covering grid also runs replayed from CUDA graphs (against the
// eager launch, bit for bit) and through the plugin door: the blocked kernel
// as a plugin (ops/fused_q/plugins/blocked_plugin.cc), and the nvcc-only example
// (ops/fused_q/plugins/nvcc_only) when QCHECK_NVCC_PLUGIN names its library (the
// gate builds it with nvcc on the GPU host).
#include <cstdlib>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fuzz/backends/backend.h"
#include "fuzz/case/case.h"
#include "fuzz/case/case_binary.h"
#include "fuzz/verdict/verdict.h"
#include "tests/gpu_gate/covering_grid.h"

namespace qcheck {
namespace {

bool small_grid() {
  const char* value = std::getenv("QCHECK_SMALL");
  return value != nullptr && std::string(value) == "1";
}

struct GateCase {
  Case c;
  std::string backend;
  std::string label;
  bool graph = false;
};

// A plugin of the build tree, or of QCHECK_PLUGIN_DIR (the GPU bundle's lib/).
std::string blocked_plugin_backend() {
#ifdef QCHECK_BLOCKED_PLUGIN
  const char* dir = std::getenv("QCHECK_PLUGIN_DIR");
  const std::string built = QCHECK_BLOCKED_PLUGIN;
  if (dir == nullptr || dir[0] == '\0') return "plugin:" + built;
  return "plugin:" + std::string(dir) + built.substr(built.rfind('/'));
#else
  return "";
#endif
}

std::string nvcc_plugin_backend() {
  const char* path = std::getenv("QCHECK_NVCC_PLUGIN");
  return path != nullptr && path[0] != '\0' ? "plugin:" + std::string(path) : "plugin:QCHECK_NVCC_PLUGIN-unset";
}

std::string label_of(const std::string& prefix, size_t i, const Case& c) {
  std::string label = prefix + "_" + std::to_string(i) + "_T" + std::to_string(c.num_tokens) + "_H" +
                      std::to_string(c.mqa_heads) + "_NI" + std::to_string(c.indexer_heads) + "_" +
                      name_of(c.query_path);
  for (char& ch : label) {
    if (ch == '-') ch = '_';
  }
  return label;
}

std::vector<GateCase> gate_cases() {
  std::vector<Case> cases = gpu_covering_grid(small_grid());
  for (const Case& c : gpu_kernel_path_cases(small_grid())) cases.push_back(c);
  if (!small_grid()) {
    for (const Case& c : gpu_token_limit_cases()) cases.push_back(c);
  }
  std::vector<GateCase> out;
  // cuda-blocked picks its configuration by T; the forced ones run every
  // configuration on every case; cuda-blocked-parts launches in parts.
  for (const std::string backend : {"cuda-legacy", "cuda-blocked", "cuda-blocked-threads256",
                                    "cuda-blocked-staged64", "cuda-blocked-staged32", "cuda-blocked-parts"}) {
    for (size_t i = 0; i < cases.size(); ++i) {
      out.push_back({cases[i], backend, label_of(backend.substr(std::string("cuda-").size()), i, cases[i])});
    }
  }
  // Graph replay against eager, and the plugins (eager and graph), over the
  // covering grid (the token-limit cases are the eager gate's).
  const std::vector<Case> grid = gpu_covering_grid(small_grid());
  const std::pair<std::string, std::string> graphed[] = {{"cuda-legacy", "graph_legacy"},
                                                         {"cuda-blocked", "graph_blocked"},
                                                         {"cuda-blocked-parts", "graph_blocked_parts"},
                                                         {blocked_plugin_backend(), "plugin_blocked"},
                                                         {nvcc_plugin_backend(), "plugin_nvcc"}};
  for (const auto& [backend, prefix] : graphed) {
    const bool plugin = prefix.rfind("plugin", 0) == 0;
    for (size_t i = 0; i < grid.size(); ++i) {
      if (plugin) out.push_back({grid[i], backend, label_of(prefix, i, grid[i]), false});
      out.push_back({grid[i], backend, label_of(plugin ? prefix + "_graph" : prefix, i, grid[i]), true});
    }
  }
  return out;
}

// gtest prints a parameter with this instead of a byte dump.
void PrintTo(const GateCase& g, std::ostream* os) { *os << g.label; }

class KernelsVsOracle : public testing::TestWithParam<GateCase> {};

TEST_P(KernelsVsOracle, BitExact) {
  const GateCase& g = GetParam();
  ASSERT_EQ(validate_case(g.c), "");
  if (g.backend.empty()) GTEST_SKIP() << "the blocked plugin is not built (no CUDA toolkit at build time)";
  if (g.backend == "plugin:QCHECK_NVCC_PLUGIN-unset") {
    GTEST_SKIP() << "QCHECK_NVCC_PLUGIN does not name the nvcc-only plugin (tools/gpu_bundle/run_gpu_gate.sh builds it)";
  }
  std::string why;
  const Backend* backend = find_backend(g.backend, &why);
  if (backend == nullptr && g.backend.rfind("plugin:", 0) == 0) FAIL() << why;
  if (backend == nullptr) GTEST_SKIP() << g.backend << " is not built (no CUDA toolkit at build time)";
  const std::string outside = backend->domain(g.c);
  if (!outside.empty()) GTEST_SKIP() << "no CUDA device: " << outside;
  VerdictOptions options;
  options.graph = g.graph;
  const Verdict verdict = run_verdict(g.c, *backend, options);
  EXPECT_TRUE(verdict.passed()) << verdict_text(verdict, g.c) << "\ncase digest "
                                << case_digest(g.c);
}

INSTANTIATE_TEST_SUITE_P(Gate, KernelsVsOracle, testing::ValuesIn(gate_cases()),
                         [](const testing::TestParamInfo<GateCase>& info) { return info.param.label; });

// The grid itself: valid cases, every listed value present, every path and
// discrete choice present. Runs without a GPU.
TEST(CoveringGrid, CoversEveryValue) {
  const std::vector<Case> grid = gpu_covering_grid(false);
  std::set<int64_t> tokens, heads, indexer_heads;
  std::set<int> paths, aliases, styles, indexer, layouts;
  for (const Case& c : grid) {
    EXPECT_EQ(validate_case(c), "");
    tokens.insert(c.num_tokens);
    heads.insert(c.mqa_heads);
    indexer_heads.insert(c.indexer_heads);
    paths.insert(static_cast<int>(c.query_path));
    aliases.insert(static_cast<int>(c.alias));
    styles.insert(static_cast<int>(c.indexer_rope));
    indexer.insert(c.has_indexer);
    layouts.insert(static_cast<int>(c.ql_nope_layout));
  }
  EXPECT_EQ(tokens, (std::set<int64_t>{1, 2, 15, 16, 17, 31, 33, 4096}));
  EXPECT_EQ(heads, (std::set<int64_t>{1, 3, 8, 16, 17, 64, 128}));
  EXPECT_EQ(indexer_heads, (std::set<int64_t>{1, 32, 64}));
  EXPECT_EQ(paths.size(), 3u);
  EXPECT_EQ(aliases.size(), 2u);
  EXPECT_EQ(styles.size(), 2u);
  EXPECT_EQ(indexer.size(), 2u);
  EXPECT_EQ(layouts.size(), 3u);
  for (const Case& c : gpu_token_limit_cases()) EXPECT_EQ(validate_case(c), "");
  for (const Case& c : gpu_kernel_path_cases(false)) EXPECT_EQ(validate_case(c), "");
}

}  // namespace
}  // namespace qcheck
