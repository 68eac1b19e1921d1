#include "ops/fused_q/search/rule_reach.h"

#include <cmath>
#include <cstdio>
#include <functional>

#include "fuzz/buffers/tensors.h"
#include "fuzz/verdict/compare.h"
#include "numerics/conversions.h"
#include "numerics/profile.h"
#include "numerics/row_ops.h"
#include "ops/fused_q/cpu_model/cpu_model.h"
#include "ops/fused_q/oracle/fused_q_oracle.h"

namespace qcheck::fuzzing {
namespace {

bool fp8(const Case& c) { return c.query_path == QueryPath::kFp8Packed; }
bool bf16(const Case& c) { return c.query_path != QueryPath::kFp8Packed; }
bool indexer(const Case& c) { return c.has_indexer; }

// A rule's wrong variant: a profile change, or a CPU-model variant (bug).
struct Variant {
  ReachRule rule;
  bool (*applies)(const Case&);
  std::function<void(Profile&)> profile;  // empty for a model variant
  PlantedCpuBug model = PlantedCpuBug::kNone;
};

const std::vector<Variant>& variants() {
  using C = Contraction;
  static const std::vector<Variant> list = [] {
    std::vector<Variant> v;
    auto contraction = [&](const char* site, bool (*applies)(const Case&), Contraction Profile::*field) {
      v.push_back({{site, "unfused"}, applies, [field](Profile& p) { p.*field = C::kNone; }});
      v.push_back({{site, "sin product fused"}, applies, [field](Profile& p) { p.*field = C::kFuseSin; }});
    };
    contraction("indexer contraction, minus terms", indexer, &Profile::indexer_minus);
    contraction("indexer contraction, plus terms", indexer, &Profile::indexer_plus);
    contraction("MQA fp8 r1 contraction", fp8, &Profile::mqa_fp8_r1);
    contraction("MQA fp8 r2 contraction", fp8, &Profile::mqa_fp8_r2);
    contraction("MQA bf16 r1 contraction", bf16, &Profile::mqa_bf16_r1);
    contraction("MQA bf16 r2 contraction", bf16, &Profile::mqa_bf16_r2);
    v.push_back({{"e4m3 ties, indexer codes", "ties away from zero"}, indexer, {}, PlantedCpuBug::kE4m3TiesAwayIndexer});
    v.push_back({{"e4m3 ties, fp8 query_out", "ties away from zero"}, fp8, {}, PlantedCpuBug::kE4m3TiesAwayMqa});
    v.push_back({{"bf16 ties, RoPE'd q_pe", "ties away from zero"}, bf16, {}, PlantedCpuBug::kBf16TiesAwayMqa});
    v.push_back({{"all-NaN indexer row's scale", "NaN, not the floor's"}, indexer, {}, PlantedCpuBug::kNanRowScaleNan});
    v.push_back({{"amax of a row with NaN", "NaN propagates (torch.amax)"}, indexer,
                 [](Profile& p) { p.amax_nan = AmaxNan::kPropagate; }});
    v.push_back({{"UE8M0 s0 = amax / 448", "amax * RN(1/448)"}, indexer,
                 [](Profile& p) { p.scale_quotient = ScaleQuotient::kTimesReciprocal; }});
    return v;
  }();
  return list;
}

// Output elements whose bits differ between two sets of the same case.
int64_t differing_outputs(const TensorSet& a, const TensorSet& b) {
  int64_t n = 0;
  for (const TensorGeometry& g : a.plan.tensors) {
    if (g.role != TensorRole::kOutput) continue;
    for (int64_t t = 0; t < g.rows; ++t) {
      for (int64_t h = 0; h < g.cols; ++h) {
        for (int64_t d = 0; d < g.width; ++d) {
          n += load_bits(a.element(g, t, h, d), g.type) != load_bits(b.element(g, t, h, d), g.type);
        }
      }
    }
  }
  return n;
}

// Index_q rows (token, head) whose every element is NaN.
int64_t all_nan_rows(const Case& c, const TensorSet& set) {
  const TensorGeometry* g = set.find(TensorId::kIndexQ);
  if (g == nullptr || !c.has_indexer) return 0;
  int64_t rows = 0;
  for (int64_t t = 0; t < g->rows; ++t) {
    for (int64_t h = 0; h < g->cols; ++h) {
      bool all = true;
      for (int64_t d = 0; d < g->width && all; ++d) {
        all = std::isnan(spec::f32_from_bf16(static_cast<uint16_t>(load_bits(set.element(*g, t, h, d), g->type))));
      }
      rows += all;
    }
  }
  return rows;
}

}  // namespace

const std::vector<ReachRule>& reach_rules() {
  static const std::vector<ReachRule> rules = [] {
    std::vector<ReachRule> r;
    for (const Variant& v : variants()) r.push_back(v.rule);
    return r;
  }();
  return rules;
}

ReachCounts::ReachCounts()
    : applicable(variants().size()), decided_cases(variants().size()), decided_elements(variants().size()) {}

void ReachCounts::add(const ReachCounts& o) {
  cases += o.cases;
  indexer_cases += o.indexer_cases;
  cases_with_all_nan_row += o.cases_with_all_nan_row;
  all_nan_rows += o.all_nan_rows;
  for (size_t i = 0; i < applicable.size(); ++i) {
    applicable[i] += o.applicable[i];
    decided_cases[i] += o.decided_cases[i];
    decided_elements[i] += o.decided_elements[i];
  }
}

ReachCounts count_reach(Case c) {
  c.profile = "qcheck";  // the CPU model's profile: every variant is one change from it
  ReachCounts counts;
  counts.cases = 1;
  const Profile right = qcheck_profile();
  TensorSet expected = build_tensor_set(c, Poison::kA);
  if (!run_fused_q_oracle(make_fused_q_args(c, expected), right, simd_row_ops()).empty()) return counts;
  if (c.has_indexer) {
    counts.indexer_cases = 1;
    counts.all_nan_rows = all_nan_rows(c, expected);
    counts.cases_with_all_nan_row = counts.all_nan_rows > 0;
  }
  for (size_t i = 0; i < variants().size(); ++i) {
    const Variant& v = variants()[i];
    if (!v.applies(c)) continue;
    counts.applicable[i] = 1;
    TensorSet got = build_tensor_set(c, Poison::kA);
    std::string error;
    if (v.profile) {
      Profile wrong = right;
      v.profile(wrong);
      error = run_fused_q_oracle(make_fused_q_args(c, got), wrong, simd_row_ops());
    } else {
      error = run_blocked_model(make_fused_q_args(c, got), v.model);
    }
    if (!error.empty()) continue;
    const int64_t n = differing_outputs(expected, got);
    counts.decided_cases[i] = n > 0;
    counts.decided_elements[i] = n;
  }
  return counts;
}

GeneratedCases::GeneratedCases(uint64_t seed, const SizeBudget& budget)
    : rng_(mix_keys({0x4EAC4ull, seed})), budget_{budget.usual, budget.usual, false} {}

Case GeneratedCases::next() {
  if (!started_) {
    last_ = seed_case(rng_, budget_);
    started_ = true;
  } else {
    mutate_case(last_, rng_, budget_);
  }
  return last_;
}

std::string reach_table(const ReachCounts& k) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line,
                "| rule | wrong variant | applies (of %lld cases) | cases decided | outputs decided per case | "
                "per applicable case |\n|---|---|---|---|---|---|\n",
                static_cast<long long>(k.cases));
  out += line;
  const double cases = k.cases > 0 ? double(k.cases) : 1.0;
  for (size_t i = 0; i < reach_rules().size(); ++i) {
    const double applicable = k.applicable[i] > 0 ? double(k.applicable[i]) : 1.0;
    std::snprintf(line, sizeof line, "| %s | %s | %lld | %lld | %.2f | %.2f |\n", reach_rules()[i].name.c_str(),
                  reach_rules()[i].variant.c_str(), static_cast<long long>(k.applicable[i]),
                  static_cast<long long>(k.decided_cases[i]), double(k.decided_elements[i]) / cases,
                  double(k.decided_elements[i]) / applicable);
    out += line;
  }
  std::snprintf(line, sizeof line, "\nall-NaN index_q rows: %lld, in %lld of %lld indexer cases (%.2f %%)\n",
                static_cast<long long>(k.all_nan_rows), static_cast<long long>(k.cases_with_all_nan_row),
                static_cast<long long>(k.indexer_cases),
                k.indexer_cases > 0 ? 100.0 * double(k.cases_with_all_nan_row) / double(k.indexer_cases) : 0.0);
  out += line;
  return out;
}

}  // namespace qcheck::fuzzing
