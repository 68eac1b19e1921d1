// The value passes of the minimizer (fuzz/minimize/shrink.h): inputs, rows and
// elements zeroed, values made simpler, and the edits made few again.
#include <algorithm>
#include <cstring>

#include "fuzz/buffers/tensors.h"
#include "fuzz/minimize/shrink.h"
#include "fuzz/verdict/report.h"

namespace qcheck {
namespace {

// The inputs a value pass works on, in the order a reader cares about them.
constexpr TensorId kValueInputs[] = {TensorId::kQPe,      TensorId::kQlNope,       TensorId::kIndexQ,
                                     TensorId::kIndexWeights, TensorId::kPositions, TensorId::kMqaCache,
                                     TensorId::kIndexerCache};

uint64_t one_bits(ElementType type) { return type == ElementType::kBf16 ? 0x3F80 : 0x3F800000; }

std::string edit_text(TensorId id, const char* what) { return std::string(what) + " " + name_of(id); }

// Appends an edit; the minimizer keeps it only if it changes an input byte.
void add_edit(std::vector<Simplification>& out, std::string step, ValueEdit e) {
  out.push_back({std::move(step), [e](Case& c) {
                   c.edits.push_back(e);
                   return validate_edit(c, c.edits.size() - 1).empty();
                 }});
}

std::vector<Simplification> zero_tensor_steps(const Case& c, const TensorPlan& plan) {
  std::vector<Simplification> out;
  for (TensorId id : kValueInputs) {
    const TensorGeometry* g = plan.find(id);
    if (g == nullptr) continue;
    if (id == TensorId::kMqaCache || id == TensorId::kIndexerCache) {
      // cos 1, sin 0: the identity rotation, then all zeros.
      const int64_t half = c.rope_dim / 2;
      const uint64_t one = one_bits(g->type);
      out.push_back({edit_text(id, "identity rotation (cos 1, sin 0) in"), [id, half, one](Case& x) {
                       x.edits.push_back({id, 0, -1, -1, 0, half, one});
                       x.edits.push_back({id, 0, -1, -1, half, -1, 0});
                       return true;
                     }});
    }
    add_edit(out, edit_text(id, "zero"), {id, 0, -1, -1, 0, -1, 0});
  }
  return out;
}

std::vector<Simplification> zero_row_steps(const TensorPlan& plan) {
  std::vector<Simplification> out;
  for (TensorId id : kValueInputs) {
    const TensorGeometry* g = plan.find(id);
    if (g == nullptr) continue;
    for (int64_t size = g->rows / 2; size >= 1; size /= 2) {
      for (int64_t row = 0; row < g->rows; row += size) {
        const int64_t n = std::min(size, g->rows - row);
        add_edit(out, edit_text(id, "zero") + " rows " + std::to_string(row) + ".." + std::to_string(row + n - 1),
                 {id, row, n, -1, 0, -1, 0});
      }
    }
    if (g->cols > 1) {
      for (int64_t row = 0; row < g->rows; ++row) {
        for (int64_t head = 0; head < g->cols; ++head) {
          add_edit(out, edit_text(id, "zero") + " [" + std::to_string(row) + ", " + std::to_string(head) + "]",
                   {id, row, 1, head, 0, -1, 0});
        }
      }
    }
  }
  return out;
}

// Calls f(id, geometry, row, head, element, bits) for every input element of
// the case's current values, inputs in kValueInputs order.
template <typename F>
void for_each_input_element(const TensorSet& set, F&& f) {
  for (TensorId id : kValueInputs) {
    const TensorGeometry* g = set.find(id);
    if (g == nullptr) continue;
    for (int64_t row = 0; row < g->rows; ++row) {
      for (int64_t head = 0; head < g->cols; ++head) {
        for (int64_t i = 0; i < g->width; ++i) {
          uint64_t bits = 0;
          std::memcpy(&bits, set.element(*g, row, head, i), static_cast<size_t>(element_bytes(g->type)));
          f(id, *g, row, head, i, bits);
        }
      }
    }
  }
}

std::string element_text(TensorId id, int64_t row, int64_t head, int64_t i) {
  return std::string(name_of(id)) + "[" + std::to_string(row) + ", " + std::to_string(head) + ", " +
         std::to_string(i) + "]";
}

// Too many elements to try one by one: the row passes must first make the
// case small.
constexpr int64_t kMaxElementSteps = 4096;

std::vector<Simplification> zero_element_steps(const TensorSet& set) {
  std::vector<Simplification> out;
  for_each_input_element(set, [&](TensorId id, const TensorGeometry&, int64_t row, int64_t head, int64_t i,
                                     uint64_t bits) {
    if (bits == 0 || static_cast<int64_t>(out.size()) >= kMaxElementSteps) return;
    add_edit(out, "zero " + element_text(id, row, head, i), {id, row, 1, head, i, 1, 0});
  });
  return out;
}

// Simpler values than `bits`, simplest first: 1, -1, the power of two
// nearest below with the same sign, the value cut to two significant bits.
std::vector<uint64_t> simpler_values(ElementType type, uint64_t bits) {
  std::vector<uint64_t> out;
  if (type == ElementType::kInt64) {  // a position: toward 0
    for (uint64_t v : {uint64_t(0), uint64_t(1), bits / 2}) {
      if (v < bits && std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    }
    return out;
  }
  const bool bf16 = type == ElementType::kBf16;
  const uint32_t f32 = bf16 ? static_cast<uint32_t>(bits) << 16 : static_cast<uint32_t>(bits);
  const uint32_t sign = f32 & 0x80000000u, exponent = f32 & 0x7F800000u;
  const uint32_t candidates[] = {0x3F800000u, 0xBF800000u, sign | exponent,
                                 sign | exponent | (f32 & 0x00400000u)};
  for (uint32_t v : candidates) {
    if (simplicity(v) >= simplicity(f32)) continue;
    const uint64_t b = bf16 ? v >> 16 : v;
    if (std::find(out.begin(), out.end(), b) == out.end()) out.push_back(b);
  }
  return out;
}

std::vector<Simplification> simple_value_steps(const TensorSet& set) {
  std::vector<Simplification> out;
  for_each_input_element(set, [&](TensorId id, const TensorGeometry& g, int64_t row, int64_t head, int64_t i,
                                     uint64_t bits) {
    if (bits == 0 || static_cast<int64_t>(out.size()) >= kMaxElementSteps) return;
    for (uint64_t v : simpler_values(g.type, bits)) {
      add_edit(out, element_text(id, row, head, i) + " -> " + value_text(g.type, v),
               {id, row, 1, head, i, 1, v});
    }
  });
  return out;
}

}  // namespace

std::vector<Simplification> value_simplifications(const Case& c, ShrinkPass pass) {
  switch (pass) {
    case ShrinkPass::kZeroTensors: return zero_tensor_steps(c, plan_tensors(c));
    case ShrinkPass::kZeroRows: return zero_row_steps(plan_tensors(c));
    case ShrinkPass::kZeroElements: return zero_element_steps(build_tensor_set(c, Poison::kA));
    case ShrinkPass::kSimpleValues: return simple_value_steps(build_tensor_set(c, Poison::kA));
    default: return {};
  }
}

int simplicity(uint32_t f32) {
  const uint32_t magnitude = f32 & 0x7FFFFFFFu;
  if (magnitude == 0) return 0;
  if (f32 == 0x3F800000u) return 1;
  if (f32 == 0xBF800000u) return 2;
  if (magnitude >= 0x7F800000u || magnitude < 0x00800000u) return 5;
  if ((magnitude & 0x7FFFFFu) == 0) return 3;
  if ((magnitude & 0x3FFFFFu) == 0) return 4;
  return 5;
}

bool canonical_edits(Case& c) {
  if (c.edits.empty()) return false;
  Case plain = c;
  plain.edits.clear();
  const TensorSet current = build_tensor_set(c, Poison::kA);
  const TensorSet generated = build_tensor_set(plain, Poison::kA);
  Case canonical = plain;
  for (TensorId id : kValueInputs) {
    const TensorGeometry* g = current.find(id);
    if (g == nullptr) continue;
    std::vector<ValueEdit> singles, changed;
    for (int64_t row = 0; row < g->rows; ++row) {
      for (int64_t head = 0; head < g->cols; ++head) {
        for (int64_t i = 0; i < g->width; ++i) {
          uint64_t now = 0, before = 0;
          const size_t bytes = static_cast<size_t>(element_bytes(g->type));
          std::memcpy(&now, current.element(*g, row, head, i), bytes);
          std::memcpy(&before, generated.element(*g, row, head, i), bytes);
          if (now != 0) singles.push_back({id, row, 1, head, i, 1, now});
          if (now != before) changed.push_back({id, row, 1, head, i, 1, now});
        }
      }
    }
    if (changed.empty()) continue;
    if (singles.size() + 1 < changed.size()) {
      canonical.edits.push_back({id, 0, -1, -1, 0, -1, 0});
      canonical.edits.insert(canonical.edits.end(), singles.begin(), singles.end());
    } else {
      canonical.edits.insert(canonical.edits.end(), changed.begin(), changed.end());
    }
  }
  if (canonical.edits.size() >= c.edits.size() || canonical.edits.size() > CaseLimits::kMaxEdits) return false;
  c = canonical;
  return true;
}

}  // namespace qcheck
