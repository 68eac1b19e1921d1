// Names of the Case enums, as the JSON form and the reports write them, and
// the reverse look-up. Reference enums (QueryPath, RopeStyle, FloatType) keep
// the names ops/fused_q/args/fused_q_args.h gives them.
#pragma once

#include <string>

#include "fuzz/case/case.h"

namespace qcheck {

const char* name_of(Layout layout);
const char* name_of(AliasMode alias);
const char* name_of(PositionsRecipe recipe);
const char* name_of(ValueRecipe recipe);

// Each returns false (and leaves *out alone) when `name` is not one of the
// enum's names.
bool parse_name(const std::string& name, QueryPath* out);
bool parse_name(const std::string& name, RopeStyle* out);
bool parse_name(const std::string& name, FloatType* out);
bool parse_name(const std::string& name, Layout* out);
bool parse_name(const std::string& name, AliasMode* out);
bool parse_name(const std::string& name, PositionsRecipe* out);
bool parse_name(const std::string& name, ValueRecipe* out);

// "a, b, c": the names an enum accepts, for error messages.
template <typename Enum>
std::string names_of_all();

// Number of values of each enum (the values are 0 .. count - 1).
template <typename Enum>
constexpr unsigned enum_count();
template <>
constexpr unsigned enum_count<QueryPath>() {
  return 3;
}
template <>
constexpr unsigned enum_count<RopeStyle>() {
  return 2;
}
template <>
constexpr unsigned enum_count<FloatType>() {
  return 2;
}
template <>
constexpr unsigned enum_count<Layout>() {
  return 4;
}
template <>
constexpr unsigned enum_count<AliasMode>() {
  return 2;
}
template <>
constexpr unsigned enum_count<PositionsRecipe>() {
  return 4;
}
template <>
constexpr unsigned enum_count<ValueRecipe>() {
  return 12;
}

// True when the enum holds one of its declared values.
template <typename Enum>
bool in_range(Enum value) {
  return static_cast<unsigned>(value) < enum_count<Enum>();
}

}  // namespace qcheck
