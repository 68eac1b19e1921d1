#include "fuzz/verdict/repeat.h"

#include <cstring>

#include "fuzz/buffers/tensors.h"
#include "fuzz/verdict/compare.h"

namespace qcheck {
namespace {

bool same_bytes(const TensorSet& a, const TensorSet& b) {
  for (size_t i = 0; i < a.buffers.size(); ++i) {
    if (std::memcmp(a.buffers[i].data(), b.buffers[i].data(), a.buffers[i].size()) != 0) return false;
  }
  return true;
}

}  // namespace

RepeatResult repeat_backend(const Case& c, const Backend& backend, const Profile& profile, int runs) {
  RepeatResult result;
  const std::string invalid = validate_case(c);
  if (!invalid.empty()) {
    result.outcome = Outcome::invalid_input(invalid);
    return result;
  }
  const TensorSet start = build_tensor_set(c, Poison::kA);
  TensorSet first = start;
  result.outcome = backend.run(c, profile, first);
  if (!result.outcome.is_ok()) return result;
  result.runs = 1;
  TensorSet got;
  for (int run = 1; run < runs; ++run) {
    got = start;
    result.outcome = backend.run(c, profile, got);
    if (!result.outcome.is_ok()) return result;
    ++result.runs;
    if (same_bytes(first, got)) continue;
    if (++result.differing_runs == 1) {
      result.first_differing = run;
      result.difference = compare_runs(c, first, got, got);
    }
  }
  return result;
}

}  // namespace qcheck
