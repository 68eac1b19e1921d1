#include "tests/reference/oracle_table_runs.h"

#include <cstring>

#include "fuzz/verdict/compare.h"
#include "fuzz/verdict/report.h"
#include "gtest/gtest.h"
#include "ops/fused_q/oracle/fused_q_oracle.h"
#include "tests/reference/f32_sweep.h"

namespace qcheck::test {
namespace {

// Classes that mean "a byte changed that the launch must not change". The
// other classes (wrong value, NaN bits, ...) compare an output element with
// its poison when measured against the set as built: that is the oracle's
// result.
bool is_side_effect(MismatchClass mismatch) {
  switch (mismatch) {
    case MismatchClass::kSentinelOverwritten:
    case MismatchClass::kPaddingOverwritten:
    case MismatchClass::kInputModified:
    case MismatchClass::kWrittenWhenDisabled:
    case MismatchClass::kUnwritten:
    case MismatchClass::kNondeterministic:
    case MismatchClass::kGraphReplayDiffers:
      return true;
    default:
      return false;
  }
}

// Bits of one element, widened; int64 elements (positions) give their low 32 bits.
uint32_t element_bits(const uint8_t* p, ElementType type) {
  uint32_t bits = 0;
  std::memcpy(&bits, p, size_t(element_bytes(type) < 4 ? element_bytes(type) : 4));  // little-endian
  return bits;
}

}  // namespace

TensorSet build_inputs(const Case& c, Poison poison, const InputWriter& write_inputs) {
  TensorSet set = build_tensor_set(c, poison);
  // With the exact alias, ql_nope's elements are query_out's front: the
  // writer puts inputs there, and the poison fill has left that front alone.
  if (write_inputs) write_inputs(set);
  return set;
}

OracleRun run_oracle_twice(const Case& c, const Profile& profile, const RowOps& rows,
                           const InputWriter& write_inputs) {
  OracleRun run{"", build_inputs(c, Poison::kA, write_inputs), build_inputs(c, Poison::kB, write_inputs)};
  for (TensorSet* set : {&run.a, &run.b}) {
    const std::string error = run_fused_q_oracle(make_fused_q_args(c, *set), profile, rows);
    if (!error.empty() && run.refusal.empty()) run.refusal = error;
  }
  return run;
}

std::string side_effects(const Case& c, const OracleRun& run, const InputWriter& write_inputs) {
  const TensorSet as_built = build_inputs(c, Poison::kA, write_inputs);
  const Report report = compare_runs(c, as_built, run.a, run.b);
  std::string lines;
  for (const auto& [signature, count] : report.counts) {
    if (is_side_effect(signature.mismatch)) lines += signature.text() + ": " + std::to_string(count) + "\n";
  }
  return lines;
}

std::string differences(const Case& c, const OracleRun& expected, const OracleRun& actual) {
  const Report report = compare_runs(c, expected.a, actual.a, actual.b, 8);
  return report.passed() ? "" : report_text(report);
}

void write_tensor_bytes(TensorSet& set, TensorId id, const uint8_t* bytes, size_t count,
                        size_t element_size) {
  const TensorGeometry* g = set.find(id);
  if (g == nullptr) {
    ADD_FAILURE() << "the case has no tensor " << name_of(id);
    return;
  }
  if (size_t(element_bytes(g->type)) != element_size || size_t(g->element_count()) != count) {
    ADD_FAILURE() << name_of(id) << " holds " << g->element_count() << " " << name_of(g->type)
                  << " elements; the test gave " << count << " of " << element_size << " bytes";
    return;
  }
  size_t next = 0;
  for (int64_t row = 0; row < g->rows; ++row) {
    for (int64_t col = 0; col < g->cols; ++col) {
      for (int64_t i = 0; i < g->width; ++i, ++next) {
        std::memcpy(set.element(*g, row, col, i), bytes + next * element_size, element_size);
      }
    }
  }
}

std::string tensor_hex(const TensorSet& set, TensorId id) {
  const TensorGeometry* g = set.find(id);
  if (g == nullptr) return std::string("(no tensor ") + name_of(id) + ")";
  const int digits = 2 * (element_bytes(g->type) < 4 ? element_bytes(g->type) : 4);
  std::vector<uint32_t> bits;
  for (int64_t row = 0; row < g->rows; ++row) {
    for (int64_t col = 0; col < g->cols; ++col) {
      for (int64_t i = 0; i < g->width; ++i) bits.push_back(element_bits(set.element(*g, row, col, i), g->type));
    }
  }
  return hex_list(bits, digits);
}

std::string hex_list(const std::vector<uint32_t>& bits, int digits) {
  std::string s;
  for (uint32_t b : bits) s += (s.empty() ? "" : " ") + hex(b, digits);
  return s;
}

}  // namespace qcheck::test
