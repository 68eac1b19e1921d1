#include "fuzz/mutator/compile_key.h"

#include <cstdint>

#include "fuzz/case/case_names.h"
#include "fuzz/case/tensor_plan.h"

namespace qcheck::fuzzing {
namespace {

// Triton's default specialization of an int argument (and of a pointer's
// address, by its alignment): 1, divisible by 16, 64 bits wide, or other.
const char* int_class(int64_t v) {
  if (v == 1) return "1";
  if (v >= (int64_t(1) << 31)) return "L";
  return v % 16 == 0 ? "16" : "n";
}

int64_t class_preserving(Xoshiro256& rng, int64_t value, int64_t cap) {
  if (value == 1 || cap < 2) return value;
  if (value % 16 == 0) return cap >= 16 ? 16 * rng.between(0, cap / 16) : value;  // T = 0 is a multiple of 16
  for (int tries = 0; tries < 8; ++tries) {
    const int64_t v = rng.between(2, cap);
    if (v % 16 != 0) return v;
  }
  return value;
}

// One change of a field the kernel sees as data or as a plain int.
void mutate_warm_one(Case& c, Xoshiro256& rng, const SizeCap& cap) {
  size_t count = 0;
  const uint32_t* f32 = interesting_f32_bits(&count);
  switch (rng.below(10)) {
    case 0: case 1: c.values = static_cast<ValueRecipe>(rng.below(enum_count<ValueRecipe>())); break;
    case 2: c.positions = static_cast<PositionsRecipe>(rng.below(enum_count<PositionsRecipe>())); break;
    case 3: c.q_scale_bits = f32[rng.below(15)]; break;  // the positive normals
    case 4: (rng.one_in(2) ? c.softmax_scale_bits : c.head_scale_bits) = f32[rng.below(count)]; break;
    case 5: c.num_tokens = class_preserving(rng, c.num_tokens, cap.tokens); break;
    case 6: c.cache_rows = class_preserving(rng, c.cache_rows, cap.cache_rows); break;
    case 7: c.row_padding = rng.between(1, 256); break;
    case 8: c.weights_column_stride = rng.between(1, 64); break;
    default: c.seed = rng.next(); break;
  }
}

}  // namespace

std::string compile_key(const Case& c) {
  std::string key = std::string(name_of(c.query_path)) + (c.has_indexer ? " indexer " : " no-indexer ") +
                    name_of(c.indexer_rope) + " alias=" + name_of(c.alias);
  for (const TensorGeometry& g : plan_tensors(c).tensors) {
    const OutsideShape o = outside_shape(g);
    key += std::string(" | ") + name_of(g.id) + " " + name_of(g.type) + " [";
    for (int d = 0; d < o.ndim; ++d) {
      key += d == 0 ? int_class(o.shape[0]) : "," + std::to_string(o.shape[d]);
    }
    key += "] (";
    for (int d = 0; d < o.ndim; ++d) key += std::string(d ? "," : "") + int_class(o.strides[d]);
    // The payload of every buffer starts 16-byte aligned (kSentinelBytes).
    key += std::string(") a") + ((g.offset * element_bytes(g.type)) % 16 == 0 ? "16" : "n");
  }
  return key;
}

void mutate_case_warm(Case& c, Xoshiro256& rng, const SizeBudget& budget) {
  const std::string key = compile_key(c);
  const SizeCap& cap = plan_tensors(c).total_bytes() > budget.usual.bytes ? budget.large : budget.usual;
  for (int attempt = 0; attempt < 16; ++attempt) {
    Case m = c;
    const int changes = 1 + static_cast<int>(rng.below(2));
    for (int i = 0; i < changes; ++i) mutate_warm_one(m, rng, cap);
    repair_case(m, cap);
    if (compile_key(m) == key) {
      c = m;
      return;
    }
  }
  c.seed = rng.next();
}

}  // namespace qcheck::fuzzing
