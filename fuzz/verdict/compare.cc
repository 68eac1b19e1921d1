#include "fuzz/verdict/compare.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "fuzz/verdict/guard_bytes.h"
#include "numerics/conversions.h"
#include "numerics/float_bits.h"

namespace qcheck {

uint32_t load_bits(const uint8_t* p, ElementType type) {
  switch (type) {
    case ElementType::kE4m3: return p[0];
    case ElementType::kBf16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case ElementType::kF32:
    case ElementType::kInt64: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
  }
  return 0;
}

namespace {

uint32_t poison_bits(ElementType type, Poison poison) {
  uint32_t bits = 0;
  for (int i = 0; i < element_bytes(type) && i < 4; ++i)
    bits |= uint32_t(poison_byte(poison)) << (8 * i);
  return bits;
}

uint32_t sign_mask(ElementType type) {
  return type == ElementType::kE4m3 ? 0x80u : type == ElementType::kBf16 ? 0x8000u : 0x80000000u;
}

bool is_nan(ElementType type, uint32_t bits) {
  switch (type) {
    case ElementType::kE4m3: return (bits & 0x7Fu) == 0x7Fu;  // E4M3FN: no Inf, 0x7F/0xFF NaN
    case ElementType::kBf16: return (bits & 0x7FFFu) > 0x7F80u;
    default: return is_nan_bits(bits);
  }
}

double decode(ElementType type, uint32_t bits) {
  switch (type) {
    case ElementType::kE4m3: return spec::f32_from_e4m3(static_cast<uint8_t>(bits));
    case ElementType::kBf16: return spec::f32_from_bf16(static_cast<uint16_t>(bits));
    default: return float_from_bits(bits);
  }
}

// Position in the format's numeric order: sign-magnitude to a signed integer,
// so adjacent codes differ by one (+0 and -0 both map to 0).
int64_t order_key(ElementType type, uint32_t bits) {
  const uint32_t magnitude = bits & ~sign_mask(type);
  return (bits & sign_mask(type)) ? -int64_t(magnitude) : int64_t(magnitude);
}

MismatchClass classify_value(ElementType type, uint32_t expected, uint32_t got) {
  const bool nan_e = is_nan(type, expected), nan_g = is_nan(type, got);
  if (nan_e && !nan_g) return MismatchClass::kNanLost;
  if (!nan_e && nan_g) return MismatchClass::kSpuriousNan;
  if (nan_e && nan_g) return MismatchClass::kNanBits;
  const uint32_t magnitude = ~sign_mask(type);
  if ((expected & magnitude) == 0 && (got & magnitude) == 0) return MismatchClass::kSignOfZero;
  const int64_t distance = order_key(type, got) - order_key(type, expected);
  if (distance == 1 || distance == -1) return MismatchClass::kOffByOne;
  return MismatchClass::kWrongValue;
}

struct ValueMismatch {
  int64_t dim;
  uint32_t expected, got;
};

// True when the whole row is off by one factor 2^k (k != 0): every element
// is got = expected * 2^k, except zeros and NaNs (which scaling keeps) and
// elements at the format's subnormal range (where scaling is not exact).
// The UE8M0 band bug halves a row's scale: every code doubles (SEMANTICS.md,
// variant (A)). A single wrong element among normal ones is not such a row.
bool row_off_by_power_of_two(ElementType type, const std::vector<uint32_t>& expected,
                             const std::vector<uint32_t>& got) {
  const double min_normal =
      type == ElementType::kE4m3 ? std::ldexp(1.0, -6) : std::ldexp(1.0, -126);
  // Pass 0 reads the elements away from the subnormal range (the smaller
  // value above the smallest normal: a subnormal can round up to it) and
  // skips the others, whose scaling need not be exact. Only a row with no
  // such element (say a single subnormal weight) takes pass 1, which reads
  // every non-zero element.
  for (int pass = 0; pass < 2; ++pass) {
    int exponent = 0;
    bool found = false;
    for (size_t i = 0; i < expected.size(); ++i) {
      const double e = decode(type, expected[i]), g = decode(type, got[i]);
      if (std::isnan(e) && std::isnan(g)) continue;
      if (!std::isfinite(e) || !std::isfinite(g)) return false;
      if (e == 0 && g == 0) continue;
      if (pass == 0 && std::min(std::fabs(e), std::fabs(g)) <= min_normal) continue;
      int k = 0;
      const bool power_of_two = e != 0 && g != 0 && std::signbit(e) == std::signbit(g) &&
                                std::frexp(g / e, &k) == 0.5;  // g / e is exact then
      if (!power_of_two || (found && k - 1 != exponent)) return false;
      exponent = k - 1;
      found = true;
    }
    if (found) return exponent != 0;
  }
  return false;
}

class Comparer {
 public:
  Comparer(const Case& c, const TensorSet& expected, const TensorSet& a, const TensorSet& b,
           size_t max_listed)
      : c_(c), e_(expected), a_(a), b_(b) {
    report_.max_listed = max_listed;
  }

  Report run() {
    for (size_t i = 0; i < e_.buffers.size(); ++i) compare_buffer(static_cast<int>(i));
    return report_;
  }

 private:
  void compare_buffer(int index);
  bool run_b_kept_poison(int index) const;
  void guard_bytes(int index, const std::vector<bool>& covered);
  void input_tensor(const TensorGeometry& g);
  void untouched_tensor(const TensorGeometry& g);
  void output_tensor(const TensorGeometry& g);

  void add(const TensorGeometry& g, const char* part, MismatchClass kind, char run, int64_t t,
           int64_t h, int64_t d, uint32_t expected, uint32_t got, uint32_t other = 0) {
    Mismatch m;
    m.signature = Signature{name_of(g.id), part, kind};
    m.run = run;
    m.token = t, m.head = h, m.dim = d;
    m.type = g.type;
    m.expected_bits = expected, m.got_bits = got, m.other_run_bits = other;
    report_.add(m);
  }

  const Case& c_;
  const TensorSet& e_;
  const TensorSet& a_;
  const TensorSet& b_;
  Report report_;
};

void Comparer::compare_buffer(int index) {
  const GuardedBuffer& e = e_.buffers[index];
  report_.bytes_compared += e.size();
  bool has_untouched = false;
  for (const TensorGeometry& g : e_.plan.tensors) {
    has_untouched |= g.buffer == index && g.role == TensorRole::kUntouchedOutput;
  }
  // Fast path: every byte as expected in both runs (an untouched output
  // holds poison B in run B, where the expected set holds poison A); the
  // element-by-element walk below then would find nothing.
  if (std::memcmp(e.data(), a_.buffers[index].data(), e.size()) == 0 &&
      (has_untouched ? run_b_kept_poison(index)
                     : std::memcmp(e.data(), b_.buffers[index].data(), e.size()) == 0)) {
    return;
  }
  guard_bytes(index, covered_payload(e_.plan, e, index));
  const bool output_buffer = e_.plan.buffers[index].is_output;
  for (const TensorGeometry& g : e_.plan.tensors) {
    if (g.buffer != index) continue;
    if (g.role == TensorRole::kOutput) output_tensor(g);
    if (g.role == TensorRole::kUntouchedOutput) untouched_tensor(g);
    // An input inside an output buffer is the exact ql_nope alias: its
    // elements are query_out's front and are checked as output.
    if (g.role == TensorRole::kInput && !output_buffer) input_tensor(g);
  }
}

// True when run B's buffer `index` equals the expected bytes except that the
// elements of its untouched outputs hold poison B (the buffer holds nothing
// else: an untouched output has a buffer of its own).
bool Comparer::run_b_kept_poison(int index) const {
  const uint8_t* e = e_.buffers[index].payload();
  const uint8_t* b = b_.buffers[index].payload();
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (const TensorGeometry& g : e_.plan.tensors) {
    if (g.buffer != index) continue;
    if (g.role != TensorRole::kUntouchedOutput) return false;
    const std::vector<std::pair<int64_t, int64_t>> own = element_byte_ranges(g);
    ranges.insert(ranges.end(), own.begin(), own.end());
  }
  std::sort(ranges.begin(), ranges.end());
  const uint8_t poison = poison_byte(b_.poison);
  // Guard bytes (sentinels included, both sides of the payload) between the
  // ranges must be as expected.
  int64_t done = -int64_t(GuardedBuffer::kSentinelBytes);
  for (const auto& [first, end] : ranges) {
    if (first < done) return false;  // overlapping elements: let the walk decide
    if (std::memcmp(e + done, b + done, static_cast<size_t>(first - done)) != 0) return false;
    for (int64_t i = first; i < end; ++i) {
      if (b[i] != poison) return false;
    }
    done = end;
  }
  const int64_t end = static_cast<int64_t>(e_.buffers[index].payload_bytes() + GuardedBuffer::kSentinelBytes);
  return std::memcmp(e + done, b + done, static_cast<size_t>(end - done)) == 0;
}

void Comparer::guard_bytes(int index, const std::vector<bool>& covered) {
  const GuardedBuffer* runs[2] = {&a_.buffers[index], &b_.buffers[index]};
  for (int r = 0; r < (&a_ == &b_ ? 1 : 2); ++r) {
    add_guard_mismatches(e_, *runs[r], index, covered, r == 0 ? 'A' : 'B', nullptr, &report_);
  }
}

void Comparer::input_tensor(const TensorGeometry& g) {
  const size_t bytes = static_cast<size_t>(element_bytes(g.type));
  for (int64_t t = 0; t < g.rows; ++t) {
    for (int64_t h = 0; h < g.cols; ++h) {
      for (int64_t d = 0; d < g.width; ++d) {
        const uint8_t* e = e_.element(g, t, h, d);
        const uint8_t* a = a_.element(g, t, h, d);
        const uint8_t* b = b_.element(g, t, h, d);
        const bool a_differs = std::memcmp(e, a, bytes) != 0;
        if (!a_differs && std::memcmp(e, b, bytes) == 0) continue;
        add(g, "elements", MismatchClass::kInputModified, a_differs ? 'A' : 'B', t, h, d,
            load_bits(e, g.type), load_bits(a_differs ? a : b, g.type));
      }
    }
  }
}

void Comparer::untouched_tensor(const TensorGeometry& g) {
  const uint32_t pa = poison_bits(g.type, a_.poison), pb = poison_bits(g.type, b_.poison);
  for (int64_t t = 0; t < g.rows; ++t) {
    for (int64_t h = 0; h < g.cols; ++h) {
      for (int64_t d = 0; d < g.width; ++d) {
        const uint32_t a = load_bits(a_.element(g, t, h, d), g.type);
        const uint32_t b = load_bits(b_.element(g, t, h, d), g.type);
        if (a == pa && b == pb) continue;
        add(g, part_of(c_, g.id, d), MismatchClass::kWrittenWhenDisabled, a != pa ? 'A' : 'B', t, h,
            d, a != pa ? pa : pb, a != pa ? a : b);
      }
    }
  }
}

void Comparer::output_tensor(const TensorGeometry& g) {
  const uint32_t pa = poison_bits(g.type, a_.poison), pb = poison_bits(g.type, b_.poison);
  // With the exact alias, query_out's front holds ql_nope, not poison.
  const TensorGeometry* ql_nope = e_.find(TensorId::kQlNope);
  const int64_t unpoisoned =
      (ql_nope != nullptr && ql_nope->buffer == g.buffer) ? ql_nope->width : 0;
  std::vector<ValueMismatch> values;
  std::vector<uint32_t> row_expected(g.width), row_got(g.width);
  for (int64_t t = 0; t < g.rows; ++t) {
    for (int64_t h = 0; h < g.cols; ++h) {
      values.clear();
      for (int64_t d = 0; d < g.width; ++d) {
        const uint32_t e = load_bits(e_.element(g, t, h, d), g.type);
        const uint32_t a = load_bits(a_.element(g, t, h, d), g.type);
        const uint32_t b = load_bits(b_.element(g, t, h, d), g.type);
        row_expected[d] = e;
        row_got[d] = a;
        if (a == e && b == e) continue;
        const char* part = part_of(c_, g.id, d);
        if (d >= unpoisoned && a == pa && b == pb) {
          add(g, part, MismatchClass::kUnwritten, 'A', t, h, d, e, a, b);
        } else if (a != b) {
          add(g, part, MismatchClass::kNondeterministic, 'A', t, h, d, e, a, b);
        } else {
          values.push_back({d, e, a});
        }
      }
      if (values.empty()) continue;
      const bool power_of_two = row_off_by_power_of_two(g.type, row_expected, row_got);
      for (const ValueMismatch& m : values) {
        const MismatchClass kind = power_of_two ? MismatchClass::kRowPowerOfTwo
                                                : classify_value(g.type, m.expected, m.got);
        add(g, part_of(c_, g.id, m.dim), kind, 'A', t, h, m.dim, m.expected, m.got, m.got);
      }
    }
  }
}

}  // namespace

int64_t code_distance(ElementType type, uint32_t a, uint32_t b) {
  if (is_nan(type, a) || is_nan(type, b)) return -1;
  const int64_t d = order_key(type, a) - order_key(type, b);
  return d < 0 ? -d : d;
}

const char* part_of(const Case& c, TensorId tensor, int64_t dim) {
  switch (tensor) {
    case TensorId::kQueryOut:
      if (c.query_path == QueryPath::kBf16Separate) return "rope";
      return dim < c.nope_dim ? "nope front" : "rope tail";
    case TensorId::kIndexQFp8: return dim < c.rope_dim ? "rope part" : "pass-through part";
    case TensorId::kIndexWeightsOut: return "weights";
    default: return "elements";
  }
}

double element_value(ElementType type, uint32_t bits) { return decode(type, bits); }

Report compare_identical(const Case& c, const TensorSet& first, const TensorSet& second, MismatchClass as,
                         char run, size_t max_listed) {
  Report report;
  report.max_listed = max_listed;
  for (size_t index = 0; index < first.buffers.size(); ++index) {
    const GuardedBuffer& f = first.buffers[index];
    const GuardedBuffer& s = second.buffers[index];
    report.bytes_compared += f.size();
    if (std::memcmp(f.data(), s.data(), f.size()) == 0) continue;
    const int i = static_cast<int>(index);
    add_guard_mismatches(first, s, i, covered_payload(first.plan, f, i), run, &as, &report);
    const bool output_buffer = first.plan.buffers[index].is_output;
    for (const TensorGeometry& g : first.plan.tensors) {
      // The aliased ql_nope is query_out's front: its elements are checked there.
      if (g.buffer != static_cast<int>(index) || (g.role == TensorRole::kInput && output_buffer)) continue;
      for (int64_t t = 0; t < g.rows; ++t) {
        for (int64_t h = 0; h < g.cols; ++h) {
          for (int64_t d = 0; d < g.width; ++d) {
            const uint32_t a = load_bits(first.element(g, t, h, d), g.type);
            const uint32_t b = load_bits(second.element(g, t, h, d), g.type);
            if (a == b) continue;
            Mismatch m;
            m.signature = Signature{name_of(g.id), part_of(c, g.id, d), as};
            m.run = run;
            m.token = t, m.head = h, m.dim = d;
            m.type = g.type;
            m.expected_bits = a, m.got_bits = b;
            report.add(m);
          }
        }
      }
    }
  }
  return report;
}

Report compare_runs(const Case& c, const TensorSet& expected, const TensorSet& got_a,
                    const TensorSet& got_b, size_t max_listed) {
  return Comparer(c, expected, got_a, got_b, max_listed).run();
}

}  // namespace qcheck
