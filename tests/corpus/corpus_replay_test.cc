// The corpus gate: every case file under corpus/ (seeds, regressions,
// examples) through every real backend of this build (planted bugs excluded,
// the harmless twin included), one test per (folder, backend). A test fails
// with the verdict of the first failing file and the count of failures; a
// CUDA backend without a device is skipped with the backend's reason, never
// counted as passed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "fuzz/backends/backend.h"
#include "fuzz/case/case_file.h"
#include "fuzz/verdict/verdict.h"

namespace qcheck {
namespace {

const char* const kFolders[] = {"fused_q", "regressions", "examples"};

// The corpus folder: QCHECK_CORPUS_DIR from the environment (a GPU bundle
// carries its own copy of corpus/), else the source tree's, compiled in.
std::string corpus_dir() {
  const char* dir = std::getenv("QCHECK_CORPUS_DIR");
  return dir != nullptr && *dir != '\0' ? dir : QCHECK_CORPUS_DIR;
}

std::vector<std::string> case_files(const std::string& folder) {
  std::vector<std::string> files;
  const std::string dir = corpus_dir() + "/" + folder;
  if (!list_case_files(dir, &files).empty()) return {};
  return files;
}

using Param = std::tuple<std::string, std::string>;  // folder, backend

std::vector<Param> params() {
  std::vector<Param> all;
  for (const char* folder : kFolders) {
    for (const Backend& b : backends()) {
      if (!b.planted_bug) all.emplace_back(folder, b.name);
    }
  }
  return all;
}

std::string test_name(const testing::TestParamInfo<Param>& info) {
  std::string name = std::get<0>(info.param) + "__" + std::get<1>(info.param);
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

class CorpusReplay : public testing::TestWithParam<Param> {};

TEST_P(CorpusReplay, EveryFilePasses) {
  const auto& [folder, backend_name] = GetParam();
  const Backend* backend = find_backend(backend_name);
  ASSERT_NE(backend, nullptr) << backend_name;
  const std::vector<std::string> files = case_files(folder);
  if (files.empty()) GTEST_SKIP() << corpus_dir() << "/" << folder << " holds no case files (set QCHECK_CORPUS_DIR)";
  const std::string unavailable = backend->domain(Case{});
  if (!unavailable.empty()) GTEST_SKIP() << "backend " << backend_name << " cannot run here: " << unavailable;

  // The oracle's scalar rows check every backend except cpu-scalar (the
  // scalar rows themselves), which the SIMD rows check. Fixed-profile
  // backends are judged under their own profile (Backend::fixed_profile).
  VerdictOptions options;
  options.oracle_rows = backend_name == "cpu-scalar" ? OracleRows::kSimd : OracleRows::kScalar;

  int failures = 0, skipped = 0;
  std::string first;
  for (const std::string& file : files) {
    Case c;
    const std::string error = load_case_file(file, &c);
    ASSERT_EQ(error, "") << "a corpus file must decode";
    const Verdict v = run_verdict(c, *backend, options);
    if (v.outcome.kind == OutcomeKind::kRuntimeError && v.outcome.reason.find("no CUDA device") != std::string::npos) {
      ++skipped;
      continue;
    }
    if (v.passed()) continue;
    if (++failures == 1) first = file + "\n" + verdict_text(v, c);
  }
  if (skipped == static_cast<int>(files.size())) GTEST_SKIP() << "no CUDA device for " << backend_name;
  EXPECT_EQ(failures, 0) << failures << " of " << files.size() << " files in corpus/" << folder
                         << " fail on " << backend_name << "; the first: " << first;
  EXPECT_EQ(skipped, 0) << skipped << " files could not run (no CUDA device) although others did";
  std::printf("corpus/%s on %s: %zu files, %d failed\n", folder.c_str(), backend_name.c_str(), files.size(), failures);
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusReplay, testing::ValuesIn(params()), test_name);

}  // namespace
}  // namespace qcheck
