#include "ops/fused_q/mutants/baseline.h"

#include <cmath>

#include "fuzz/buffers/tensors.h"
#include "fuzz/verdict/compare.h"
#include "fuzz/verdict/verdict.h"
#include "numerics/row_ops.h"

namespace qcheck {
namespace {

constexpr uint32_t kQScale037 = 0x3EBD70A4u;  // RN_f32(0.37)

Case grid_case(int64_t tokens, int64_t heads, QueryPath path, bool indexer, RopeStyle style) {
  Case c;
  c.num_tokens = tokens;
  c.mqa_heads = heads;
  c.indexer_heads = 64;
  c.index_dim = 128;
  c.rope_dim = 64;
  c.nope_dim = 512;
  c.query_path = path;
  c.has_indexer = indexer;
  c.indexer_rope = style;
  c.cache_rows = 8192;
  c.positions = PositionsRecipe::kArangeModP;
  c.values = ValueRecipe::kNormal;
  c.q_scale_bits = path == QueryPath::kFp8Packed ? kQScale037 : 0x3F800000u;
  c.seed = 2;
  set_default_scales(c);
  if (tokens >= 65536) c.memory_limit_bytes = CaseLimits::kMaxMemoryBytes;
  return c;
}

std::string name_of_case(const Case& c) {
  return std::string(name_of(c.query_path)) + " T=" + std::to_string(c.num_tokens) + " H=" +
         std::to_string(c.mqa_heads) + (c.has_indexer ? std::string(" ") + name_of(c.indexer_rope) : " no indexer");
}

// Within the test's tolerance: e4m3 codes at most one apart, others
// |got - expected| <= atol + rtol * |expected|; NaN matches NaN.
bool within(ElementType type, uint32_t expected, uint32_t got, double tolerance) {
  if (expected == got) return true;
  const double e = element_value(type, expected), g = element_value(type, got);
  if (std::isnan(e) || std::isnan(g)) return std::isnan(e) && std::isnan(g);
  if (type == ElementType::kE4m3) return code_distance(type, expected, got) <= 1;
  return std::fabs(g - e) <= tolerance + tolerance * std::fabs(e);
}

// "" or the first element outside the tolerance.
std::string first_outside(const TensorSet& expected, const TensorSet& got) {
  for (const TensorGeometry& g : expected.plan.tensors) {
    if (g.role != TensorRole::kOutput) continue;
    const double tolerance = g.id == TensorId::kIndexWeightsOut ? 1e-3 : 1e-2;
    for (int64_t t = 0; t < g.rows; ++t) {
      for (int64_t h = 0; h < g.cols; ++h) {
        for (int64_t d = 0; d < g.width; ++d) {
          const uint32_t e = load_bits(expected.element(g, t, h, d), g.type);
          const uint32_t o = load_bits(got.element(g, t, h, d), g.type);
          if (within(g.type, e, o, tolerance)) continue;
          return std::string(name_of(g.id)) + "[" + std::to_string(t) + ", " + std::to_string(h) + ", " +
                 std::to_string(d) + "] expected " + value_text(g.type, e) + " got " + value_text(g.type, o);
        }
      }
    }
  }
  return "";
}

}  // namespace

std::vector<BaselineCase> vllm_test_grid(bool with_token_limit_case) {
  std::vector<Case> cases;
  const std::pair<int64_t, int64_t> shapes[] = {{1, 8}, {4, 8}, {17, 8}, {512, 8}, {4096, 8}, {17, 64}};
  for (const auto& [tokens, heads] : shapes) {
    for (RopeStyle style : {RopeStyle::kInterleaved, RopeStyle::kNeox}) {
      cases.push_back(grid_case(tokens, heads, QueryPath::kFp8Packed, true, style));
    }
  }
  for (int64_t tokens : {1, 17, 512}) cases.push_back(grid_case(tokens, 8, QueryPath::kFp8Packed, false, RopeStyle::kNeox));
  for (int64_t tokens : {1, 17, 512}) {
    for (bool indexer : {true, false}) {
      cases.push_back(grid_case(tokens, 8, QueryPath::kBf16Packed, indexer, RopeStyle::kNeox));
    }
  }
  if (with_token_limit_case) cases.push_back(grid_case(65536, 8, QueryPath::kFp8Packed, true, RopeStyle::kNeox));
  std::vector<BaselineCase> out;
  for (const Case& c : cases) out.push_back({name_of_case(c), c});
  return out;
}

BaselineResult run_baseline(const Backend& backend, bool with_token_limit_case) {
  BaselineResult r;
  Profile profile;
  find_profile(backend.fixed_profile.empty() ? "qcheck" : backend.fixed_profile, &profile);
  for (const BaselineCase& bc : vllm_test_grid(with_token_limit_case)) {
    std::string error = backend.domain(bc.c);
    if (!error.empty()) {
      r.first_failure = bc.name + ": cannot run here: " + error;
      return r;
    }
    ++r.cases_run;
    const TensorSet expected = expected_tensors(bc.c, profile, simd_row_ops(), Poison::kA, &error);
    TensorSet got = build_tensor_set(bc.c, Poison::kA);
    const Outcome o = error.empty() ? backend.run(bc.c, profile, got) : Outcome::invalid_input(error);
    const std::string outside = o.is_ok() ? first_outside(expected, got) : std::string(name_of(o.kind)) + ": " + o.reason;
    if (outside.empty()) continue;
    ++r.cases_failed;
    if (!r.caught) r.first_failure = bc.name + ": " + outside;
    r.caught = true;
  }
  return r;
}

}  // namespace qcheck
