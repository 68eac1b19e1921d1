#include "ops/fused_q/mutants/equivalence.h"

#include "fuzz/verdict/verdict.h"
#include "ops/fused_q/plugins/mutant_config.h"

namespace qcheck::mutants {
namespace {

constexpr int64_t kTokens = 127;  // one negative bf16 NaN pattern per token: 0xFF81 .. 0xFFFF

enum class NanPlace { kWholeRows, kHalfRows, kCacheCos };

void add_row_edits(Case& c, TensorId tensor, int64_t width, NanPlace place) {
  for (int64_t t = 0; t < kTokens; ++t) {
    ValueEdit e;
    e.tensor = tensor;
    e.row = t;
    e.elements = place == NanPlace::kHalfRows ? width / 2 : -1;
    e.bits = 0xFF81u + static_cast<uint64_t>(t);
    c.edits.push_back(e);
  }
}

void add_cache_edits(Case& c, TensorId cache) {
  for (int64_t row = 0; row < c.cache_rows; ++row) {
    ValueEdit e;
    e.tensor = cache;
    e.row = row;
    e.elements = c.rope_dim / 2;  // the cos half
    e.bits = 0xFF800001u + static_cast<uint64_t>(row) * 0x1234u;
    c.edits.push_back(e);
  }
}

// H in [1, 64] that puts the case in planted-plugin configuration `config`.
int64_t heads_for(const Case& c, int config) {
  for (int64_t h = 1; h <= 64; ++h) {
    const int got = static_cast<int>(plugin::mutant_config(c.num_tokens, h, c.indexer_heads, c.index_dim,
                                                            c.rope_dim, c.nope_dim, static_cast<int>(c.query_path)));
    if (got == config) return h;
  }
  return 1;
}

}  // namespace

std::vector<Case> negative_nan_cases() {
  std::vector<Case> cases;
  for (QueryPath path : {QueryPath::kFp8Packed, QueryPath::kBf16Packed}) {
    for (RopeStyle rope : {RopeStyle::kNeox, RopeStyle::kInterleaved}) {
      for (bool element_loads : {false, true}) {
        for (uint32_t q_scale : {0x3F800000u, 0x3EBD70A4u}) {
          for (NanPlace place : {NanPlace::kWholeRows, NanPlace::kHalfRows, NanPlace::kCacheCos}) {
            for (int config = 0; config < plugin::kMutantConfigCount; ++config) {
              Case c;
              c.num_tokens = kTokens;
              c.indexer_heads = 2, c.index_dim = 32, c.rope_dim = 16, c.nope_dim = 16;
              c.cache_rows = kTokens;  // positions t % P: a cache row per token
              c.query_path = path;
              c.indexer_rope = rope;
              c.q_scale_bits = q_scale;
              if (element_loads) {
                // Rows 3 elements apart: no view is aligned for 16-byte loads.
                c.q_pe_layout = c.ql_nope_layout = c.index_q_layout = Layout::kPaddedRows;
                c.row_padding = 3;
              }
              c.mqa_heads = heads_for(c, config);
              set_default_scales(c);
              if (place == NanPlace::kCacheCos) {
                add_cache_edits(c, TensorId::kMqaCache);
                add_cache_edits(c, TensorId::kIndexerCache);
              } else {
                add_row_edits(c, TensorId::kQPe, c.rope_dim, place);
                add_row_edits(c, TensorId::kQlNope, c.nope_dim, place);
                add_row_edits(c, TensorId::kIndexQ, c.index_dim, place);
              }
              cases.push_back(std::move(c));
            }
          }
        }
      }
    }
  }
  return cases;
}

const std::vector<EquivalenceCheck>& equivalence_checks() {
  static const std::vector<EquivalenceCheck> checks = {
      {"cuda-blocked+bug=nan-sign-kept", "cpu-model-bug-e4m3-nan-sign",
       "every value an e4m3 conversion of the kernels sees comes out of a multiply, a division or an FMA, and "
       "on the GPU those return the canonical NaN 0x7FFFFFFF, whose sign is clear: a negative NaN never "
       "reaches the conversion (the CPU model's host arithmetic keeps the sign, so its twin differs)",
       negative_nan_cases},
  };
  return checks;
}

const EquivalenceCheck* equivalence_check(const std::string& backend) {
  for (const EquivalenceCheck& check : equivalence_checks()) {
    if (check.backend == backend) return &check;
  }
  return nullptr;
}

EquivalenceResult compare_with_oracle(const Backend& backend, const std::vector<Case>& cases) {
  EquivalenceResult r;
  for (const Case& c : cases) {
    ++r.cases;
    const Verdict v = run_verdict(c, backend);
    if (v.passed()) continue;
    if (r.differ++ == 0) {
      r.first = v.outcome.is_ok() ? v.report.primary_signature().text() : "runtime error: " + v.outcome.reason;
    }
  }
  return r;
}

}  // namespace qcheck::mutants
