#include "fuzz/verdict/compare.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "fuzz/verdict/element_bits.h"
#include "fuzz/verdict/guard_bytes.h"

namespace qcheck {

namespace {

uint32_t poison_bits(ElementType type, Poison poison) {
  uint32_t bits = 0;
  for (int i = 0; i < element_bytes(type) && i < 4; ++i)
    bits |= uint32_t(poison_byte(poison)) << (8 * i);
  return bits;
}

MismatchClass classify_value(ElementType type, uint32_t expected, uint32_t got) {
  const bool nan_e = is_nan_code(type, expected), nan_g = is_nan_code(type, got);
  if (nan_e && !nan_g) return MismatchClass::kNanLost;
  if (!nan_e && nan_g) return MismatchClass::kSpuriousNan;
  if (nan_e && nan_g) return MismatchClass::kNanBits;
  if (is_float_type(type)) {
    const uint32_t magnitude = ~sign_mask(type);
    if ((expected & magnitude) == 0 && (got & magnitude) == 0) return MismatchClass::kSignOfZero;
  }
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
  if (!is_float_type(type)) return false;
  const double smallest_normal = min_normal(type);
  // Pass 0 reads the elements away from the subnormal range (the smaller
  // value above the smallest normal: a subnormal can round up to it) and
  // skips the others, whose scaling need not be exact. Only a row with no
  // such element (say a single subnormal weight) takes pass 1, which reads
  // every non-zero element.
  for (int pass = 0; pass < 2; ++pass) {
    int exponent = 0;
    bool found = false;
    for (size_t i = 0; i < expected.size(); ++i) {
      const double e = decode_code(type, expected[i]), g = decode_code(type, got[i]);
      if (std::isnan(e) && std::isnan(g)) continue;
      if (!std::isfinite(e) || !std::isfinite(g)) return false;
      if (e == 0 && g == 0) continue;
      if (pass == 0 && std::min(std::fabs(e), std::fabs(g)) <= smallest_normal) continue;
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

// The element ranges of buffer `index` that must keep the run's poison:
// untouched outputs whole, scatter outputs' rows their mask leaves alone.
std::vector<std::pair<int64_t, int64_t>> kept_poison_ranges(const TensorSet& set, int index) {
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (const TensorGeometry& g : set.plan.tensors) {
    if (g.buffer != index) continue;
    if (g.role == TensorRole::kUntouchedOutput) {
      const std::vector<std::pair<int64_t, int64_t>> own = element_byte_ranges(g);
      ranges.insert(ranges.end(), own.begin(), own.end());
    } else if (g.role == TensorRole::kScatterOutput) {
      const int64_t bytes = g.width * element_bytes(g.type);
      for (int64_t row = 0; row < g.rows; ++row) {
        if (set.row_written(g, row)) continue;
        for (int64_t col = 0; col < g.cols; ++col) {
          const int64_t first = g.byte_offset(row, col, 0);
          ranges.push_back({first, first + bytes});
        }
      }
    }
  }
  std::sort(ranges.begin(), ranges.end());
  return ranges;
}

class Comparer {
 public:
  Comparer(const PartNamer& parts, const TensorSet& expected, const TensorSet& a, const TensorSet& b,
           size_t max_listed)
      : parts_(parts), e_(expected), a_(a), b_(b) {
    report_.max_listed = max_listed;
  }

  Report run() {
    for (size_t i = 0; i < e_.buffers.size(); ++i) compare_buffer(static_cast<int>(i));
    return report_;
  }

 private:
  void compare_buffer(int index);
  bool run_b_kept_poison(int index, const std::vector<std::pair<int64_t, int64_t>>& kept) const;
  void guard_bytes(int index, const std::vector<bool>& covered);
  void input_tensor(const TensorGeometry& g);
  void untouched_row(const TensorGeometry& g, int64_t t);
  // alias: the elements [first, end) of each (row, col) an aliased input holds.
  void output_row(const TensorGeometry& g, int64_t t, std::pair<int64_t, int64_t> alias);

  void add(const TensorGeometry& g, const char* part, MismatchClass kind, char run, int64_t t,
           int64_t h, int64_t d, uint32_t expected, uint32_t got, uint32_t other = 0) {
    Mismatch m;
    m.signature = Signature{g.name, part, kind};
    m.run = run;
    m.token = t, m.head = h, m.dim = d;
    m.type = g.type;
    m.expected_bits = expected, m.got_bits = got, m.other_run_bits = other;
    report_.add(m);
  }

  const PartNamer& parts_;
  std::vector<ValueMismatch> values_;  // scratch of output_row, kept to spare allocations
  std::vector<uint32_t> row_expected_, row_got_;
  const TensorSet& e_;
  const TensorSet& a_;
  const TensorSet& b_;
  Report report_;
};

void Comparer::compare_buffer(int index) {
  const GuardedBuffer& e = e_.buffers[index];
  report_.bytes_compared += e.size();
  // Fast path: every byte as expected in both runs (elements that keep the
  // poison hold poison B in run B, where the expected set holds poison A);
  // the element-by-element walk below then would find nothing.
  if (std::memcmp(e.data(), a_.buffers[index].data(), e.size()) == 0) {
    const std::vector<std::pair<int64_t, int64_t>> kept = kept_poison_ranges(e_, index);
    if (kept.empty() ? std::memcmp(e.data(), b_.buffers[index].data(), e.size()) == 0
                     : run_b_kept_poison(index, kept)) {
      return;
    }
  }
  guard_bytes(index, covered_payload(e_.plan, e, index));
  const bool output_buffer = e_.plan.buffers[index].is_output;
  for (const TensorGeometry& g : e_.plan.tensors) {
    if (g.buffer != index) continue;
    switch (g.role) {
      case TensorRole::kOutput:
      case TensorRole::kScatterOutput: {
        // An aliased input's elements (query_out's front holds ql_nope) are never poison.
        const std::pair<int64_t, int64_t> alias = aliased_elements(e_.plan, g);
        for (int64_t t = 0; t < g.rows; ++t) {
          if (e_.row_written(g, t)) {
            output_row(g, t, alias);
          } else {
            untouched_row(g, t);
          }
        }
        break;
      }
      case TensorRole::kUntouchedOutput:
        for (int64_t t = 0; t < g.rows; ++t) untouched_row(g, t);
        break;
      case TensorRole::kInput:
        // An input inside an output buffer is an alias (ql_nope is
        // query_out's front): its elements are checked as the output's.
        if (!output_buffer) input_tensor(g);
        break;
    }
  }
}

// True when run B's buffer `index` equals the expected bytes except that the
// `kept` ranges (sorted) hold poison B.
bool Comparer::run_b_kept_poison(int index, const std::vector<std::pair<int64_t, int64_t>>& kept) const {
  const uint8_t* e = e_.buffers[index].payload();
  const uint8_t* b = b_.buffers[index].payload();
  const uint8_t poison = poison_byte(b_.poison);
  // Every other byte (sentinels included, both sides of the payload) must be
  // as expected.
  int64_t done = -int64_t(GuardedBuffer::kSentinelBytes);
  for (const auto& [first, end] : kept) {
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
  const int codes = codes_per_element(g.type);
  for (int64_t t = 0; t < g.rows; ++t) {
    for (int64_t h = 0; h < g.cols; ++h) {
      for (int64_t d = 0; d < g.width; ++d) {
        const uint8_t* e = e_.element(g, t, h, d);
        const uint8_t* a = a_.element(g, t, h, d);
        const uint8_t* b = b_.element(g, t, h, d);
        const bool a_differs = std::memcmp(e, a, bytes) != 0;
        if (!a_differs && std::memcmp(e, b, bytes) == 0) continue;
        const uint32_t want = load_bits(e, g.type), got = load_bits(a_differs ? a : b, g.type);
        const char run = a_differs ? 'A' : 'B';
        bool listed = false;
        for (int k = 0; k < codes; ++k) {
          const uint32_t ek = code_of(g.type, want, k), gk = code_of(g.type, got, k);
          if (ek == gk) continue;
          add(g, "elements", MismatchClass::kInputModified, run, t, h, d * codes + k, ek, gk);
          listed = true;
        }
        // The bytes differ where no code's bits do: an int64's high half,
        // which the 32 bits a mismatch holds leave out.
        if (!listed) add(g, "elements", MismatchClass::kInputModified, run, t, h, d * codes, want, got);
      }
    }
  }
}

void Comparer::untouched_row(const TensorGeometry& g, int64_t t) {
  const uint32_t pa = poison_bits(g.type, a_.poison), pb = poison_bits(g.type, b_.poison);
  const int codes = codes_per_element(g.type);
  for (int64_t h = 0; h < g.cols; ++h) {
    for (int64_t d = 0; d < g.width; ++d) {
      const uint32_t a = load_bits(a_.element(g, t, h, d), g.type);
      const uint32_t b = load_bits(b_.element(g, t, h, d), g.type);
      if (a == pa && b == pb) continue;
      for (int k = 0; k < codes; ++k) {
        const uint32_t pak = code_of(g.type, pa, k), pbk = code_of(g.type, pb, k);
        const uint32_t ak = code_of(g.type, a, k), bk = code_of(g.type, b, k);
        if (ak == pak && bk == pbk) continue;
        const int64_t dim = d * codes + k;
        add(g, parts_(g, dim), MismatchClass::kWrittenWhenDisabled, ak != pak ? 'A' : 'B', t, h, dim,
            ak != pak ? pak : pbk, ak != pak ? ak : bk);
      }
    }
  }
}

void Comparer::output_row(const TensorGeometry& g, int64_t t, std::pair<int64_t, int64_t> alias) {
  const uint32_t pa = poison_bits(g.type, a_.poison), pb = poison_bits(g.type, b_.poison);
  const auto [alias_first, alias_end] = alias;
  const int codes = codes_per_element(g.type);
  std::vector<ValueMismatch>& values = values_;
  std::vector<uint32_t>& row_expected = row_expected_;
  std::vector<uint32_t>& row_got = row_got_;
  row_expected.resize(static_cast<size_t>(g.width * codes));
  row_got.resize(static_cast<size_t>(g.width * codes));
  for (int64_t h = 0; h < g.cols; ++h) {
    values.clear();
    for (int64_t d = 0; d < g.width; ++d) {
      const uint32_t e = load_bits(e_.element(g, t, h, d), g.type);
      const uint32_t a = load_bits(a_.element(g, t, h, d), g.type);
      const uint32_t b = load_bits(b_.element(g, t, h, d), g.type);
      const bool prefilled = d >= alias_first && d < alias_end;
      for (int k = 0; k < codes; ++k) {
        const int64_t dim = d * codes + k;
        const uint32_t ek = code_of(g.type, e, k), ak = code_of(g.type, a, k), bk = code_of(g.type, b, k);
        row_expected[dim] = ek;
        row_got[dim] = ak;
        if (ak == ek && bk == ek) continue;
        const char* part = parts_(g, dim);
        if (!prefilled && ak == code_of(g.type, pa, k) && bk == code_of(g.type, pb, k)) {
          add(g, part, MismatchClass::kUnwritten, 'A', t, h, dim, ek, ak, bk);
        } else if (ak != bk) {
          add(g, part, MismatchClass::kNondeterministic, 'A', t, h, dim, ek, ak, bk);
        } else {
          values.push_back({dim, ek, ak});
        }
      }
    }
    if (values.empty()) continue;
    const bool power_of_two = row_off_by_power_of_two(g.type, row_expected, row_got);
    for (const ValueMismatch& m : values) {
      const MismatchClass kind = power_of_two ? MismatchClass::kRowPowerOfTwo
                                              : classify_value(g.type, m.expected, m.got);
      add(g, parts_(g, m.dim), kind, 'A', t, h, m.dim, m.expected, m.got, m.got);
    }
  }
}

}  // namespace

int64_t code_distance(ElementType type, uint32_t a, uint32_t b) {
  if (is_nan_code(type, a) || is_nan_code(type, b)) return -1;
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

PartNamer fused_q_parts(const Case& c) {
  return [&c](const TensorGeometry& g, int64_t dim) { return part_of(c, g.id, dim); };
}

PartNamer whole_tensor_parts() {
  return [](const TensorGeometry&, int64_t) { return "elements"; };
}

double element_value(ElementType type, uint32_t bits) { return decode_code(type, bits); }

Report compare_identical(const PartNamer& parts, const TensorSet& first, const TensorSet& second,
                         MismatchClass as, char run, size_t max_listed) {
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
      // An aliased input is an output's front: its elements are checked there.
      if (g.buffer != static_cast<int>(index) || (g.role == TensorRole::kInput && output_buffer)) continue;
      const int codes = codes_per_element(g.type);
      for (int64_t t = 0; t < g.rows; ++t) {
        for (int64_t h = 0; h < g.cols; ++h) {
          for (int64_t d = 0; d < g.width; ++d) {
            const uint32_t a = load_bits(first.element(g, t, h, d), g.type);
            const uint32_t b = load_bits(second.element(g, t, h, d), g.type);
            if (a == b) continue;
            for (int k = 0; k < codes; ++k) {
              const uint32_t ak = code_of(g.type, a, k), bk = code_of(g.type, b, k);
              if (ak == bk) continue;
              Mismatch m;
              m.signature = Signature{g.name, parts(g, d * codes + k), as};
              m.run = run;
              m.token = t, m.head = h, m.dim = d * codes + k;
              m.type = g.type;
              m.expected_bits = ak, m.got_bits = bk;
              report.add(m);
            }
          }
        }
      }
    }
  }
  return report;
}

Report compare_identical(const Case& c, const TensorSet& first, const TensorSet& second, MismatchClass as,
                         char run, size_t max_listed) {
  return compare_identical(fused_q_parts(c), first, second, as, run, max_listed);
}

Report compare_runs(const PartNamer& parts, const TensorSet& expected, const TensorSet& got_a,
                    const TensorSet& got_b, size_t max_listed) {
  return Comparer(parts, expected, got_a, got_b, max_listed).run();
}

Report compare_runs(const Case& c, const TensorSet& expected, const TensorSet& got_a,
                    const TensorSet& got_b, size_t max_listed) {
  return compare_runs(fused_q_parts(c), expected, got_a, got_b, max_listed);
}

}  // namespace qcheck
