// Prints what must not change while fused_q moves into an op of its own
// (ops/fused_q over op-generic machinery): one text file per concern in
// OUTDIR. check_goldens.sh compares them, and libqcheck's exported symbols,
// with tests/goldens/expected, taken before anything moved.
//
//   corpus.txt      every corpus file: its bytes' XXH64, and the decoded case
//                   (form, digest, JSON on one line) or the decoder's message
//   bins.txt        the semantic bin names, in their order
//   backends.txt    the backend list, in its order, with every flag
//   profiles.txt    the profile list and each profile's description
//   verdicts.txt    verdict texts (and JSON) for fixed (case, backend) pairs
//                   on the CPU backends: the oracle, the CPU model, its
//                   planted bugs, the auto profile
//   abi.txt         sizes and field offsets of the plugin ABI's and the C
//                   API's structs, and their version numbers
//
// usage: qcheck_goldens_print OUTDIR CORPUS_DIR
#include <cstddef>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "fuzz/backends/backend.h"
#include "fuzz/case/case_binary.h"
#include "fuzz/case/case_file.h"
#include "fuzz/case/case_json.h"
#include "fuzz/mutator/semantic_bins.h"
#include "fuzz/verdict/verdict.h"
#include "include/qcheck/qcheck.h"
#include "include/qcheck/qcheck_plugin.h"
#include "numerics/profile.h"
#include "tests/harness/case_samples.h"

namespace qcheck {
namespace {

std::string one_line(const std::string& text) {
  std::string out;
  bool blank = false;
  for (char ch : text) {
    if (ch == '\n') {
      blank = true;
      continue;
    }
    if (blank && ch == ' ') continue;
    blank = false;
    out += ch;
  }
  return out;
}

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string corpus_text(const std::string& corpus) {
  std::ostringstream out;
  // The numerics target's inputs are not cases: their bytes only.
  for (const char* folder : {"fused_q", "examples", "regressions", "case_decode", "numerics"}) {
    std::vector<std::string> files;
    const std::string dir = corpus + "/" + folder;
    if (std::string error = list_case_files(dir, &files); !error.empty()) {
      out << folder << ": " << error << "\n";
      continue;
    }
    for (const std::string& path : files) {
      std::string bytes;
      if (std::string error = read_file_whole(path, &bytes); !error.empty()) {
        out << error << "\n";
        continue;
      }
      out << path.substr(corpus.size() + 1) << " bytes " << hex64(XXH64(bytes.data(), bytes.size(), 0));
      if (std::string(folder) == "numerics") {
        out << "\n";
        continue;
      }
      Case c;
      CaseForm form = CaseForm::kBinary;
      const std::string error =
          parse_case_bytes(std::vector<uint8_t>(bytes.begin(), bytes.end()), &c, &form);
      if (!error.empty()) {
        out << " refused: " << error << "\n";
        continue;
      }
      out << (form == CaseForm::kJson ? " json" : " binary") << " digest " << case_digest(c) << "\n  "
          << one_line(case_to_json(c)) << "\n";
    }
  }
  return out.str();
}

std::string bins_text() {
  std::ostringstream out;
  for (int i = 0; i < fuzzing::bin_count(); ++i) out << i << " " << fuzzing::bin_name(i) << "\n";
  return out.str();
}

std::string backends_text() {
  std::ostringstream out;
  for (const Backend& b : backends()) {
    out << b.name << " planted_bug=" << b.planted_bug << " harmless_twin=" << b.harmless_twin
        << " ends_process=" << b.ends_process << " can_race=" << b.can_race << " fixed_profile="
        << (b.fixed_profile.empty() ? "-" : b.fixed_profile) << " graph=" << static_cast<bool>(b.run_in_graph)
        << "\n  " << b.description << "\n";
  }
  return out.str();
}

std::string profiles_text() {
  std::ostringstream out;
  for (const std::string& name : profile_names()) {
    Profile p;
    out << name << "\n";
    if (!find_profile(name, &p)) {
      out << "  (not found)\n";
      continue;
    }
    out << describe(p) << "\n";
  }
  return out.str();
}

// The pairs: every case of the covering grid on the oracle's scalar rows and
// on the CPU model (each must pass); every planted bug of the CPU model on
// the small case and on the real dims; the auto profile on a few cases; one
// case the backend refuses.
std::string verdicts_text() {
  std::ostringstream out;
  auto verdict = [&](const std::string& label, const Case& c, const std::string& backend_name,
                     const VerdictOptions& options) {
    const Backend* b = find_backend(backend_name);
    out << "== " << label << " on " << backend_name
        << (options.profile.empty() ? "" : " profile " + options.profile) << "\n";
    if (b == nullptr) {
      out << "(no backend)\n";
      return;
    }
    const Verdict v = run_verdict(c, *b, options);
    out << verdict_text(v, c) << "\n" << one_line(verdict_json(v, c)) << "\n";
  };
  const std::vector<test::NamedCase> grid = test::covering_grid();
  VerdictOptions scalar;
  scalar.oracle_rows = OracleRows::kScalar;
  for (size_t i = 0; i < grid.size(); i += 3) verdict(grid[i].name, grid[i].c, "cpu-scalar", scalar);
  for (const test::NamedCase& g : grid) verdict(g.name, g.c, "cpu-model", {});
  Case real = test::small_case();
  real.index_dim = 128;
  real.rope_dim = 64;
  real.nope_dim = 512;
  for (const Backend& b : backends()) {
    if (!b.planted_bug || b.ends_process || b.name.rfind("cpu-", 0) != 0 || b.name == "cpu-bug-race") continue;
    verdict("small", test::small_case(), b.name, {});
    verdict("real dims", real, b.name, {});
  }
  VerdictOptions auto_profile;
  auto_profile.profile = "auto";
  for (size_t i = 0; i < grid.size(); i += 11) verdict(grid[i].name, grid[i].c, "cpu-model", auto_profile);
  VerdictOptions vllm;
  vllm.profile = "vllm-triton";
  verdict("small", test::small_case(), "cpu-model", vllm);
  verdict("small", test::small_case(), "cpu-simd", vllm);
  Case bad = test::small_case();
  bad.rope_dim = bad.index_dim + 2;
  verdict("R past D", bad, "cpu-model", {});
  return out.str();
}

#define QCHECK_FIELD(type, field) out << "  " #field " " << offsetof(type, field) << "\n"

std::string abi_text() {
  std::ostringstream out;
  out << "QCHECK_PLUGIN_ABI_VERSION " << QCHECK_PLUGIN_ABI_VERSION << "\n";
  out << "qcheck_plugin_input " << sizeof(qcheck_plugin_input) << "\n";
  QCHECK_FIELD(qcheck_plugin_input, data);
  QCHECK_FIELD(qcheck_plugin_input, token_stride);
  QCHECK_FIELD(qcheck_plugin_input, head_stride);
  out << "qcheck_plugin_output " << sizeof(qcheck_plugin_output) << "\n";
  QCHECK_FIELD(qcheck_plugin_output, data);
  QCHECK_FIELD(qcheck_plugin_output, token_stride);
  QCHECK_FIELD(qcheck_plugin_output, head_stride);
  out << "qcheck_plugin_cache " << sizeof(qcheck_plugin_cache) << "\n";
  QCHECK_FIELD(qcheck_plugin_cache, data);
  QCHECK_FIELD(qcheck_plugin_cache, dtype);
  QCHECK_FIELD(qcheck_plugin_cache, rows);
  QCHECK_FIELD(qcheck_plugin_cache, row_stride);
  out << "qcheck_plugin_args " << sizeof(qcheck_plugin_args) << "\n";
  QCHECK_FIELD(qcheck_plugin_args, struct_size);
  QCHECK_FIELD(qcheck_plugin_args, num_tokens);
  QCHECK_FIELD(qcheck_plugin_args, mqa_heads);
  QCHECK_FIELD(qcheck_plugin_args, indexer_heads);
  QCHECK_FIELD(qcheck_plugin_args, index_dim);
  QCHECK_FIELD(qcheck_plugin_args, rope_dim);
  QCHECK_FIELD(qcheck_plugin_args, nope_dim);
  QCHECK_FIELD(qcheck_plugin_args, query_path);
  QCHECK_FIELD(qcheck_plugin_args, has_indexer);
  QCHECK_FIELD(qcheck_plugin_args, indexer_rope);
  QCHECK_FIELD(qcheck_plugin_args, ql_nope_aliased);
  QCHECK_FIELD(qcheck_plugin_args, positions);
  QCHECK_FIELD(qcheck_plugin_args, mqa_cache);
  QCHECK_FIELD(qcheck_plugin_args, indexer_cache);
  QCHECK_FIELD(qcheck_plugin_args, q_pe);
  QCHECK_FIELD(qcheck_plugin_args, ql_nope);
  QCHECK_FIELD(qcheck_plugin_args, index_q);
  QCHECK_FIELD(qcheck_plugin_args, index_weights);
  QCHECK_FIELD(qcheck_plugin_args, index_weights_dtype);
  QCHECK_FIELD(qcheck_plugin_args, query_out);
  QCHECK_FIELD(qcheck_plugin_args, index_q_fp8);
  QCHECK_FIELD(qcheck_plugin_args, index_weights_out);
  QCHECK_FIELD(qcheck_plugin_args, index_weights_out_dtype);
  QCHECK_FIELD(qcheck_plugin_args, q_scale_bits);
  QCHECK_FIELD(qcheck_plugin_args, softmax_scale_bits);
  QCHECK_FIELD(qcheck_plugin_args, head_scale_bits);
  out << "qcheck_plugin_domain " << sizeof(qcheck_plugin_domain) << "\n";
  QCHECK_FIELD(qcheck_plugin_domain, struct_size);
  QCHECK_FIELD(qcheck_plugin_domain, query_paths);
  QCHECK_FIELD(qcheck_plugin_domain, indexer);
  QCHECK_FIELD(qcheck_plugin_domain, indexer_ropes);
  QCHECK_FIELD(qcheck_plugin_domain, cache_dtypes);
  QCHECK_FIELD(qcheck_plugin_domain, weights_dtypes);
  QCHECK_FIELD(qcheck_plugin_domain, weights_out_dtypes);
  QCHECK_FIELD(qcheck_plugin_domain, aliasing);
  QCHECK_FIELD(qcheck_plugin_domain, contiguous_only);
  QCHECK_FIELD(qcheck_plugin_domain, rope_dims);
  QCHECK_FIELD(qcheck_plugin_domain, nope_dims);
  QCHECK_FIELD(qcheck_plugin_domain, index_dims);
  QCHECK_FIELD(qcheck_plugin_domain, max_mqa_heads);
  QCHECK_FIELD(qcheck_plugin_domain, max_indexer_heads);
  QCHECK_FIELD(qcheck_plugin_domain, max_tokens);
  out << "qcheck_plugin " << sizeof(qcheck_plugin) << "\n";
  QCHECK_FIELD(qcheck_plugin, struct_size);
  QCHECK_FIELD(qcheck_plugin, abi_version);
  QCHECK_FIELD(qcheck_plugin, name);
  QCHECK_FIELD(qcheck_plugin, profile);
  QCHECK_FIELD(qcheck_plugin, memory);
  QCHECK_FIELD(qcheck_plugin, launch);
  QCHECK_FIELD(qcheck_plugin, domain);
  QCHECK_FIELD(qcheck_plugin, supports);
  out << "QCHECK_API_VERSION " << QCHECK_API_VERSION << "\n";
  out << "qcheck_buffer_info " << sizeof(qcheck_buffer_info) << "\n";
  QCHECK_FIELD(qcheck_buffer_info, struct_size);
  QCHECK_FIELD(qcheck_buffer_info, name);
  QCHECK_FIELD(qcheck_buffer_info, bytes);
  QCHECK_FIELD(qcheck_buffer_info, is_output);
  out << "qcheck_tensor_info " << sizeof(qcheck_tensor_info) << "\n";
  QCHECK_FIELD(qcheck_tensor_info, struct_size);
  QCHECK_FIELD(qcheck_tensor_info, name);
  QCHECK_FIELD(qcheck_tensor_info, role);
  QCHECK_FIELD(qcheck_tensor_info, dtype);
  QCHECK_FIELD(qcheck_tensor_info, ndim);
  QCHECK_FIELD(qcheck_tensor_info, shape);
  QCHECK_FIELD(qcheck_tensor_info, strides);
  QCHECK_FIELD(qcheck_tensor_info, buffer);
  QCHECK_FIELD(qcheck_tensor_info, offset_bytes);
  out << "qcheck_verdict_options " << sizeof(qcheck_verdict_options) << "\n";
  QCHECK_FIELD(qcheck_verdict_options, struct_size);
  QCHECK_FIELD(qcheck_verdict_options, profile);
  QCHECK_FIELD(qcheck_verdict_options, kernel);
  QCHECK_FIELD(qcheck_verdict_options, max_listed);
  QCHECK_FIELD(qcheck_verdict_options, run_graph);
  return out.str();
}

bool write(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  return static_cast<bool>(f);
}

}  // namespace
}  // namespace qcheck

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s OUTDIR CORPUS_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  using namespace qcheck;
  const bool ok = write(dir + "/corpus.txt", corpus_text(argv[2])) && write(dir + "/bins.txt", bins_text()) &&
                  write(dir + "/backends.txt", backends_text()) && write(dir + "/profiles.txt", profiles_text()) &&
                  write(dir + "/verdicts.txt", verdicts_text()) && write(dir + "/abi.txt", abi_text());
  if (!ok) {
    std::fprintf(stderr, "cannot write into %s\n", dir.c_str());
    return 2;
  }
  return 0;
}
