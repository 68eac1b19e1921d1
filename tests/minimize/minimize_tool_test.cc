// qcheck-minimize, by running the tool: its files, exit codes, the
// determinism gate, faults run in fresh processes, --save-regression.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "fuzz/case/case_file.h"
#include "fuzz/verdict/verdict.h"

namespace qcheck {
namespace {

struct ToolRun {
  int exit_code;
  std::string output;
};

std::string temp_dir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/qcheck_minimize_" +
                          ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" + name;
  EXPECT_EQ(std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()), 0);
  return dir;
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

ToolRun run(const std::string& tool, const std::string& arguments, const std::string& dir) {
  const std::string out = dir + "/tool-output.txt";
  const int status = std::system((tool + " " + arguments + " > " + out + " 2>&1").c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read(out)};
}

// The tools under test: the build tree's, unless QCHECK_MINIMIZE and
// QCHECK_REPLAY name others (the GPU bundle moves binaries away from their
// build paths).
std::string tool(const char* variable, const char* built) {
  const char* path = std::getenv(variable);
  return path != nullptr && path[0] != '\0' ? path : built;
}

ToolRun minimize(const std::string& arguments, const std::string& dir) {
  return run(tool("QCHECK_MINIMIZE", QCHECK_MINIMIZE_PATH), arguments, dir);
}

ToolRun replay(const std::string& arguments, const std::string& dir) {
  return run(tool("QCHECK_REPLAY", QCHECK_REPLAY_PATH), arguments, dir);
}

// The issue's own example: a planted tail bug found on a 41-token case with
// D = 16, R = 10, padded rows, random positions and bf16 weights.
std::string write_tail_case(const std::string& dir, CaseForm form) {
  Case c = reported_case();
  const std::string path = dir + (form == CaseForm::kJson ? "/case.json" : "/crash-artifact");
  EXPECT_EQ(save_case_file(path, c, form), "");
  return path;
}

TEST(MinimizeTool, WritesTheMinimizedCaseReportRegressionTestAndReplayCommand) {
  const std::string dir = temp_dir("out");
  const std::string artifact = write_tail_case(dir, CaseForm::kBinary);  // as libFuzzer saves it
  const ToolRun r = minimize(artifact + " --backend cpu-model-bug-skip-last-tail-token --out " + dir + "/min", dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string report = read(dir + "/min/report.txt");
  EXPECT_NE(report.find("failure kept by every step: mismatch "), std::string::npos) << report;
  EXPECT_NE(report.find("minimized: T=1 H=1 NI=1"), std::string::npos) << report;
  EXPECT_NE(report.find("rule involved: "), std::string::npos) << report;
  EXPECT_NE(report.find("== which fields matter"), std::string::npos) << report;
  EXPECT_NE(report.find("verdicts (oracle calls)"), std::string::npos) << report;
  EXPECT_NE(report.find("elements 16423 -> "), std::string::npos) << report;
  EXPECT_NE(read(dir + "/min/regression_test.cc").find("TEST(Regression, Case"), std::string::npos);
  EXPECT_NE(read(dir + "/min/replay.txt").find("--backend cpu-model-bug-skip-last-tail-token"), std::string::npos);
  // Both forms of the minimized case decode to the same case, which fails on replay.
  Case json, binary;
  ASSERT_EQ(load_case_file(dir + "/min/minimized.json", &json), "");
  ASSERT_EQ(load_case_file(dir + "/min/minimized.case", &binary), "");
  EXPECT_EQ(json, binary);
  EXPECT_EQ(json.num_tokens, 1);
  EXPECT_FALSE(json.has_indexer);
  const ToolRun replayed = replay(dir + "/min/minimized.json --backend cpu-model-bug-skip-last-tail-token", dir);
  EXPECT_EQ(replayed.exit_code, 1) << replayed.output;
}

TEST(MinimizeTool, SaveRegressionAddsTheCaseToTheCorpus) {
  const std::string dir = temp_dir("corpus");
  ASSERT_EQ(std::system(("mkdir -p " + dir + "/corpus/regressions").c_str()), 0);
  const std::string json = write_tail_case(dir, CaseForm::kJson);
  const ToolRun r = minimize(json + " --backend cpu-model-bug-skip-last-tail-token --no-explain --save-regression --corpus " +
                                 dir + "/corpus --out " + dir + "/min",
                             dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("saved as a regression: " + dir + "/corpus/regressions/"), std::string::npos) << r.output;
  std::vector<std::string> files;
  ASSERT_EQ(list_case_files(dir + "/corpus/regressions", &files), "");
  ASSERT_EQ(files.size(), 1u);
  // A regression passes on the correct model (it guards the fix).
  EXPECT_EQ(replay(files[0] + " --backend cpu-model", dir).exit_code, 0);
}

TEST(MinimizeTool, ARaceIsReportedAndNotShrunk) {
  const std::string dir = temp_dir("race");
  const std::string json = write_tail_case(dir, CaseForm::kJson);
  const ToolRun r = minimize(json + " --backend cpu-bug-race --out " + dir + "/min", dir);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("NONDETERMINISTIC on cpu-bug-race: not minimized"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("index_q_fp8[t=0, h=0, d=0]"), std::string::npos) << "both results, located\n" << r.output;
  EXPECT_NE(read(dir + "/min/report.txt").find("NONDETERMINISTIC"), std::string::npos);
  EXPECT_EQ(read(dir + "/min/minimized.json"), "") << "nothing shrunk, nothing written as minimized";
}

TEST(MinimizeTool, AFaultIsShrunkInFreshProcesses) {
  const std::string dir = temp_dir("crash");
  Case c;
  c.num_tokens = 39;  // 39 % 16 == 7: cpu-bug-crash ends the process
  set_default_scales(c);
  ASSERT_EQ(save_case_file(dir + "/case.json", c, CaseForm::kJson), "");
  const ToolRun r = minimize(dir + "/case.json --backend cpu-bug-crash --out " + dir + "/min", dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("every candidate in a fresh process"), std::string::npos) << r.output;
  Case minimized;
  ASSERT_EQ(load_case_file(dir + "/min/minimized.json", &minimized), "");
  EXPECT_EQ(minimized.num_tokens, 7) << "the smallest T with T % 16 == 7";
  EXPECT_EQ(minimized.mqa_heads, 1);
}

TEST(MinimizeTool, ACaseThatPassesOrCannotBeReadIsRefused) {
  const std::string dir = temp_dir("refusals");
  const std::string json = write_tail_case(dir, CaseForm::kJson);
  ToolRun r = minimize(json + " --backend cpu-model --out " + dir + "/min", dir);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("the case passes on cpu-model: nothing to minimize"), std::string::npos) << r.output;
  EXPECT_EQ(minimize(dir + "/no-such-file --backend cpu-model", dir).exit_code, 2);
  EXPECT_EQ(minimize(json + " --backend no-such-backend", dir).exit_code, 2);
  EXPECT_EQ(minimize(json, dir).exit_code, 2);
  EXPECT_EQ(minimize(json + " --backend cpu-model --budget -1", dir).exit_code, 2);
  const ToolRun gpu = minimize(json + " --backend cuda-blocked-bug-tail", dir);
  if (gpu.output.find("no CUDA device") != std::string::npos) {
    EXPECT_EQ(gpu.exit_code, 3) << gpu.output;
  }
}

}  // namespace
}  // namespace qcheck
