// qcheck-replay's exit codes and output, by running the tool itself.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "fuzz/buffers/device_mirror.h"
#include "fuzz/case/case_binary.h"
#include "fuzz/case/case_file.h"
#include "tests/harness/case_samples.h"

namespace qcheck {
namespace {

struct ToolRun {
  int exit_code;
  std::string output;  // stdout and stderr together
};

// A path in the temporary folder private to the running test: ctest runs
// the tests of this file in parallel processes.
std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "/qcheck_" +
         ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" + name;
}

// The tool under test: the build tree's, unless QCHECK_REPLAY names another
// (the GPU bundle moves binaries away from their build paths).
std::string replay_tool() {
  const char* override_path = std::getenv("QCHECK_REPLAY");
  return override_path != nullptr && override_path[0] != '\0' ? override_path : QCHECK_REPLAY_PATH;
}

ToolRun replay(const std::string& arguments) {
  const std::string out = temp_path("output.txt");
  const std::string command = replay_tool() + " " + arguments + " > " + out + " 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
}

std::string write_case(const std::string& name, const Case& c, CaseForm form) {
  const std::string path = temp_path(name);
  EXPECT_EQ(save_case_file(path, c, form), "");
  return path;
}

std::string write_bytes(const std::string& name, const std::vector<uint8_t>& bytes) {
  const std::string path = temp_path(name);
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  return path;
}

TEST(Replay, PassExitsZero) {
  const std::string json = write_case("pass.json", test::small_case(), CaseForm::kJson);
  const std::string binary = write_case("pass.bin", test::small_case(), CaseForm::kBinary);
  ToolRun r = replay(json);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.rfind("PASS backend cpu-simd, profile qcheck", 0), 0u) << r.output;
  r = replay(binary + " --backend cpu-scalar --oracle scalar --profile vllm-triton");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = replay(binary + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\"verdict\": \"pass\""), std::string::npos) << r.output;
}

TEST(Replay, MismatchExitsOneWithAPlantedBug) {
#ifndef QCHECK_HAVE_CPU_MODEL
  GTEST_SKIP() << "ops/fused_q/cpu_model/cpu_model.cc is not built: no planted-bug CPU backend";
#endif
  Case c = test::small_case();  // bf16 packed: truncation shows in the rope tail
  const std::string path = write_case("mismatch.json", c, CaseForm::kJson);
  ToolRun r = replay(path + " --backend cpu-model-bug-truncating-bf16 --max-listed 3");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(r.output.rfind("FAIL backend cpu-model-bug-truncating-bf16 (planted bug)", 0), 0u)
      << r.output;
  EXPECT_NE(r.output.find("query_out/rope tail/"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("first 3:"), std::string::npos) << r.output;
  r = replay(path + " --backend cpu-model-bug-truncating-bf16 --json");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("\"verdict\": \"mismatch\""), std::string::npos) << r.output;
}

// --domain refuses a case outside it (exit 2, the reason); --known names
// the entry that covers a failure, and the JSON carries group and entry.
TEST(Replay, DomainAndKnownBugFiles) {
#ifndef QCHECK_HAVE_CPU_MODEL
  GTEST_SKIP() << "ops/fused_q/cpu_model/cpu_model.cc is not built: no planted-bug CPU backend";
#endif
  const std::string path = write_case("case.json", test::small_case(), CaseForm::kJson);
  const std::string domain = temp_path("domain.json"), known = temp_path("known.json");
  std::ofstream(domain) << R"({"dims": {"num_tokens": {"max": 16}}})";
  std::ofstream(known) << R"({"known": [{"signature": "query_out/rope tail/*", "note": "truncates"}]})";
  ToolRun r = replay(path + " --backend cpu-model-bug-truncating-bf16 --domain " + domain);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("INVALID INPUT: outside the domain of " + domain +
                          ": num_tokens 17 (the domain allows up to 16)"),
            std::string::npos)
      << r.output;
  r = replay(path + " --backend cpu-model-bug-truncating-bf16 --known " + known);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("KNOWN: query_out/rope tail is covered by known bug 0 [query_out/rope tail/*] (truncates)"),
            std::string::npos)
      << r.output;
  r = replay(path + " --backend cpu-model-bug-truncating-bf16 --json --known " + known);
  EXPECT_NE(r.output.find("\"group\": \"query_out/rope tail\""), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\"known\": 0"), std::string::npos) << r.output;
  r = replay(path + " --backend cpu-model-bug-truncating-bf16 --json");
  EXPECT_NE(r.output.find("\"known\": -1"), std::string::npos) << r.output;
  std::ofstream(known) << R"({"known": [{"pattern": "x"}]})";
  r = replay(path + " --known " + known);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("known[0].pattern: unknown key"), std::string::npos) << r.output;
}

TEST(Replay, InvalidInputExitsTwo) {
  const std::vector<uint8_t> good = encode_case(test::small_case());
  std::vector<uint8_t> bad_magic = good;
  bad_magic[0] = 'X';
  ToolRun r = replay(write_bytes("bad_magic.bin", bad_magic));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("bad magic"), std::string::npos) << r.output;
  r = replay(write_bytes("truncated.bin", {good.begin(), good.begin() + 20}));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("truncated"), std::string::npos) << r.output;
  Case invalid = test::small_case();
  invalid.mqa_heads = 0;
  r = replay(write_case("invalid.json", invalid, CaseForm::kJson));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("INVALID INPUT: mqa_heads (H) = 0"), std::string::npos) << r.output;
  const std::string good_path = write_bytes("good.bin", good);
  EXPECT_EQ(replay(good_path + " --backend no-such-backend").exit_code, 2);
  EXPECT_EQ(replay(good_path + " --profile no-such-profile").exit_code, 2);
  EXPECT_EQ(replay(good_path + " --oracle vector").exit_code, 2);
  EXPECT_EQ(replay(good_path + " --colour").exit_code, 2);
  EXPECT_EQ(replay(temp_path("no_such_file.bin")).exit_code, 2);
  EXPECT_EQ(replay("").exit_code, 2);
}

TEST(Replay, GpuBackendWithoutAGpuExitsThree) {
  const std::string path = write_case("gpu.bin", test::small_case(), CaseForm::kBinary);
  const ToolRun r = replay(path + " --backend cuda-blocked");
  if (cuda_device_problem().empty()) {
    EXPECT_EQ(r.exit_code, 0) << "a CUDA device is present: the kernel must pass\n" << r.output;
    return;
  }
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("RUNTIME ERROR: backend cuda-blocked cannot run here: no CUDA device"),
            std::string::npos)
      << r.output;
}

TEST(Replay, SeveralFilesAndRepeats) {
  const std::string dir = temp_path("cases");
  ASSERT_EQ(std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()), 0);
  Case second = test::small_case();
  second.num_tokens = 5;
  ASSERT_EQ(save_case_file(dir + "/a.json", test::small_case(), CaseForm::kJson), "");
  ASSERT_EQ(save_case_file(dir + "/b.bin", second, CaseForm::kBinary), "");
  std::ofstream(dir + "/README.md") << "not a case";
  ToolRun r = replay(dir + " --repeat 3");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("repeat: 3 runs, 0 differ from the first"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("qcheck-replay: 2 files on cpu-simd, each repeated 3 times: 2 passed"),
            std::string::npos)
      << r.output;
  r = replay(dir + " --quiet");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("PASS"), std::string::npos) << "--quiet lists only failures\n" << r.output;
  // The worst exit code over the files: an invalid one makes it 2.
  Case invalid = test::small_case();
  invalid.mqa_heads = 0;
  ASSERT_EQ(save_case_file(dir + "/c.json", invalid, CaseForm::kJson), "");
  r = replay(dir + " --quiet");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("2 passed, 0 failed, 1 invalid"), std::string::npos) << r.output;
  EXPECT_EQ(replay(dir + " --repeat 0").exit_code, 2);
}

TEST(Replay, ListsBackends) {
  const ToolRun r = replay("--list-backends");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* name :
       {"cpu-scalar", "cpu-simd", "cuda-legacy", "cuda-blocked", "cuda-blocked-bug-tail"}) {
    EXPECT_NE(r.output.find(name), std::string::npos) << name << "\n" << r.output;
  }
}

}  // namespace
}  // namespace qcheck

namespace qcheck {
namespace {

TEST(Replay, AgainstComparesTwoKernelsOnTheSameInputs) {
  const std::string path = write_case("against.case", test::small_case(), CaseForm::kBinary);
  ToolRun r = replay(path + " --backend cpu-simd --against cpu-model");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.rfind("AGAINST cpu-simd vs cpu-model: the outputs agree bit for bit\n", 0), 0u) << r.output;
  r = replay(path + " --backend cpu-model --against cpu-model-bug-swapped-indexer-rope");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("differences; primary signature index_q_fp8/"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("== differences (expected: cpu-model, got: cpu-model-bug-swapped-indexer-rope)"),
            std::string::npos)
      << r.output;
  r = replay(path + " --against no-such-backend");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--against: unknown backend no-such-backend (known: "), std::string::npos) << r.output;
}

}  // namespace
}  // namespace qcheck
