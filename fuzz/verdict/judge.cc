#include "fuzz/verdict/judge.h"

#include <cstring>
#include <map>
#include <sstream>
#include <utility>

#include "fuzz/verdict/compare.h"
#include "numerics/float_bits.h"
#include "numerics/quotient.h"
#include "ops/fused_q/oracle/fused_q_oracle.h"

namespace qcheck {
namespace {

// One legal choice: the expected set it gives and, for div.full, the sets
// of the quotients 2 ulp below and above (the bounds of the codes it allows).
struct Choice {
  std::string name;
  TensorSet expected, low, high;
};

bool has_div_acceptance(const Case& c, const Profile& p) {
  return c.query_path == QueryPath::kFp8Packed && p.mqa_division == Division::kDivFull &&
         !spec::division_is_ieee(p.mqa_division, float_from_bits(c.q_scale_bits));
}

Profile with_pattern(Profile p, Contraction minus, Contraction plus) {
  p.mqa_fp8_r1 = p.mqa_bf16_r1 = p.indexer_minus = minus;
  p.mqa_fp8_r2 = p.mqa_bf16_r2 = p.indexer_plus = plus;
  return p;
}

// The profile uses this one pattern everywhere (then with_pattern gives
// the profile itself again: the choice of its own patterns covers it).
bool uses_only(const Profile& p, Contraction minus, Contraction plus) {
  return p.mqa_fp8_r1 == minus && p.mqa_bf16_r1 == minus && p.indexer_minus == minus && p.mqa_fp8_r2 == plus &&
         p.mqa_bf16_r2 == plus && p.indexer_plus == plus;
}

const char* contraction_name(Contraction c) {
  return c == Contraction::kNone ? "none" : c == Contraction::kFuseCos ? "fuse-cos" : "fuse-sin";
}

uint32_t bits_at(const TensorSet& s, const TensorGeometry& g, int64_t t, int64_t h, int64_t i) {
  return load_bits(s.element(g, t, h, i), g.type);
}

void copy_element(const TensorSet& from, TensorSet& to, const TensorGeometry& g, int64_t t, int64_t h, int64_t i) {
  std::memcpy(to.element(g, t, h, i), from.element(g, t, h, i), size_t(element_bytes(g.type)));
}

// `got` lies between the codes low and high of one format (NaN never does).
bool within(ElementType type, uint32_t low, uint32_t high, uint32_t got) {
  const int64_t a = code_distance(type, low, got), b = code_distance(type, got, high);
  return a >= 0 && b >= 0 && a + b == code_distance(type, low, high);
}

// Element (t, h, i) of `got` is the choice's value, or with `bounds` any
// code between the choice's low and high values.
bool element_accepted(const Choice& choice, const TensorSet& got, const TensorGeometry& g, int64_t t, int64_t h,
                      int64_t i, bool bounds) {
  const uint32_t value = bits_at(got, g, t, h, i);
  if (value == bits_at(choice.expected, g, t, h, i)) return true;
  return bounds && within(g.type, bits_at(choice.low, g, t, h, i), bits_at(choice.high, g, t, h, i), value);
}

bool row_accepted(const Choice& choice, const TensorSet& got, const TensorGeometry& g, int64_t t, int64_t h,
                  bool bounds) {
  for (int64_t i = 0; i < g.width; ++i) {
    if (!element_accepted(choice, got, g, t, h, i, bounds)) return false;
  }
  return true;
}

// How many rows each choice explained in one tensor, and what was left.
// The first rows of each choice other than the profile's own are named
// [token, head]; the counts cover all.
struct ChoiceCounts {
  static constexpr size_t kRowsNamed = 4;
  std::map<std::string, int64_t> rows;
  std::map<std::string, std::string> first_rows;
  int64_t unexplained_rows = 0;
  int64_t elements_within_2ulp = 0;  // of the unexplained rows

  void add(const std::string& name, bool own, int64_t t, int64_t h) {
    const int64_t count = ++rows[name];
    if (own || count > int64_t(kRowsNamed)) return;
    first_rows[name] += (count > 1 ? " [" : "[") + std::to_string(t) + ", " + std::to_string(h) + "]";
  }

  std::string line(const char* tensor) const {
    std::ostringstream s;
    s << tensor << " rows:";
    const char* separator = " ";
    for (const auto& [name, count] : rows) {
      s << separator << count << " " << name;
      const auto named = first_rows.find(name);
      if (named != first_rows.end()) {
        s << " (" << named->second << (count > int64_t(kRowsNamed) ? " ..." : "") << ")";
      }
      separator = ", ";
    }
    if (unexplained_rows > 0) s << separator << unexplained_rows << " explained by no choice";
    if (elements_within_2ulp > 0) s << " (" << elements_within_2ulp << " of their codes within div.full's 2 ulp)";
    return s.str();
  }
};

// Every output element of `got` equals `expected`'s (guards and inputs are
// compare_runs's business).
bool outputs_equal(const TensorSet& expected, const TensorSet& got) {
  for (const TensorGeometry& g : expected.plan.tensors) {
    if (g.role == TensorRole::kInput) continue;
    for (int64_t t = 0; t < g.rows; ++t) {
      for (int64_t h = 0; h < g.cols; ++h) {
        if (std::memcmp(expected.element(g, t, h, 0), got.element(g, t, h, 0),
                        size_t(g.width * element_bytes(g.type))) != 0) {
          return false;
        }
      }
    }
  }
  return true;
}

// Fills `set` (built with Poison::kA from c, untouched) with the oracle.
std::string fill(const Case& c, const Profile& p, const RowOps& rows, TensorSet& set) {
  return run_fused_q_oracle(make_fused_q_args(c, set), p, rows);
}

}  // namespace

std::string known_profiles() {
  std::string known;
  for (const std::string& name : profile_names()) known += name + ", ";
  return known + "any of them +any-fma, or auto";
}

TensorSet accepted_expected(const Case& c, const Profile& p, const RowOps& rows, const TensorSet& got,
                            TensorSet blank, std::vector<std::string>* choices, std::string* error) {
  const bool div = has_div_acceptance(c, p);
  std::vector<Choice> options;
  // A choice's expected set, and for div.full the sets of its bounds.
  const auto add = [&](const std::string& name, const Profile& q) {
    Choice choice{name, blank, {}, {}};
    *error = fill(c, q, rows, choice.expected);
    options.push_back(std::move(choice));
    return error->empty();
  };
  const auto add_bounds = [&](Choice& choice, const Profile& q) {
    if (!div) return true;
    Profile bound = q;
    bound.mqa_division = Division::kIeeeMinus2Ulp;
    choice.low = blank;
    *error = fill(c, bound, rows, choice.low);
    bound.mqa_division = Division::kIeeePlus2Ulp;
    choice.high = blank;
    if (error->empty()) *error = fill(c, bound, rows, choice.high);
    return error->empty();
  };
  if (!p.any_contraction && !div) {
    // One choice: the oracle fills the blank set itself (no copy).
    *error = fill(c, p, rows, blank);
    return blank;
  }
  if (!add(p.name + "'s patterns", p)) return blank;
  // Where the kernel wrote exactly the profile's own outputs (most cases),
  // the other choices are not needed: they cost an oracle run each.
  if (outputs_equal(options[0].expected, got)) return std::move(options[0].expected);
  if (!add_bounds(options[0], p)) return blank;
  if (p.any_contraction) {
    for (Contraction minus : {Contraction::kNone, Contraction::kFuseCos, Contraction::kFuseSin}) {
      for (Contraction plus : {Contraction::kNone, Contraction::kFuseCos, Contraction::kFuseSin}) {
        if (uses_only(p, minus, plus)) continue;
        const std::string name = std::string(contraction_name(minus)) + "/" + contraction_name(plus);
        const Profile q = with_pattern(p, minus, plus);
        if (!add(name, q) || !add_bounds(options.back(), q)) return blank;
      }
    }
  }
  TensorSet accepted = options[0].expected;
  const TensorGeometry* weights = accepted.find(TensorId::kIndexWeightsOut);
  for (const TensorGeometry& g : accepted.plan.tensors) {
    if (g.role != TensorRole::kOutput || g.id == TensorId::kIndexWeightsOut) continue;
    // The codes of div.full: query_out on the fp8 path. An indexer row's
    // weight goes with its codes (the same scale).
    const bool bounds = div && g.id == TensorId::kQueryOut;
    const TensorGeometry* weight = g.id == TensorId::kIndexQFp8 ? weights : nullptr;
    ChoiceCounts counts;
    for (int64_t t = 0; t < g.rows; ++t) {
      for (int64_t h = 0; h < g.cols; ++h) {
        const Choice* chosen = nullptr;
        for (const Choice& choice : options) {
          if (row_accepted(choice, got, g, t, h, bounds) &&
              (weight == nullptr || element_accepted(choice, got, *weight, t, h, 0, false))) {
            chosen = &choice;
            break;
          }
        }
        if (chosen != nullptr) {
          counts.add(chosen->name, chosen == &options[0], t, h);
          for (int64_t i = 0; i < g.width; ++i) copy_element(got, accepted, g, t, h, i);
          if (weight != nullptr) copy_element(got, accepted, *weight, t, h, 0);
          continue;
        }
        // No choice explains the whole row: what div.full allows under the
        // profile's own pattern is still accepted element by element, so
        // the report lists only what no choice gives.
        ++counts.unexplained_rows;
        for (int64_t i = 0; bounds && i < g.width; ++i) {
          if (bits_at(got, g, t, h, i) != bits_at(options[0].expected, g, t, h, i) &&
              element_accepted(options[0], got, g, t, h, i, true)) {
            copy_element(got, accepted, g, t, h, i);
            ++counts.elements_within_2ulp;
          }
        }
      }
    }
    choices->push_back(counts.line(name_of(g.id)));
  }
  return accepted;
}

namespace {

std::string element_text(const TensorGeometry& g, const TensorSet& set, int64_t t, int64_t h, int64_t i) {
  const uint32_t bits = bits_at(set, g, t, h, i);
  std::ostringstream s;
  s << value_text(g.type, bits) << " (0x" << std::hex << bits << ")";
  return s.str();
}

// Auto's lines when no profile explains the outputs: the first output
// element no profile explains, and per output tensor the closest profile.
void explain_none(const std::vector<std::string>& names, const std::vector<TensorSet>& sets,
                  const std::vector<Report>& reports, const TensorSet& got, std::vector<std::string>* lines) {
  lines->push_back("auto: no profile explains the outputs bit for bit");
  bool found = false;
  for (const TensorGeometry& g : got.plan.tensors) {
    if (g.role == TensorRole::kInput || found) continue;
    for (int64_t t = 0; t < g.rows && !found; ++t) {
      for (int64_t h = 0; h < g.cols && !found; ++h) {
        for (int64_t i = 0; i < g.width && !found; ++i) {
          const uint32_t value = bits_at(got, g, t, h, i);
          bool explained = false;
          for (const TensorSet& set : sets) explained = explained || bits_at(set, g, t, h, i) == value;
          if (explained) continue;
          found = true;
          std::ostringstream s;
          s << "first element no profile explains: " << name_of(g.id) << "[" << t << ", " << h << ", " << i
            << "] = " << element_text(g, got, t, h, i) << "; expected:";
          for (size_t k = 0; k < sets.size(); ++k) {
            s << (k ? ", " : " ") << names[k] << " " << element_text(g, sets[k], t, h, i);
          }
          lines->push_back(s.str());
        }
      }
    }
  }
  if (!found) lines->push_back("every output element is some profile's value, but no profile gives them all");
  std::ostringstream closest;
  closest << "closest per output tensor:";
  const char* separator = " ";
  for (const TensorGeometry& g : got.plan.tensors) {
    if (g.role == TensorRole::kInput) continue;
    size_t best = 0;
    int64_t best_count = -1;
    for (size_t k = 0; k < reports.size(); ++k) {
      int64_t count = 0;
      for (const auto& [signature, n] : reports[k].counts) count += signature.tensor == name_of(g.id) ? n : 0;
      if (best_count < 0 || count < best_count) best = k, best_count = count;
    }
    closest << separator << name_of(g.id) << " " << names[best] << " (" << best_count << " mismatches)";
    separator = ", ";
  }
  lines->push_back(closest.str());
}

}  // namespace

std::string judge_runs(const Case& c, const std::string& profile, const RowOps& rows, const TensorSet& got_a,
                       const TensorSet& got_b, size_t max_listed, TensorSet* prepared, PhaseTimes* times,
                       Judgement* out) {
  out->explaining.clear();
  out->explanation.clear();
  const bool automatic = profile == kAutoProfile;
  std::vector<std::string> names = automatic ? profile_names() : std::vector<std::string>{profile};
  const size_t named = names.size();
  std::vector<TensorSet> sets;
  std::vector<Report> reports;
  std::vector<std::vector<std::string>> choices;
  // Judges under names[k] and appends its set, report and choice lines.
  const auto judge_under = [&](size_t k, bool last_with_prepared) -> std::string {
    Profile p;
    if (!find_profile(names[k], &p)) {
      return "profile \"" + names[k] + "\" is not a known profile (" + known_profiles() + ")";
    }
    std::string error;
    choices.emplace_back();
    {
      PhaseTimer timer(times, Phase::kOracle);
      // The prepared set serves the last profile; the others take copies.
      TensorSet blank = prepared == nullptr  ? build_tensor_set(c, Poison::kA)
                        : last_with_prepared ? std::move(*prepared)
                                             : *prepared;
      sets.push_back(accepted_expected(c, p, rows, got_a, std::move(blank), &choices.back(), &error));
    }
    if (!error.empty()) return error;
    PhaseTimer timer(times, Phase::kCompare);
    reports.push_back(compare_runs(c, sets.back(), got_a, got_b, max_listed));
    if (reports.back().passed()) out->explaining.push_back(names[k]);
    return "";
  };
  for (size_t k = 0; k < named; ++k) {
    const std::string error = judge_under(k, k + 1 == named);
    if (!error.empty()) return error;
  }
  // No named profile gives the outputs: the same profiles with any FMA
  // pattern per row (a kernel whose source compiled to other contractions).
  if (automatic && out->explaining.empty()) {
    prepared = nullptr;
    for (size_t k = 0; k < named; ++k) {
      names.push_back(names[k] + "+any-fma");
      const std::string error = judge_under(names.size() - 1, false);
      if (!error.empty()) return error;
    }
  }
  size_t chosen = 0;
  for (size_t k = 0; k < names.size(); ++k) {
    if (reports[k].passed()) {
      chosen = k;
      break;
    }
    if (reports[k].total < reports[chosen].total) chosen = k;
  }
  std::string list;
  for (const std::string& name : out->explaining) list += (list.empty() ? "" : ", ") + name;
  if (!automatic) {
    out->explanation = choices[0];
  } else if (!out->explaining.empty() && chosen < named) {
    out->explanation.push_back("auto: explained bit for bit by " + list);
  } else if (!out->explaining.empty()) {
    out->explanation.push_back("auto: no named profile explains the outputs bit for bit; with any FMA pattern per "
                               "row: " + list);
    for (const std::string& line : choices[chosen]) out->explanation.push_back("  " + names[chosen] + ": " + line);
  } else {
    sets.resize(named);
    reports.resize(named);
    names.resize(named);
    // The report under the closest named profile (an any-fma entry may
    // have been closer, but the lines above speak of the named ones).
    chosen = 0;
    for (size_t k = 1; k < named; ++k) {
      if (reports[k].total < reports[chosen].total) chosen = k;
    }
    explain_none(names, sets, reports, got_a, &out->explanation);
  }
  out->report = std::move(reports[chosen]);
  out->profile = names[chosen];
  return "";
}

}  // namespace qcheck
