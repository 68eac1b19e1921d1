// What a comparison found: every mismatching element or byte, classified,
// counted per Signature, the first few listed with coordinates and bits.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fuzz/case/tensor_plan.h"

namespace qcheck {

// In order of precedence: primary_signature() picks the first class present.
enum class MismatchClass : uint8_t {
  kSentinelOverwritten,  // a byte before or after a buffer changed
  kPaddingOverwritten,   // a byte of a buffer that no element covers changed
  kInputModified,        // an input element changed (outside the declared alias)
  kWrittenWhenDisabled,  // an output that must stay untouched (no indexer) was written
  kUnwritten,            // an output element kept the poison of both runs
  kNondeterministic,     // the two runs wrote different bits
  kGraphReplayDiffers,   // the launch replayed from a CUDA graph wrote other bits than the eager one
  kNanLost,              // expected NaN, got a number
  kSpuriousNan,          // expected a number, got NaN
  kNanBits,              // both NaN, different bits
  kSignOfZero,           // +0 against -0
  kRowPowerOfTwo,        // the whole row is off by one factor 2^k (the UE8M0 band bug)
  kOffByOne,             // one code apart in the format's ordering
  kWrongValue,           // anything else
};
constexpr int kMismatchClassCount = 14;

const char* name_of(MismatchClass mismatch);

// (tensor, part, class): stable across runs, for deduplicating failures.
// Parts: query_out "nope front" / "rope tail" (packed) or "rope" (separate);
// index_q_fp8 "rope part" / "pass-through part"; index_weights_out "weights";
// inputs "elements"; guard bytes "sentinel before" / "sentinel after" /
// "padding".
struct Signature {
  std::string tensor;
  std::string part;
  MismatchClass mismatch = MismatchClass::kWrongValue;

  std::string text() const;  // "index_q_fp8/rope part/row-power-of-two"
  bool operator<(const Signature& other) const;
  bool operator==(const Signature& other) const;
};

struct Mismatch {
  Signature signature;
  char run = 'A';  // the poison run that showed it: 'A' or 'B'
  // Element coordinates [token, head, dim] (for a cache: [row, 0, dim]); -1
  // for guard bytes, which have byte_offset (from the start of the buffer,
  // sentinels included) instead.
  int64_t token = -1, head = -1, dim = -1;
  int64_t byte_offset = -1;
  ElementType type = ElementType::kE4m3;  // of the element, or kE4m3 for a byte
  uint32_t expected_bits = 0;
  uint32_t got_bits = 0;
  uint32_t other_run_bits = 0;  // the other run's bits (nondeterminism, unwritten)
};

struct Report {
  std::map<Signature, int64_t> counts;
  std::vector<Mismatch> first;  // the first max_listed, in scan order
  int64_t total = 0;
  size_t max_listed = 20;
  uint64_t bytes_compared = 0;

  void add(const Mismatch& m);
  // Adds another report's counts and listed mismatches (bytes_compared stays).
  void merge(const Report& other);
  bool passed() const { return total == 0; }
  // The signature of the most severe class present (ties: smallest), or an
  // empty tensor name when the report passed.
  Signature primary_signature() const;
  std::map<MismatchClass, int64_t> counts_by_class() const;
};

// Human-readable value of an element's bits ("1.5", "-0", "NaN", "+Inf").
std::string value_text(ElementType type, uint32_t bits);

// Several lines: counts per signature, then the listed mismatches.
std::string report_text(const Report& report);

}  // namespace qcheck
