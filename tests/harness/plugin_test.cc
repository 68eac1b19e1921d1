// The plugin door (include/qcheck/qcheck_plugin.h, fuzz/backends/plugin.h) with the host-memory
// example plugins around the CPU model (ops/fused_q/plugins/host_model_plugin.cc):
// loading and its refusals, the translation of a launch both ways, the
// declared domain and its repair, an error status, and the verdict and
// qcheck-replay through plugin:PATH.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "fuzz/backends/plugin.h"
#include "fuzz/buffers/tensors.h"
#include "fuzz/case/case_file.h"
#include "fuzz/minimize/minimize.h"
#include "fuzz/verdict/verdict.h"
#include "ops/fused_q/plugins/plugin_args.h"
#include "tests/harness/case_samples.h"

namespace qcheck {
namespace {

// A plugin of the build tree, or of QCHECK_PLUGIN_DIR (the GPU bundle moves
// the libraries away from their build paths).
std::string plugin_path(const char* built) {
  const char* dir = std::getenv("QCHECK_PLUGIN_DIR");
  if (dir == nullptr || dir[0] == '\0') return built;
  const char* slash = std::strrchr(built, '/');
  return std::string(dir) + "/" + (slash != nullptr ? slash + 1 : built);
}

const std::string kCorrect = plugin_path(QCHECK_HOST_PLUGIN_CORRECT);
const std::string kBug = plugin_path(QCHECK_HOST_PLUGIN_BUG);
const std::string kNarrow = plugin_path(QCHECK_HOST_PLUGIN_NARROW);
const std::string kFailing = plugin_path(QCHECK_HOST_PLUGIN_FAILING);
const std::string kNewerAbi = plugin_path(QCHECK_HOST_PLUGIN_NEWER_ABI);

const Backend& plugin_backend_at(const std::string& path) {
  std::string why;
  const Backend* b = find_backend("plugin:" + path, &why);
  if (b == nullptr) {
    ADD_FAILURE() << why;
    static const Backend none = *find_backend("cpu-simd");
    return none;
  }
  return *b;
}

TEST(Plugin, LoadsOnceAndDescribesItself) {
  const LoadedPlugin* p = nullptr;
  ASSERT_EQ(load_plugin(kCorrect, &p), "");
  EXPECT_EQ(p->name, "host model");
  EXPECT_EQ(p->profile, "qcheck");
  EXPECT_TRUE(p->on_host);
  const LoadedPlugin* again = nullptr;
  ASSERT_EQ(load_plugin(kCorrect, &again), "");
  EXPECT_EQ(p, again);
  std::string why;
  EXPECT_EQ(find_backend("plugin:" + kCorrect, &why), find_backend("plugin:" + kCorrect, &why));
  EXPECT_EQ(find_backend("plugin:" + kCorrect)->fixed_profile, "qcheck");
  EXPECT_NE(plugin_info_json(*p).find("\"memory\":\"host\""), std::string::npos) << plugin_info_json(*p);
}

TEST(Plugin, RefusalsNameThePathAndTheProblem) {
  const LoadedPlugin* p = nullptr;
  std::string why = load_plugin("/no/such/plugin.so", &p);
  EXPECT_NE(why.find("plugin /no/such/plugin.so: cannot load it"), std::string::npos) << why;
  why = load_plugin(kNewerAbi, &p);
  EXPECT_NE(why.find("abi_version 2 is not the ABI version 1"), std::string::npos) << why;
  // A library that loads but is no plugin (the C library itself).
  why = load_plugin("libc.so.6", &p);
  EXPECT_NE(why.find("exports no qcheck_plugin_v1"), std::string::npos) << why;
  EXPECT_EQ(find_backend("plugin:/no/such/plugin.so", &why), nullptr);
  EXPECT_NE(why.find("cannot load it"), std::string::npos) << why;
  EXPECT_EQ(find_backend("no-such-backend", &why), nullptr);
  EXPECT_NE(why.find("unknown backend no-such-backend (known: cpu-scalar"), std::string::npos) << why;
  EXPECT_NE(why.find("plugin:PATH"), std::string::npos) << why;
}

// The ABI's launch turns back into the same FusedQArgs, field for field.
TEST(Plugin, ArgsTranslateBothWays) {
  for (const test::NamedCase& named : test::covering_grid()) {
    TensorSet set = build_tensor_set(named.c, Poison::kA);
    const FusedQArgs a = make_fused_q_args(named.c, set);
    const qcheck_plugin_args abi = plugin_args(a);
    EXPECT_EQ(abi.struct_size, sizeof(qcheck_plugin_args));
    EXPECT_EQ(abi.ql_nope_aliased != 0, ql_nope_aliases_query_out(a)) << named.name;
    const FusedQArgs b = plugin::fused_q_args_of(abi);
    EXPECT_EQ(validate_fused_q_args(b), "") << named.name;
    EXPECT_TRUE(a.num_tokens == b.num_tokens && a.mqa_heads == b.mqa_heads && a.indexer_heads == b.indexer_heads &&
                a.index_dim == b.index_dim && a.rope_dim == b.rope_dim && a.nope_dim == b.nope_dim &&
                a.query_path == b.query_path && a.has_indexer == b.has_indexer && a.indexer_rope == b.indexer_rope &&
                a.positions == b.positions && a.index_weights_dtype == b.index_weights_dtype &&
                a.index_weights_out_dtype == b.index_weights_out_dtype && a.q_scale_bits == b.q_scale_bits &&
                a.softmax_scale_bits == b.softmax_scale_bits && a.head_scale_bits == b.head_scale_bits)
        << named.name;
    for (auto [x, y] : {std::pair{a.q_pe, b.q_pe}, {a.ql_nope, b.ql_nope}, {a.index_q, b.index_q},
                        {a.index_weights, b.index_weights}}) {
      EXPECT_TRUE(x.data == y.data && x.token_stride == y.token_stride && x.head_stride == y.head_stride) << named.name;
    }
    for (auto [x, y] : {std::pair{a.query_out, b.query_out}, {a.index_q_fp8, b.index_q_fp8},
                        {a.index_weights_out, b.index_weights_out}}) {
      EXPECT_TRUE(x.data == y.data && x.token_stride == y.token_stride && x.head_stride == y.head_stride) << named.name;
    }
    for (auto [x, y] : {std::pair{a.mqa_cache, b.mqa_cache}, {a.indexer_cache, b.indexer_cache}}) {
      EXPECT_TRUE(x.data == y.data && x.dtype == y.dtype && x.rows == y.rows && x.row_stride == y.row_stride)
          << named.name;
    }
  }
}

TEST(Plugin, CorrectPluginPassesTheCoveringGrid) {
  const Backend& b = plugin_backend_at(kCorrect);
  for (const test::NamedCase& named : test::covering_grid()) {
    const Verdict v = run_verdict(named.c, b);
    EXPECT_TRUE(v.passed()) << named.name << "\n" << verdict_text(v, named.c);
  }
}

TEST(Plugin, PlantedBugThroughThePluginIsFound) {
  Case c = test::small_case();
  c.indexer_rope = RopeStyle::kInterleaved;
  const Verdict v = run_verdict(c, plugin_backend_at(kBug));
  EXPECT_EQ(v.exit_code(), 1) << verdict_text(v, c);
  EXPECT_EQ(v.report.primary_signature().tensor, "index_q_fp8") << verdict_text(v, c);
}

// The minimizer through the plugin door: the reported kind of case shrinks
// to a small one that still fails the same way on the plugin.
TEST(Plugin, MinimizerShrinksAPluginsFailure) {
  const Backend& bug = plugin_backend_at(kBug);
  Case c = reported_case();
  c.indexer_rope = RopeStyle::kInterleaved;
  const Evaluate evaluate = evaluate_in_process(bug, {});
  const Observation target = evaluate(c);
  ASSERT_EQ(target.exit_code, 1) << target.text();
  MinimizeOptions options;
  options.budget_seconds = 60;
  const MinimizeResult r = minimize(c, target, evaluate, options);
  EXPECT_FALSE(r.budget_exhausted);
  EXPECT_EQ(r.minimized.num_tokens, 1);
  EXPECT_EQ(r.minimized.mqa_heads, 1);
  EXPECT_EQ(r.minimized.indexer_heads, 1);
  const Verdict v = run_verdict(r.minimized, bug);
  EXPECT_EQ(v.exit_code(), 1);
  // The swapped rope moves codes of the rope part (and, through the row's
  // scale, maybe the weight).
  bool rope_part = false;
  for (const auto& [signature, count] : v.report.counts) rope_part |= signature.part == "rope part";
  EXPECT_TRUE(rope_part) << verdict_text(v, r.minimized);
}

TEST(Plugin, ErrorStatusIsARuntimeErrorWithThePluginsMessage) {
  Case c = test::small_case();
  c.num_tokens = 23;
  const Verdict v = run_verdict(c, plugin_backend_at(kFailing));
  EXPECT_EQ(v.exit_code(), 3) << verdict_text(v, c);
  EXPECT_NE(v.outcome.reason.find("plugin host model, failing on T % 16 == 7 launch: planted error status: "
                                  "T % 16 == 7 (T = 23)"),
            std::string::npos)
      << v.outcome.reason;
  c.num_tokens = 24;
  EXPECT_TRUE(run_verdict(c, plugin_backend_at(kFailing)).passed());
}

TEST(Plugin, CaseOutsideTheDomainIsRefusedNotAFinding) {
  const LoadedPlugin* p = nullptr;
  ASSERT_EQ(load_plugin(kNarrow, &p), "");
  Case c = test::small_case();  // R = 8, L = 16, H = 3
  EXPECT_EQ(outside_plugin_domain(*p, c),
            "outside the domain of plugin host model, narrow domain: rope_dim 8 (the domain allows 64)");
  const Verdict v = run_verdict(c, plugin_backend_at(kNarrow));
  EXPECT_EQ(v.exit_code(), 2) << verdict_text(v, c);
  EXPECT_NE(v.outcome.reason.find("outside the domain of plugin"), std::string::npos) << v.outcome.reason;

  fit_to_domain(p->domain, c);
  EXPECT_EQ(validate_case(c), "");
  EXPECT_EQ(c.rope_dim, 64);
  EXPECT_EQ(c.nope_dim, 512);
  // The supports callback still refuses odd H, with its own words.
  EXPECT_EQ(outside_plugin_domain(*p, c),
            "outside the domain of plugin host model, narrow domain: mqa_heads 3 is odd (it wants even H)");
  c.mqa_heads = 4;
  EXPECT_EQ(outside_plugin_domain(*p, c), "");
  const Verdict fitted = run_verdict(c, plugin_backend_at(kNarrow));
  EXPECT_TRUE(fitted.passed()) << verdict_text(fitted, c);
}

// The mutator's repair: every sample case, moved into the narrow domain, is
// valid and inside the declared domain (the path, the layouts, the dims,
// the token limit), whatever it was before.
TEST(Plugin, FitMovesEveryCaseIntoTheDeclaredDomain) {
  const LoadedPlugin* p = nullptr;
  ASSERT_EQ(load_plugin(kNarrow, &p), "");
  int inside = 0;
  for (uint64_t i = 0; i < 300; ++i) {
    Case c = test::sample_case(i);
    c.num_tokens = 1 + static_cast<int64_t>(i % 100);
    fit_to_domain(p->domain, c);
    c.mqa_heads += c.mqa_heads % 2;  // the supports callback's rule, which fit cannot know
    const std::string invalid = validate_case(c);
    if (!invalid.empty()) {
      ADD_FAILURE() << "case " << i << ": " << invalid;
      continue;
    }
    const std::string outside = outside_plugin_domain(*p, c);
    EXPECT_EQ(outside, "") << "case " << i;
    inside += outside.empty();
    EXPECT_EQ(c.query_path, QueryPath::kBf16Packed);
    EXPECT_LE(c.num_tokens, 64);
  }
  EXPECT_EQ(inside, 300);
}

TEST(Plugin, GraphReplayNeedsACudaLaunch) {
  const Case c = test::small_case();
  VerdictOptions options;
  options.graph = true;
  const Verdict v = run_verdict(c, plugin_backend_at(kCorrect), options);
  EXPECT_EQ(v.exit_code(), 2);
  EXPECT_NE(v.outcome.reason.find("has no CUDA graph launch"), std::string::npos) << v.outcome.reason;
}

// The graph check's comparison, on the CPU: a backend whose "graph" run
// flips one byte of query_out fails with exactly that element as
// graph-replay-differs; one whose graph run is the same passes.
TEST(GraphReplay, EveryDifferenceFromTheEagerRunIsReported) {
  const Case c = test::small_case();
  Backend b = *find_backend("cpu-simd");
  b.run_in_graph = b.run;
  VerdictOptions options;
  options.graph = true;
  const Verdict same = run_verdict(c, b, options);
  EXPECT_TRUE(same.passed()) << verdict_text(same, c);
  EXPECT_NE(verdict_text(same, c).find("graph replay against eager"), std::string::npos);
  b.run_in_graph = [run = b.run](const Case& k, const Profile& p, TensorSet& t) {
    const Outcome o = run(k, p, t);
    *t.element(*t.find(TensorId::kQueryOut), 2, 1, 5) ^= 0x40;
    return o;
  };
  const Verdict v = run_verdict(c, b, options);
  ASSERT_EQ(v.exit_code(), 1) << verdict_text(v, c);
  EXPECT_EQ(v.report.total, 1);
  ASSERT_EQ(v.report.first.size(), 1u);
  const Mismatch& m = v.report.first[0];
  EXPECT_EQ(m.signature.text(), "query_out/nope front/graph-replay-differs");
  EXPECT_EQ(m.run, 'G');
  EXPECT_EQ(m.token, 2);
  EXPECT_EQ(m.head, 1);
  EXPECT_EQ(m.dim, 5);
}

struct ToolRun {
  int exit_code;
  std::string output;
};

ToolRun replay(const std::string& arguments) {
  const char* tool = std::getenv("QCHECK_REPLAY");
  const std::string out = ::testing::TempDir() + "/qcheck_plugin_replay_output.txt";
  const std::string command = std::string(tool != nullptr && tool[0] != 0 ? tool : QCHECK_REPLAY_PATH) + " " +
                              arguments + " > " + out + " 2>&1";
  const int status = std::system(command.c_str());
  std::stringstream text;
  text << std::ifstream(out).rdbuf();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
}

TEST(Plugin, ReplayThroughPluginGivesEachExitCode) {
  const std::string path = ::testing::TempDir() + "/qcheck_plugin_case.json";
  Case c = test::small_case();
  c.num_tokens = 23;
  c.indexer_rope = RopeStyle::kInterleaved;
  ASSERT_EQ(save_case_file(path, c, CaseForm::kJson), "");
  ToolRun r = replay(path + " --backend plugin:" + kCorrect);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("PASS backend plugin:" + kCorrect + ", profile qcheck"), std::string::npos) << r.output;
  r = replay(path + " --backend plugin:" + kBug);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  r = replay(path + " --backend plugin:" + kNarrow);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("outside the domain of plugin host model, narrow domain: rope_dim 8"), std::string::npos)
      << r.output;
  r = replay(path + " --backend plugin:" + kFailing);
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("planted error status"), std::string::npos) << r.output;
  r = replay(path + " --backend plugin:" + kNewerAbi);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("abi_version 2"), std::string::npos) << r.output;
  r = replay(path + " --backend plugin:" + kCorrect + " --against plugin:" + kBug);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("differences; primary signature index_q_fp8/"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace qcheck
