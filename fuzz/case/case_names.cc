#include "fuzz/case/case_names.h"

namespace qcheck {

const char* name_of(Layout layout) {
  switch (layout) {
    case Layout::kContiguous: return "contiguous";
    case Layout::kPaddedRows: return "padded-rows";
    case Layout::kHeadMajor: return "head-major";
    case Layout::kWideRowView: return "wide-row-view";
  }
  return "?";
}

const char* name_of(AliasMode alias) {
  return alias == AliasMode::kNone ? "none" : alias == AliasMode::kExactFront ? "exact-front" : "?";
}

const char* name_of(PositionsRecipe recipe) {
  switch (recipe) {
    case PositionsRecipe::kArangeModP: return "arange-mod-p";
    case PositionsRecipe::kRandom: return "random";
    case PositionsRecipe::kNearEnd: return "near-end";
    case PositionsRecipe::kRepeated: return "repeated";
  }
  return "?";
}

const char* name_of(ValueRecipe recipe) {
  switch (recipe) {
    case ValueRecipe::kNormal: return "normal";
    case ValueRecipe::kMagnitudes: return "magnitudes";
    case ValueRecipe::kSpecials: return "specials";
    case ValueRecipe::kScaleEdges: return "scale-edges";
    case ValueRecipe::kZeroRows: return "zero-rows";
    case ValueRecipe::kScaleBand: return "scale-band";
    case ValueRecipe::kCancellation: return "cancellation";
    case ValueRecipe::kLargePositions: return "large-positions";
    case ValueRecipe::kMixed: return "mixed";
    case ValueRecipe::kNanRows: return "nan-rows";
    case ValueRecipe::kContraction: return "contraction";
    case ValueRecipe::kTies: return "ties";
  }
  return "?";
}

namespace {

template <typename Enum>
bool parse_any(const std::string& name, Enum* out) {
  for (unsigned i = 0; i < enum_count<Enum>(); ++i) {
    const Enum value = static_cast<Enum>(i);
    if (name == name_of(value)) {
      *out = value;
      return true;
    }
  }
  return false;
}

}  // namespace

bool parse_name(const std::string& n, QueryPath* out) { return parse_any(n, out); }
bool parse_name(const std::string& n, RopeStyle* out) { return parse_any(n, out); }
bool parse_name(const std::string& n, FloatType* out) { return parse_any(n, out); }
bool parse_name(const std::string& n, Layout* out) { return parse_any(n, out); }
bool parse_name(const std::string& n, AliasMode* out) { return parse_any(n, out); }
bool parse_name(const std::string& n, PositionsRecipe* out) { return parse_any(n, out); }
bool parse_name(const std::string& n, ValueRecipe* out) { return parse_any(n, out); }

template <typename Enum>
std::string names_of_all() {
  std::string all;
  for (unsigned i = 0; i < enum_count<Enum>(); ++i) {
    if (i) all += ", ";
    all += name_of(static_cast<Enum>(i));
  }
  return all;
}

template std::string names_of_all<QueryPath>();
template std::string names_of_all<RopeStyle>();
template std::string names_of_all<FloatType>();
template std::string names_of_all<Layout>();
template std::string names_of_all<AliasMode>();
template std::string names_of_all<PositionsRecipe>();
template std::string names_of_all<ValueRecipe>();

}  // namespace qcheck
