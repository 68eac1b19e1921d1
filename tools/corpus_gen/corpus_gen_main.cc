// qcheck-corpus-gen OUTDIR
//
// Writes the deterministic seed corpus (ops/fused_q/seeds/seed_grid.h):
//   OUTDIR/fused_q/<case digest>       binary cases, named by case_digest
//   OUTDIR/examples/<name>.json        hand-readable cases
//   OUTDIR/numerics/<XXH64 of bytes>   numerics target inputs
//   OUTDIR/case_decode/<XXH64>         case_decode target inputs
//   OUTDIR/fused_k/<XXH64>             fused_k cases, binary (version 3)
//                                      (ops/fused_k/case: fused_k_seed_cases)
// Each of these folders is emptied first (README files are kept), so the
// output is exactly the grid. OUTDIR/regressions is never touched. Every
// case is validated before it is written: an invalid seed is a bug here.
// Exit codes: 0 written, 1 a seed is invalid or two seeds collide, 2 bad
// arguments or an I/O error.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "fuzz/case/case_binary.h"
#include "fuzz/case/case_file.h"
#include "core/op/any_case.h"
#include "ops/fused_k/case/fused_k_case.h"
#include "ops/fused_k/op.h"
#include "ops/fused_q/seeds/seed_grid.h"
#include "tools/common/cli.h"

namespace fs = std::filesystem;

namespace {

std::string hex64(uint64_t v) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
  return text;
}

// Empties `dir` (keeping README files) and creates it if needed.
bool reset_folder(const fs::path& dir) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) {
    std::fprintf(stderr, "qcheck-corpus-gen: cannot create %s: %s\n", dir.c_str(), error.message().c_str());
    return false;
  }
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().filename().string().rfind("README", 0) != 0) fs::remove(entry.path());
  }
  return true;
}

bool write_bytes(const fs::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) std::fprintf(stderr, "qcheck-corpus-gen: cannot write %s\n", path.c_str());
  return static_cast<bool>(out);
}

int write_cases(const fs::path& dir, const std::vector<qcheck::corpus::NamedCase>& cases, bool json) {
  std::set<std::string> names;
  for (const auto& [name, c] : cases) {
    const std::string error = qcheck::validate_case(c);
    if (!error.empty()) {
      std::fprintf(stderr, "qcheck-corpus-gen: seed %s is invalid: %s\n", name.c_str(), error.c_str());
      return 1;
    }
    const std::string file = json ? name + ".json" : qcheck::case_digest(c);
    if (!names.insert(file).second) {
      std::fprintf(stderr, "qcheck-corpus-gen: seed %s collides with another (%s)\n", name.c_str(), file.c_str());
      return 1;
    }
    const std::string save = qcheck::save_case_file((dir / file).string(), c,
                                                    json ? qcheck::CaseForm::kJson : qcheck::CaseForm::kBinary);
    if (!save.empty()) {
      std::fprintf(stderr, "qcheck-corpus-gen: %s\n", save.c_str());
      return 2;
    }
  }
  std::printf("%-12s %zu files\n", dir.filename().c_str(), cases.size());
  return 0;
}

int write_inputs(const fs::path& dir, const std::vector<qcheck::corpus::NamedBytes>& inputs) {
  std::set<std::string> names;
  for (const auto& [name, bytes] : inputs) {
    const std::string file = hex64(XXH64(bytes.data(), bytes.size(), 0));
    if (!names.insert(file).second) {
      std::fprintf(stderr, "qcheck-corpus-gen: input %s collides with another (%s)\n", name.c_str(), file.c_str());
      return 1;
    }
    if (!write_bytes(dir / file, bytes)) return 2;
  }
  std::printf("%-12s %zu files\n", dir.filename().c_str(), inputs.size());
  return 0;
}

// fused_k's seeds: each validated, then written in the generic binary form.
int write_fused_k(const fs::path& dir) {
  std::vector<qcheck::corpus::NamedBytes> inputs;
  for (const qcheck::fused_k::FusedKCase& c : qcheck::fused_k::fused_k_seed_cases()) {
    const std::string error = qcheck::fused_k::validate_fused_k_case(c);
    if (!error.empty()) {
      std::fprintf(stderr, "qcheck-corpus-gen: fused_k seed %s is invalid: %s\n", describe(c).c_str(), error.c_str());
      return 1;
    }
    inputs.push_back({describe(c), qcheck::encode_any_case(qcheck::fused_k::to_any_case(c))});
  }
  return write_inputs(dir, inputs);
}

}  // namespace

constexpr const char* kUsage =
    "usage: qcheck-corpus-gen OUTDIR   (writes fused_q/, examples/, numerics/, case_decode/, fused_k/)\n";

int main(int argc, char** argv) {
  if (const int done = qcheck::cli::help_or_version(argc, argv, "qcheck-corpus-gen", kUsage); done >= 0) return done;
  if (argc == 2 && argv[1][0] == '-') return qcheck::cli::unknown_option("qcheck-corpus-gen", argv[1], kUsage);
  if (argc != 2) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const fs::path out = argv[1];
  for (const char* sub : {"fused_q", "examples", "numerics", "case_decode", "fused_k"}) {
    if (!reset_folder(out / sub)) return 2;
  }
  int status = write_cases(out / "fused_q", qcheck::corpus::fused_q_seeds(), false);
  if (status == 0) status = write_cases(out / "examples", qcheck::corpus::example_cases(), true);
  if (status == 0) status = write_inputs(out / "numerics", qcheck::corpus::numerics_seeds());
  if (status == 0) status = write_inputs(out / "case_decode", qcheck::corpus::case_decode_seeds());
  if (status == 0) status = write_fused_k(out / "fused_k");
  return status;
}
