#include "fuzz/verdict/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <tuple>

#include "fuzz/verdict/element_bits.h"

namespace qcheck {

const char* name_of(MismatchClass m) {
  switch (m) {
    case MismatchClass::kSentinelOverwritten: return "sentinel-overwritten";
    case MismatchClass::kPaddingOverwritten: return "padding-overwritten";
    case MismatchClass::kInputModified: return "input-modified";
    case MismatchClass::kWrittenWhenDisabled: return "written-when-disabled";
    case MismatchClass::kUnwritten: return "unwritten";
    case MismatchClass::kNondeterministic: return "nondeterministic";
    case MismatchClass::kGraphReplayDiffers: return "graph-replay-differs";
    case MismatchClass::kNanLost: return "expected-nan-got-number";
    case MismatchClass::kSpuriousNan: return "expected-number-got-nan";
    case MismatchClass::kNanBits: return "nan-bits";
    case MismatchClass::kSignOfZero: return "sign-of-zero";
    case MismatchClass::kRowPowerOfTwo: return "row-power-of-two";
    case MismatchClass::kOffByOne: return "off-by-one";
    case MismatchClass::kWrongValue: return "wrong-value";
  }
  return "?";
}

std::string Signature::text() const { return tensor + "/" + part + "/" + name_of(mismatch); }

bool Signature::operator<(const Signature& o) const {
  return std::tie(mismatch, tensor, part) < std::tie(o.mismatch, o.tensor, o.part);
}

bool Signature::operator==(const Signature& o) const {
  return mismatch == o.mismatch && tensor == o.tensor && part == o.part;
}

void Report::add(const Mismatch& m) {
  ++counts[m.signature];
  ++total;
  if (first.size() < max_listed) first.push_back(m);
}

void Report::merge(const Report& other) {
  for (const auto& [signature, count] : other.counts) counts[signature] += count;
  total += other.total;
  for (const Mismatch& m : other.first) {
    if (first.size() < max_listed) first.push_back(m);
  }
}

Signature Report::primary_signature() const {
  // counts is ordered by (class, tensor, part): the first key is the most
  // severe class present.
  return counts.empty() ? Signature{} : counts.begin()->first;
}

std::map<MismatchClass, int64_t> Report::counts_by_class() const {
  std::map<MismatchClass, int64_t> by_class;
  for (const auto& [signature, count] : counts) by_class[signature.mismatch] += count;
  return by_class;
}

std::string value_text(ElementType type, uint32_t bits) {
  if (type == ElementType::kInt64) return std::to_string(bits);
  if (type == ElementType::kInt32) return std::to_string(static_cast<int32_t>(bits));
  if (type == ElementType::kU8) return std::to_string(bits);
  const double value = decode_code(type, bits);
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value == 0) return std::signbit(value) ? "-0" : "0";
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

namespace {

std::string hex(uint32_t bits, ElementType type) {
  // One code's bits: a nibble of e2m1, a byte, two bytes of bf16, else four.
  const int digits = type == ElementType::kE2m1x2 ? 1 : 2 * std::min(element_bytes(type), 4);
  char text[16];
  std::snprintf(text, sizeof text, "0x%0*X", digits, static_cast<unsigned>(bits));
  return text;
}

}  // namespace

std::string report_text(const Report& r) {
  std::ostringstream s;
  if (r.passed()) {
    s << "every byte as expected (" << r.bytes_compared << " bytes compared per run, two runs)\n";
    return s.str();
  }
  s << r.total << " mismatches; primary signature " << r.primary_signature().text() << "\n";
  s << "  count  signature\n";
  for (const auto& [signature, count] : r.counts) {
    char line[24];
    std::snprintf(line, sizeof line, "%7lld  ", static_cast<long long>(count));
    s << line << signature.text() << "\n";
  }
  s << "first " << r.first.size() << ":\n";
  for (const Mismatch& m : r.first) {
    s << "  " << m.signature.tensor;
    if (m.byte_offset >= 0) {
      s << " byte " << m.byte_offset << " (" << m.signature.part << ")";
    } else {
      s << "[t=" << m.token << ", h=" << m.head << ", d=" << m.dim << "] " << m.signature.part;
    }
    s << ": " << name_of(m.signature.mismatch) << ", run " << m.run << ": expected "
      << hex(m.expected_bits, m.type) << " (" << value_text(m.type, m.expected_bits) << ") got "
      << hex(m.got_bits, m.type) << " (" << value_text(m.type, m.got_bits) << ")";
    if (m.signature.mismatch == MismatchClass::kNondeterministic ||
        m.signature.mismatch == MismatchClass::kUnwritten) {
      s << ", other run " << hex(m.other_run_bits, m.type);
    }
    s << "\n";
  }
  return s.str();
}

}  // namespace qcheck
