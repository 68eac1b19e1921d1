// fused_k's oracle with its row norms on the scalar spec and on the Highway
// rows (numerics/simd_norm.h, every target this CPU has): the same arena,
// byte for byte, for drawn launches under every reduction order, square
// step, width division, rsqrt, LayerNorm affine and RMSNorm weight step.
// The fuzz target's oracle runs on the Highway rows (ops/fused_k/check).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "numerics/simd_norm.h"
#include "numerics/simd_rows.h"
#include "ops/fused_k/case/case_launch.h"
#include "ops/fused_k/case/fused_k_case.h"
#include "ops/fused_k/oracle/fused_k_oracle.h"

namespace qcheck::fused_k {
namespace {

struct Variant {
  std::string name;
  spec::NormRules norm;
  bool triton = false;  // the norm is triton_norm_rules(width of the role, warps)
  int warps = 4;
};

std::vector<Variant> variants() {
  std::vector<Variant> out;
  const auto add = [&out](std::string name, spec::Reduction r) {
    Variant v;
    v.name = std::move(name);
    v.norm.reduction = r;
    out.push_back(v);
  };
  add("sequential", {ReductionOrder::kSequential, 1});
  add("pairwise", {ReductionOrder::kPairwise, 1});
  for (int lanes : {1, 4, 32, 128}) {
    add("strided " + std::to_string(lanes), {ReductionOrder::kStridedLanes, lanes});
    add("blocked " + std::to_string(lanes), {ReductionOrder::kBlockedLanes, lanes});
  }
  for (int warps : {1, 4, 8}) {
    Variant v;
    v.name = "triton, " + std::to_string(warps) + " warps";
    v.triton = true, v.warps = warps;
    out.push_back(v);
  }
  // Each step's other conventions, on the blocked order of qcheck's kernel.
  const size_t orders = out.size();
  for (size_t i = 0; i < orders; ++i) {
    Variant fused = out[i];
    fused.name += ", fused squares";
    fused.norm.reduction.squares = SquareStep::kFused;
    out.push_back(fused);
  }
  Variant base;
  base.norm.reduction = {ReductionOrder::kBlockedLanes, 32};
  for (const spec::RsqrtKind kind : {spec::RsqrtKind::kCorrectlyRounded, spec::RsqrtKind::kSqrtThenDivide,
                                     spec::RsqrtKind::kApproxFtz, spec::RsqrtKind::kApprox}) {
    Variant v = base;
    v.name = std::string("rsqrt ") + spec::name_of(kind);
    v.norm.rsqrt = kind;
    out.push_back(v);
  }
  Variant div_full = base;
  div_full.name = "div.full";
  div_full.norm.divide = spec::WidthDivision::kDivFull;
  out.push_back(div_full);
  Variant padded = base;
  padded.name = "summed over 2048 lanes";
  padded.norm.sum_width = 2048;
  out.push_back(padded);
  return out;
}

// The rules of one variant for one launch: every role's norm; the weight and
// affine steps alternate with the seed.
FusedKRules rules_for(const Variant& v, const FusedKArgs& a, uint64_t seed) {
  FusedKRules rules = qcheck_fused_k_rules();
  const auto norm = [&v](int64_t width) { return v.triton ? spec::triton_norm_rules(width, v.warps) : v.norm; };
  rules.index_k.norm = norm(a.index_dim);
  rules.kv.norm = norm(kMlaLatent);
  rules.q.norm = norm(a.q_dim);
  rules.index_k.affine = seed % 2 ? spec::LayerNormAffine::kMultiplyAdd : spec::LayerNormAffine::kFma;
  rules.kv.weight = rules.q.weight = seed % 3 ? spec::RmsWeight::kF32 : spec::RmsWeight::kBf16BeforeWeight;
  return rules;
}

TEST(FusedKOracleSimd, TheHighwayNormsGiveTheScalarSpecsArenaForEveryConvention) {
  std::vector<const NormOps*> tables = {&simd_norm_ops()};
  for (int64_t target : simd_row_targets()) {
    const NormOps* t = simd_norm_ops_for_target(target);
    ASSERT_NE(t, nullptr) << "no norm table for a compiled-in target";
    tables.push_back(t);
  }
  const std::vector<Variant> all = variants();
  std::vector<int> launches(all.size(), 0);
  int64_t compared = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const FusedKCase c = draw_fused_k_case(seed);
    const CaseLaunch l = build_fused_k_launch(c);
    if (!l.args.index_k && !l.args.kv && !l.args.q_norm) continue;
    for (size_t v = 0; v < all.size(); ++v) {
      const FusedKRules rules = rules_for(all[v], l.args, seed);
      if (!fused_k_rules_error(l.args, rules).empty()) continue;  // (a width the order cannot take)
      std::vector<uint8_t> want = l.bytes;
      ASSERT_EQ(run_fused_k_oracle(rebased(l.args, want.data()), rules, scalar_norm_ops()), "") << describe(c);
      for (const NormOps* table : tables) {
        std::vector<uint8_t> got = l.bytes;
        ASSERT_EQ(run_fused_k_oracle(rebased(l.args, got.data()), rules, *table), "") << describe(c);
        ASSERT_EQ(arena_difference(l.arena, want, got), "")
            << table->name << " under " << all[v].name << ": " << describe(c);
        compared += static_cast<int64_t>(want.size());
      }
      ++launches[v];
    }
  }
  for (size_t v = 0; v < all.size(); ++v) {
    EXPECT_GE(launches[v], 20) << all[v].name << ": too few drawn launches ran under it";
  }
  std::printf("%zu conventions, %zu norm tables, %lld arena bytes compared\n", all.size(), tables.size(),
              static_cast<long long>(compared));
}

}  // namespace
}  // namespace qcheck::fused_k
