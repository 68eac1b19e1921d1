#include "core/op/any_shrink.h"

#include <vector>

namespace qcheck {
namespace {

// The values to try for a field, best (smallest) first.
std::vector<uint64_t> candidates(const FieldMeta& f, uint64_t number) {
  std::vector<uint64_t> out;
  switch (f.kind) {
    case FieldKind::kInteger: {
      const int64_t v = static_cast<int64_t>(number);
      if (v == 0) break;
      out.push_back(0);
      // v - d for d = v / 2, v / 4, ..., one step (toward 0 from either side).
      for (int64_t d = v / 2; d != 0; d /= 2) out.push_back(static_cast<uint64_t>(v - d));
      const uint64_t one_step = static_cast<uint64_t>(v > 0 ? v - 1 : v + 1);
      if (out.back() != one_step) out.push_back(one_step);
      break;
    }
    case FieldKind::kBoolean:
      if (number != 0) out.push_back(0);
      break;
    case FieldKind::kEnumeration:
      for (uint64_t choice = 0; choice < number; ++choice) out.push_back(choice);
      break;
    default:
      break;  // bits, seeds, texts and edits stay
  }
  return out;
}

std::string text_of(const FieldMeta& f, uint64_t number) {
  switch (f.kind) {
    case FieldKind::kInteger: return std::to_string(static_cast<int64_t>(number));
    case FieldKind::kBoolean: return number != 0 ? "true" : "false";
    case FieldKind::kEnumeration: return number < f.choices.size() ? f.choices[number] : std::to_string(number);
    default: return std::to_string(number);
  }
}

}  // namespace

AnyShrinkResult shrink_any_case(const AnyCase& failing, const std::function<bool(const AnyCase&)>& same,
                                int64_t max_tries, const std::function<void(const std::string&)>& log) {
  AnyShrinkResult r;
  r.best = failing;
  const std::vector<FieldMeta>& fields = failing.op->vocabulary().fields;
  for (bool changed = true; changed && r.tries < max_tries;) {
    changed = false;
    for (size_t i = 0; i < fields.size() && r.tries < max_tries; ++i) {
      // The first (smallest) candidate that still fails; then this field's
      // candidates again from the new value, in the next pass.
      for (const uint64_t value : candidates(fields[i], r.best.fields[i].number)) {
        if (r.tries >= max_tries) break;
        AnyCase candidate = r.best;
        candidate.fields[i].number = value;
        ++r.tries;
        if (!same(candidate)) continue;
        if (log) {
          log(fields[i].name + " " + text_of(fields[i], r.best.fields[i].number) + " -> " + text_of(fields[i], value));
        }
        r.best = std::move(candidate);
        ++r.accepted;
        changed = true;
        break;
      }
    }
  }
  return r;
}

}  // namespace qcheck
