#include "core/op/any_bins.h"

#include <cstdint>

namespace qcheck {
namespace {

std::string integer_class(int64_t v) {
  if (v < 0) return "<0";
  if (v < 2) return "=" + std::to_string(v);
  int bits = 0;
  while ((v >> (bits + 1)) != 0) ++bits;  // 2^bits <= v < 2^(bits+1)
  const uint64_t low = uint64_t{1} << bits, high = (low << 1) - 1;
  return "=" + std::to_string(low) + ".." + std::to_string(high);
}

std::string f32_class(uint32_t bits) {
  const uint32_t exponent = (bits >> 23) & 0xFF, mantissa = bits & 0x7FFFFF;
  if (exponent == 0xFF) return mantissa == 0 ? ":inf" : ":nan";
  if (exponent == 0) return mantissa == 0 ? ":zero" : ":subnormal";
  return ":normal";
}

}  // namespace

std::vector<std::string> any_case_bins(const AnyCase& c) {
  std::vector<std::string> bins;
  const std::vector<FieldMeta>& fields = c.op->vocabulary().fields;
  for (size_t i = 0; i < fields.size() && i < c.fields.size(); ++i) {
    const FieldMeta& f = fields[i];
    const uint64_t v = c.fields[i].number;
    switch (f.kind) {
      case FieldKind::kEnumeration:
        if (v < f.choices.size()) bins.push_back(f.name + "=" + f.choices[v]);
        break;
      case FieldKind::kBoolean: bins.push_back(f.name + (v != 0 ? "=true" : "=false")); break;
      case FieldKind::kInteger: bins.push_back(f.name + integer_class(static_cast<int64_t>(v))); break;
      case FieldKind::kBits32: bins.push_back(f.name + f32_class(static_cast<uint32_t>(v))); break;
      default: break;
    }
  }
  return bins;
}

}  // namespace qcheck
