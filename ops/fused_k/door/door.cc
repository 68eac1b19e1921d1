#include "ops/fused_k/door/door.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include <nlohmann/json.hpp>

#include "core/op/any_mutate.h"
#include "core/random/prng.h"
#include "ops/fused_k/case/case_launch.h"
#include "ops/fused_k/op.h"
#include "ops/fused_k/oracle/fused_k_oracle.h"

namespace qcheck::fused_k {
namespace {

constexpr int kTries = 1000;  // draws or mutations before a door call gives up

// The keys a door call derives its tries from (a purpose, the caller's seed, the try).
constexpr uint64_t kSeedPurpose = 0x646F6F7273656564ull;    // "doorseed"
constexpr uint64_t kMutatePurpose = 0x646F6F726D757461ull;  // "doormuta"

std::string fits(const FusedKCase& c, int64_t budget) {
  const std::string invalid = validate_fused_k_case(c);
  if (!invalid.empty()) return invalid;
  const int64_t bytes = door_arena_bytes(c);
  if (bytes > budget) return "the arena's " + std::to_string(bytes) + " bytes are over " + std::to_string(budget);
  return "";
}

std::string hex_byte(uint8_t b) {
  char text[8];
  std::snprintf(text, sizeof text, "0x%02X", b);
  return text;
}

// The parts of an arena a verdict names: each tensor, and the gaps before
// and after them (the sentinels).
struct Region {
  std::string tensor, part, role;  // role: "input", "output" or "guard"
  int64_t begin, end;
};

std::vector<Region> regions_of(const FusedKCase& c) {
  const CaseLaunch plan = plan_fused_k_launch(c);
  std::vector<DoorTensor> tensors = door_tensors(c);
  std::vector<Region> regions;
  int64_t at = 0;
  std::string before = "front";
  for (const Arena::Tensor& t : plan.arena.tensors()) {
    regions.push_back({"guard", before, "guard", at, t.offset});
    bool output = false;
    for (const DoorTensor& d : tensors) output = output || (d.name == t.name && d.output);
    regions.push_back({t.name, t.name, output ? "output" : "input", t.offset, t.offset + t.bytes});
    at = t.offset + t.bytes;
    before = "after_" + t.name;
  }
  regions.push_back({"guard", before, "guard", at, plan.arena.size()});
  return regions;
}

struct Mismatch {
  std::string run, tensor, part, kind;  // kind: guard-written, input-changed, differs, unwritten
  int64_t bytes = 0, first = 0;         // differing bytes; the first's offset in the region
  uint8_t want = 0, got = 0;
  int severity() const {
    return kind == "guard-written" ? 0 : kind == "input-changed" ? 1 : kind == "differs" ? 2 : 3;
  }
  std::string signature() const { return tensor + "/" + part + "/" + kind; }
};

void compare_run(const std::string& run, const std::vector<Region>& regions, const std::vector<uint8_t>& want,
                 const uint8_t* got, uint8_t poison, std::vector<Mismatch>* out) {
  for (const Region& r : regions) {
    const size_t begin = static_cast<size_t>(r.begin), size = static_cast<size_t>(r.end - r.begin);
    if (size == 0 || std::memcmp(want.data() + begin, got + begin, size) == 0) continue;
    Mismatch m{run, r.tensor, r.part, "", 0, -1, 0, 0};
    int64_t poisoned = 0;
    for (size_t i = begin; i < begin + size; ++i) {
      if (want[i] == got[i]) continue;
      if (m.first < 0) m.first = static_cast<int64_t>(i - begin), m.want = want[i], m.got = got[i];
      ++m.bytes;
      poisoned += got[i] == poison;
    }
    m.kind = r.role == "guard"   ? "guard-written"
             : r.role == "input" ? "input-changed"
             : poisoned == m.bytes ? "unwritten"
                                   : "differs";
    out->push_back(m);
  }
}

}  // namespace

int64_t door_arena_budget(const std::string& size) {
  if (size == "tiny") return int64_t(1) << 20;
  if (size == "usual" || size == "default" || size == "limit") return int64_t(64) << 20;
  return 0;
}

std::string door_case_from_seed(uint64_t seed, int64_t budget, FusedKCase* out) {
  std::string why;
  for (int i = 0; i < kTries; ++i) {
    const FusedKCase c = draw_fused_k_case(i == 0 ? seed : mix_keys({kSeedPurpose, seed, uint64_t(i)}));
    why = fits(c, budget);
    if (why.empty()) {
      *out = c;
      return "";
    }
  }
  return "no case drawn from seed " + std::to_string(seed) + " in " + std::to_string(kTries) + " tries fits: " + why;
}

std::string door_mutate(const FusedKCase& c, uint64_t seed, int64_t budget, FusedKCase* out) {
  std::string why = validate_fused_k_case(c);
  if (!why.empty()) return "the case to mutate is invalid: " + why;
  // A case already past the budget (a corpus file of another size) may stay as large; none grows past both.
  const int64_t allowed = std::max(budget, door_arena_bytes(c));
  const AnyCase start = to_any_case(c);
  for (int i = 0; i < kTries; ++i) {
    FusedKCase mutated;
    why = from_any_case(mutate_any_case(start, mix_keys({kMutatePurpose, seed, uint64_t(i)})), &mutated);
    if (why.empty()) why = fits(mutated, allowed);
    if (why.empty()) {
      *out = mutated;
      return "";
    }
  }
  return "no mutation in " + std::to_string(kTries) + " tries gave a valid case: " + why;
}

int64_t door_arena_bytes(const FusedKCase& c) { return plan_fused_k_launch(c).arena.size(); }

std::vector<DoorTensor> door_tensors(const FusedKCase& c) {
  const CaseLaunch plan = plan_fused_k_launch(c);
  const FusedKArgs& a = plan.args;
  const int64_t T = c.num_tokens;
  const auto float_name = [](FloatType t) { return t == FloatType::kF32 ? "f32" : "bf16"; };
  std::vector<DoorTensor> out;
  for (const Arena::Tensor& t : plan.arena.tensors()) {
    DoorTensor d;
    d.name = t.name;
    d.offset_bytes = t.offset;
    const auto rows = [&](int64_t width, int64_t stride, bool output) {
      d.output = output, d.dtype = "bf16", d.shape = {T, width}, d.strides = {stride, 1};
    };
    const auto vector = [&](int64_t width, FloatType type) {
      d.dtype = float_name(type), d.shape = {width}, d.strides = {1};
    };
    const auto cache = [&](const PagedCache& k, int64_t entry_stride) {
      d.output = true, d.dtype = "uint8", d.shape = {k.num_blocks, k.block_size, k.entry_bytes};
      d.strides = {k.block_stride, entry_stride, 1};
    };
    if (t.name == "rope_cache") {
      d.dtype = float_name(a.rope_cache.dtype), d.shape = {a.rope_cache.rows, a.rope_cache.width};
      d.strides = {a.rope_cache.row_stride, 1};
    } else if (t.name == "positions" || t.name == "slot_mapping" || t.name == "index_slot_mapping") {
      d.dtype = "int64", d.shape = {T}, d.strides = {1};
    } else if (t.name == "index_k") {
      rows(a.index_dim, a.index_k_in.row_stride, false);
    } else if (t.name == "ln_weight" || t.name == "ln_bias") {
      vector(a.index_dim, t.name == "ln_weight" ? a.ln_weight.dtype : a.ln_bias.dtype);
    } else if (t.name == "indexer_cache") {
      cache(a.indexer_cache, a.indexer_cache.entry_bytes);  // a block's bytes as block_size rows of D + 4
    } else if (t.name == "index_k_out") {
      rows(a.index_dim, a.index_k_out.row_stride, true);
    } else if (t.name == "kv_c") {
      rows(kMlaLatent, a.kv_c.row_stride, false);
    } else if (t.name == "k_pe") {
      rows(kMlaRope, a.k_pe.row_stride, false);
    } else if (t.name == "kv_weight") {
      vector(kMlaLatent, a.kv_weight.dtype);
    } else if (t.name == "mla_cache") {
      cache(a.mla_cache, a.mla_cache.entry_stride);
    } else if (t.name == "kv_out") {
      rows(kMlaLatent, a.kv_out.row_stride, true);
    } else if (t.name == "kpe_out") {
      rows(kMlaRope, a.kpe_out.row_stride, true);
    } else if (t.name == "q_c") {
      rows(a.q_dim, a.q_c.row_stride, false);
    } else if (t.name == "q_weight") {
      vector(a.q_dim, a.q_weight.dtype);
    } else if (t.name == "q_c_out") {
      rows(a.q_dim, a.q_c_out.row_stride, true);
    } else if (t.name == "topk") {
      d.output = true, d.dtype = "int32", d.shape = {T, a.topk_width}, d.strides = {a.topk_row_stride, 1};
    }
    out.push_back(d);
  }
  return out;
}

std::vector<uint8_t> door_arena(const FusedKCase& c, int poison) { return build_fused_k_launch(c, poison).bytes; }

std::string door_profile_error(const std::string& profile) {
  if (profile.empty() || profile == "qcheck") return "";
  return "profile = \"" + profile + "\": fused_k's oracle judges under \"qcheck\" only (its own kernel's conventions)";
}

std::string door_expected(const FusedKCase& c, const std::string& profile, int poison, std::vector<uint8_t>* out) {
  const std::string wrong = door_profile_error(profile);
  if (!wrong.empty()) return wrong;
  CaseLaunch launch = build_fused_k_launch(c, poison);
  const std::string refused =
      run_fused_k_oracle(rebased(launch.args, launch.bytes.data()), qcheck_fused_k_rules(), simd_norm_ops());
  if (!refused.empty()) return "the oracle refused the case: " + refused;
  *out = std::move(launch.bytes);
  return "";
}

DoorVerdict door_judge(const FusedKCase& c, const std::string& kernel, const uint8_t* run_a, const uint8_t* run_b,
                       size_t max_listed) {
  DoorVerdict v;
  nlohmann::json report = {{"op", "fused_k"}, {"backend", kernel}, {"judged_under", "qcheck"},
                           {"case", describe(c)}};
  const std::string name = "fused_k, " + kernel + ", under profile qcheck";
  std::vector<Mismatch> mismatches;
  const std::vector<Region> regions = regions_of(c);
  for (int poison = 0; poison < 2; ++poison) {
    const uint8_t* got = poison == 0 ? run_a : run_b;
    if (got == nullptr) continue;
    std::vector<uint8_t> want;
    const std::string refused = door_expected(c, "", poison, &want);
    if (!refused.empty()) {
      v.exit_code = 3;
      v.text = "RUNTIME ERROR: " + name + ": " + refused + "\ncase: " + describe(c) + "\n";
      report.update({{"verdict", "runtime error"}, {"exit_code", 3}, {"reason", refused}});
      v.json = report.dump();
      return v;
    }
    const uint8_t poison_byte = want.front();  // (the gap before the first tensor holds the poison)
    compare_run(poison == 0 ? "A" : "B", regions, want, got, poison_byte, &mismatches);
  }
  std::stable_sort(mismatches.begin(), mismatches.end(),
                   [](const Mismatch& x, const Mismatch& y) { return x.severity() < y.severity(); });
  nlohmann::json listed = nlohmann::json::array(), counts = nlohmann::json::array();
  const size_t most = max_listed > 0 ? max_listed : 20;
  std::string lines;
  for (size_t i = 0; i < mismatches.size(); ++i) {
    const Mismatch& m = mismatches[i];
    const std::string signature = m.signature();
    const auto known = std::find(v.signatures.begin(), v.signatures.end(), signature);
    if (known == v.signatures.end()) {
      v.signatures.push_back(signature);
      counts.push_back({{"tensor", m.tensor}, {"part", m.part}, {"class", m.kind}, {"count", m.bytes}});
    } else {
      counts[static_cast<size_t>(known - v.signatures.begin())]["count"] =
          counts[static_cast<size_t>(known - v.signatures.begin())]["count"].get<int64_t>() + m.bytes;
    }
    if (i >= most) continue;
    listed.push_back({{"run", m.run}, {"tensor", m.tensor}, {"part", m.part}, {"class", m.kind}, {"bytes", m.bytes},
                      {"first_byte", m.first}, {"want", hex_byte(m.want)}, {"got", hex_byte(m.got)}});
    lines += "  run " + m.run + "  " + signature + ": " + std::to_string(m.bytes) + " bytes differ, the first at byte " +
             std::to_string(m.first) + " of " + (m.tensor == "guard" ? m.part : m.tensor) + ": oracle " +
             hex_byte(m.want) + ", got " + hex_byte(m.got) + "\n";
  }
  if (mismatches.size() > most) lines += "  (" + std::to_string(mismatches.size() - most) + " more)\n";
  const std::string runs = run_b != nullptr ? "runs A and B" : "run A";
  if (mismatches.empty()) {
    v.text = "PASS: " + name + ": every byte of the arena (" + std::to_string(door_arena_bytes(c)) +
             " bytes) as the oracle's, in " + runs + "\ncase: " + describe(c) + "\n";
    report.update({{"verdict", "pass"}, {"exit_code", 0}, {"signature", ""}});
  } else {
    v.exit_code = 1;
    v.text = "FAIL: " + name + ": " + std::to_string(mismatches.size()) + " mismatches in " + runs + "\n" + lines +
             "case: " + describe(c) + "\n";
    report.update({{"verdict", "mismatch"}, {"exit_code", 1}, {"signature", v.signatures.front()}});
  }
  report["counts"] = counts;  // bytes per signature, both runs: as fused_q's report counts elements
  report["mismatches"] = listed;
  v.json = report.dump();
  return v;
}

}  // namespace qcheck::fused_k
