#include "fuzz/minimize/minimize.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <regex>

#include "fuzz/buffers/tensors.h"
#include "fuzz/case/tensor_plan.h"
#include "fuzz/minimize/shrink.h"

namespace qcheck {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Runtime errors differ in their numbers (sizes, addresses) from case to
// case; the kind of error is what must stay.
std::string masked(const std::string& reason) { return std::regex_replace(reason, std::regex("[0-9]+"), "#"); }

// How far the inputs are from the simplest ones: the sum over float
// elements of simplicity() (0 for zeros ... 5 for an arbitrary value), then
// the sum of the positions. A value step is kept only when it makes this
// smaller, so value steps cannot undo each other (zeroing a cache, then
// setting it to the identity rotation, then zeroing it again ...).
std::pair<int64_t, int64_t> value_complexity(const TensorSet& set) {
  std::pair<int64_t, int64_t> sum{0, 0};
  for (const TensorGeometry& g : set.plan.tensors) {
    if (g.role != TensorRole::kInput) continue;
    for (int64_t row = 0; row < g.rows; ++row) {
      for (int64_t col = 0; col < g.cols; ++col) {
        for (int64_t i = 0; i < g.width; ++i) {
          const uint8_t* p = set.element(g, row, col, i);
          if (g.type == ElementType::kInt64) {
            int64_t position;
            std::memcpy(&position, p, 8);
            sum.second += position;
          } else if (g.type == ElementType::kBf16) {
            uint16_t bits;
            std::memcpy(&bits, p, 2);
            sum.first += simplicity(uint32_t(bits) << 16);
          } else {
            uint32_t bits;
            std::memcpy(&bits, p, 4);
            sum.first += simplicity(bits);
          }
        }
      }
    }
  }
  return sum;
}

// False when `c` no longer computes the output part a signature names
// ("tensor/part/class"): the indexer outputs without an indexer, the ql_nope
// front on the bf16 separate path.
bool computes(const Case& c, const std::string& signature) {
  const std::string tensor = signature.substr(0, signature.find('/'));
  if (tensor == "index_q_fp8" || tensor == "index_weights_out") return c.has_indexer;
  if (signature.find("/nope front/") != std::string::npos) return c.query_path != QueryPath::kBf16Separate;
  return true;
}

std::string class_of(const std::string& signature) { return signature.substr(signature.rfind('/') + 1); }

bool is_value_pass(ShrinkPass pass) {
  return pass == ShrinkPass::kZeroTensors || pass == ShrinkPass::kZeroRows || pass == ShrinkPass::kZeroElements ||
         pass == ShrinkPass::kSimpleValues;
}

}  // namespace

std::string Observation::text() const {
  switch (exit_code) {
    case 0: return "pass";
    case 1: return "mismatch " + failure;
    default: return failure;
  }
}

Observation observe(const Verdict& v) {
  Observation o;
  o.exit_code = v.exit_code();
  if (!v.outcome.is_ok()) {
    o.failure = std::string(name_of(v.outcome.kind)) + ": " + masked(v.outcome.reason);
  } else if (!v.report.passed()) {
    o.failure = v.report.primary_signature().text();
    for (const auto& [signature, count] : v.report.counts) o.signatures.push_back(signature.text());
  }
  return o;
}

Evaluate evaluate_in_process(const Backend& backend, const VerdictOptions& options) {
  VerdictOptions quiet = options;
  quiet.max_listed = 0;  // only the signature is needed
  return [&backend, quiet](const Case& c) { return observe(run_verdict(c, backend, quiet)); };
}

bool failure_holds_across_runs(const Observation& first, const std::vector<Observation>& again) {
  if (first.exit_code == 0 || again.empty()) return false;
  if (class_of(first.failure) == name_of(MismatchClass::kNondeterministic)) return false;
  for (const Observation& o : again) {
    if (o != first) return false;
  }
  return true;
}

int64_t tensor_elements(const Case& c) {
  int64_t total = 0;
  for (const TensorGeometry& g : plan_tensors(c).tensors) total += g.element_count();
  return total;
}

MinimizeResult minimize(const Case& original, const Observation& target, const Evaluate& evaluate,
                        const MinimizeOptions& options) {
  const Clock::time_point start = Clock::now();
  MinimizeResult r;
  r.original = original;
  r.minimized = original;
  r.original_failure = target;
  r.target = target;
  r.elements_before = tensor_elements(original);
  const auto log = [&](const std::string& line) {
    if (options.log) options.log(line);
  };
  // A candidate is kept when it fails exactly as the best so far did (or
  // the failure moved, see the file comment of minimize.h).
  const auto keeps_failure = [&](const Case& candidate) {
    ++r.evaluations;
    const Observation o = evaluate(candidate);
    if (o == r.target) return true;
    const std::vector<std::string>& seen = r.original_failure.signatures;
    if (o.exit_code == 1 && r.target.exit_code == 1 && !computes(candidate, r.target.failure) &&
        class_of(o.failure) == class_of(r.target.failure) &&
        std::find(seen.begin(), seen.end(), o.failure) != seen.end()) {
      log("the failure moves from " + r.target.failure + " to " + o.failure + " (no longer computed)");
      r.target = o;
      return true;
    }
    return false;
  };

  // A candidate the minimizer may propose: a valid case the kernel
  // supports. One outside the domain is moved inside by its repair
  // (options.fit: H 4 -> 1 becomes H 2 under "H even") and tried when it
  // is still smaller than the best, so the passes keep shrinking.
  const auto supported = [&](const Case& candidate) { return !options.outside || options.outside(candidate).empty(); };
  const auto inside = [&](const Case& candidate) { return validate_case(candidate).empty() && supported(candidate); };
  const auto admissible = [&](Case& candidate, const Case& from) {
    if (!validate_case(candidate).empty()) return false;
    if (supported(candidate)) return true;
    if (options.fit) {
      options.fit(candidate);
      if (candidate != from && inside(candidate) && tensor_elements(candidate) < tensor_elements(from)) return true;
    }
    ++r.outside_domain;
    return false;
  };

  Case& best = r.minimized;
  bool changed = true;
  while (changed && !r.budget_exhausted) {
    changed = false;
    for (ShrinkPass pass : kShrinkPasses) {
      // A pass runs again while it keeps finding steps (its list is made
      // for the case it starts from; each step checks itself against the
      // current best).
      for (bool pass_changed = true; pass_changed && !r.budget_exhausted;) {
        pass_changed = false;
        std::pair<int64_t, int64_t> best_complexity{0, 0};
        if (is_value_pass(pass)) best_complexity = value_complexity(build_tensor_set(best, Poison::kA));
        for (const Simplification& s : simplifications(best, pass)) {
          if (seconds_since(start) > options.budget_seconds) {
            r.budget_exhausted = true;
            break;
          }
          Case candidate = best;
          if (!s.apply(candidate) || candidate == best || !admissible(candidate, best)) continue;
          std::pair<int64_t, int64_t> complexity{0, 0};
          if (is_value_pass(pass)) {
            complexity = value_complexity(build_tensor_set(candidate, Poison::kA));
            if (complexity >= best_complexity) continue;
          }
          ++r.candidates;
          if (!keeps_failure(candidate)) continue;
          best = candidate;
          r.steps.push_back(std::string(name_of(pass)) + ": " + s.step);
          log(r.steps.back());
          pass_changed = changed = true;
          best_complexity = complexity;
        }
      }
      if (r.budget_exhausted) break;
    }
  }
  // The same bytes with the fewest edits; checked once more, as every step.
  Case canonical = best;
  if (canonical_edits(canonical) && inside(canonical) && keeps_failure(canonical)) {
    r.steps.push_back("edits: " + std::to_string(best.edits.size()) + " -> " + std::to_string(canonical.edits.size()) +
                      " (the same inputs)");
    log(r.steps.back());
    best = canonical;
  }
  r.elements_after = tensor_elements(best);

  if (options.explain) {
    for (const Simplification& s : field_alternatives(best)) {
      if (seconds_since(start) > options.budget_seconds) {
        r.budget_exhausted = true;  // the explain phase is cut short too
        break;
      }
      Case changed_case = best;
      if (!s.apply(changed_case) || changed_case == best || !inside(changed_case)) continue;
      FieldEffect effect;
      effect.field = s.step.substr(0, s.step.find(' '));
      effect.change = s.step;
      ++r.evaluations;
      effect.observed = evaluate(changed_case);
      effect.matters = effect.observed != r.target;
      r.explain.push_back(effect);
    }
  }
  r.seconds = seconds_since(start);
  return r;
}

}  // namespace qcheck
