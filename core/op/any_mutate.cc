#include "core/op/any_mutate.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

namespace qcheck {
namespace {

// splitmix64: a small, fixed generator (the same values on every machine).
class Draws {
 public:
  explicit Draws(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return next() % n; }

 private:
  uint64_t state_;
};

int64_t default_integer(const FieldMeta& f) {
  return f.default_json.empty() ? 0 : std::strtoll(f.default_json.c_str(), nullptr, 10);
}

uint64_t new_integer(const FieldMeta& f, int64_t v, Draws& r) {
  switch (r.below(6)) {
    case 0: {  // (unsigned: wraps instead of overflowing at the int64 ends)
      const uint64_t step = r.below(4) + 1;
      return r.below(2) ? static_cast<uint64_t>(v) + step : static_cast<uint64_t>(v) - step;
    }
    case 1: return static_cast<uint64_t>(v > (INT64_MAX >> 1) || v < (INT64_MIN >> 1) ? v : v * 2);
    case 2: return static_cast<uint64_t>(v / 2);
    case 3: return r.below(65);
    case 4: {
      const int64_t power = int64_t{1} << r.below(21);
      return static_cast<uint64_t>(power + static_cast<int64_t>(r.below(3)) - 1);
    }
    default: return static_cast<uint64_t>(default_integer(f));
  }
}

uint64_t new_bits32(uint32_t v, Draws& r) {
  static constexpr uint32_t kEdges[] = {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u,
                                        0x00000001u, 0x7F7FFFFFu, 0x3F800000u, 0x358637BDu};
  if (r.below(2) == 0) return kEdges[r.below(sizeof kEdges / sizeof kEdges[0])];
  return v ^ (1u << r.below(32));
}

// A value for field f other than its current one (or the current one when
// the field cannot change: a text, edits, an enumeration of one choice).
uint64_t new_value(const FieldMeta& f, uint64_t current, Draws& r) {
  for (int attempt = 0; attempt < 16; ++attempt) {
    uint64_t v = current;
    switch (f.kind) {
      case FieldKind::kInteger: v = new_integer(f, static_cast<int64_t>(current), r); break;
      case FieldKind::kBoolean: v = current != 0 ? 0 : 1; break;
      case FieldKind::kEnumeration:
        if (f.choices.size() < 2) return current;
        v = (current + 1 + r.below(f.choices.size() - 1)) % f.choices.size();  // another choice
        break;
      case FieldKind::kBits32: v = new_bits32(static_cast<uint32_t>(current), r); break;
      case FieldKind::kU64: v = r.next(); break;
      default: return current;
    }
    if (v != current) return v;
  }
  return f.kind == FieldKind::kInteger ? current + 1 : current;
}

}  // namespace

AnyCase mutate_any_case(const AnyCase& c, uint64_t seed) {
  AnyCase out = c;
  Draws r(seed);
  const std::vector<FieldMeta>& fields = c.op->vocabulary().fields;
  std::vector<size_t> changeable;
  for (size_t i = 0; i < fields.size(); ++i) {
    const FieldKind k = fields[i].kind;
    if (k != FieldKind::kText && k != FieldKind::kEdits && !(k == FieldKind::kEnumeration && fields[i].choices.size() < 2)) {
      changeable.push_back(i);
    }
  }
  if (changeable.empty()) return out;
  // One to three distinct fields (a partial shuffle), so no change undoes another.
  const size_t count = std::min<size_t>(1 + r.below(3), changeable.size());
  for (size_t n = 0; n < count; ++n) {
    std::swap(changeable[n], changeable[n + r.below(changeable.size() - n)]);
    const size_t i = changeable[n];
    out.fields[i].number = new_value(fields[i], out.fields[i].number, r);
  }
  return out;
}

}  // namespace qcheck
