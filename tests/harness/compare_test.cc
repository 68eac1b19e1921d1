// The verdict's classification, proven by planting each fault by hand into
// copies of the expected tensors.
#include "fuzz/verdict/compare.h"

#include <gtest/gtest.h>

#include <cstring>

#include "fuzz/verdict/verdict.h"
#include "numerics/conversions.h"
#include "tests/harness/case_samples.h"

namespace qcheck {
namespace {

// Expected (poison A) and two "backend" runs that are perfect copies of the
// oracle's results on sets poisoned with A and B.
struct Runs {
  Case c;
  TensorSet expected, a, b;

  explicit Runs(const Case& kase) : c(kase) {
    std::string error;
    expected = expected_tensors(c, qcheck_profile(), scalar_row_ops(), Poison::kA, &error);
    EXPECT_EQ(error, "");
    a = expected;
    b = expected_tensors(c, qcheck_profile(), scalar_row_ops(), Poison::kB, &error);
    EXPECT_EQ(error, "");
  }
  Report compare() const { return compare_runs(c, expected, a, b, 50); }
  const TensorGeometry& tensor(TensorId id) const { return *expected.find(id); }
};

Case padded_case() {
  Case c = test::small_case();
  c.query_out_layout = c.index_q_fp8_layout = c.weights_out_layout = Layout::kPaddedRows;
  c.index_q_layout = Layout::kPaddedRows;
  return c;
}

// The single signature of a report with one class of fault.
Signature only_signature(const Report& r) {
  EXPECT_EQ(r.counts.size(), 1u) << report_text(r);
  return r.counts.empty() ? Signature{} : r.counts.begin()->first;
}

void put_bf16(TensorSet& set, const TensorGeometry& g, int64_t t, int64_t h, int64_t d,
              uint16_t v) {
  std::memcpy(set.element(g, t, h, d), &v, 2);
}
uint16_t get_bf16(const TensorSet& set, const TensorGeometry& g, int64_t t, int64_t h, int64_t d) {
  uint16_t v;
  std::memcpy(&v, set.element(g, t, h, d), 2);
  return v;
}

TEST(Compare, PerfectRunsPass) {
  for (const auto& named : test::covering_grid()) {
    Runs runs(named.c);
    const Report r = runs.compare();
    EXPECT_TRUE(r.passed()) << named.name << "\n" << report_text(r);
    EXPECT_GT(r.bytes_compared, 0u);
  }
}

TEST(Compare, LowBitFlipIsOffByOneWithCoordinates) {
  Runs runs(padded_case());
  const TensorGeometry& g = runs.tensor(TensorId::kQueryOut);
  const uint16_t e = get_bf16(runs.expected, g, 4, 2, 17);  // rope tail: d >= L = 16
  for (TensorSet* s : {&runs.a, &runs.b}) put_bf16(*s, g, 4, 2, 17, e ^ 1);
  const Report r = runs.compare();
  EXPECT_EQ(r.total, 1);
  const Signature s = only_signature(r);
  EXPECT_EQ(s.text(), "query_out/rope tail/off-by-one");
  ASSERT_EQ(r.first.size(), 1u);
  EXPECT_EQ(r.first[0].token, 4);
  EXPECT_EQ(r.first[0].head, 2);
  EXPECT_EQ(r.first[0].dim, 17);
  EXPECT_EQ(r.first[0].expected_bits, e);
  EXPECT_EQ(r.first[0].got_bits, static_cast<uint32_t>(e ^ 1));
}

TEST(Compare, ValueClassesOfSingleElements) {
  struct Plant {
    uint16_t expected, got;
    const char* signature;
  };
  // Planted into query_out[1, 0, 3] (nope front of the bf16 packed output).
  const Plant plants[] = {
      {0x3F80, 0x4080, "query_out/nope front/wrong-value"},
      {0x7FFF, 0x3F80, "query_out/nope front/expected-nan-got-number"},
      {0x3F80, 0x7FC0, "query_out/nope front/expected-number-got-nan"},
      {0x7FFF, 0xFFC0, "query_out/nope front/nan-bits"},
      {0x0000, 0x8000, "query_out/nope front/sign-of-zero"},
      {0x0000, 0x8001, "query_out/nope front/off-by-one"},  // +0 and the smallest negative
  };
  for (const Plant& p : plants) {
    Runs runs(test::small_case());
    const TensorGeometry& g = runs.tensor(TensorId::kQueryOut);
    put_bf16(runs.expected, g, 1, 0, 3, p.expected);
    for (TensorSet* s : {&runs.a, &runs.b}) put_bf16(*s, g, 1, 0, 3, p.got);
    EXPECT_EQ(only_signature(runs.compare()).text(), p.signature);
  }
}

TEST(Compare, GuardBytesPaddingAndSentinels) {
  Runs runs(padded_case());
  const int index_q_fp8 = runs.tensor(TensorId::kIndexQFp8).buffer;
  GuardedBuffer& buffer = runs.a.buffers[index_q_fp8];
  // The padding after the first head row (D = 32 elements, then 8 padding).
  const size_t padding = GuardedBuffer::kSentinelBytes + 32;
  buffer.data()[padding] ^= 0x40;
  buffer.data()[3] = 0;                                       // front sentinel
  runs.b.buffers[index_q_fp8].data()[buffer.size() - 1] = 0;  // back sentinel, run B
  const Report r = runs.compare();
  EXPECT_EQ(r.total, 3);
  EXPECT_EQ(r.counts.at(Signature{"index_q_fp8", "padding", MismatchClass::kPaddingOverwritten}),
            1);
  EXPECT_EQ(
      r.counts.at(Signature{"index_q_fp8", "sentinel before", MismatchClass::kSentinelOverwritten}),
      1);
  EXPECT_EQ(
      r.counts.at(Signature{"index_q_fp8", "sentinel after", MismatchClass::kSentinelOverwritten}),
      1);
  EXPECT_EQ(r.primary_signature().mismatch, MismatchClass::kSentinelOverwritten);
  for (const Mismatch& m : r.first) {
    if (m.signature.part == "padding") {
      EXPECT_EQ(m.byte_offset, static_cast<int64_t>(padding));
    }
    if (m.signature.part == "sentinel after") {
      EXPECT_EQ(m.run, 'B');
    }
  }
}

TEST(Compare, UnwrittenAndNondeterministicElements) {
  Runs runs(test::small_case());
  const TensorGeometry& g = runs.tensor(TensorId::kIndexQFp8);
  // Left unwritten: each run keeps its own poison.
  *runs.a.element(g, 16, 1, 31) = 0xFF;
  *runs.b.element(g, 16, 1, 31) = 0x5B;
  // Nondeterministic: the two runs wrote different codes.
  *runs.b.element(g, 2, 0, 0) ^= 0x10;
  const Report r = runs.compare();
  EXPECT_EQ(r.counts.at(Signature{"index_q_fp8", "pass-through part", MismatchClass::kUnwritten}),
            1);
  EXPECT_EQ(r.counts.at(Signature{"index_q_fp8", "rope part", MismatchClass::kNondeterministic}),
            1);
  EXPECT_EQ(r.total, 2);
}

TEST(Compare, ModifiedInputIsReported) {
  Runs runs(test::small_case());
  const TensorGeometry& g = runs.tensor(TensorId::kQPe);
  put_bf16(runs.b, g, 0, 1, 2, get_bf16(runs.b, g, 0, 1, 2) ^ 0x8000);
  const Report r = runs.compare();
  EXPECT_EQ(only_signature(r).text(), "q_pe/elements/input-modified");
  EXPECT_EQ(r.first.at(0).run, 'B');
}

// A position's high half changed: the low 32 bits a mismatch holds are
// equal, yet the input was modified (the C API target found this pass).
TEST(Compare, ModifiedHighHalfOfAnInt64InputIsReported) {
  Runs runs(test::small_case());
  const TensorGeometry& g = runs.tensor(TensorId::kPositions);
  runs.a.element(g, 1, 0, 0)[7] ^= 0x40;
  const Report r = runs.compare();
  EXPECT_EQ(only_signature(r).text(), "positions/elements/input-modified");
  EXPECT_EQ(r.first.at(0).run, 'A');
  EXPECT_EQ(r.first.at(0).token, 1);
}

TEST(Compare, WholeRowOffByAPowerOfTwo) {
  Runs runs(test::small_case());
  // Halve every code of one index_q_fp8 row (as a doubled scale would):
  // re-encode half of each decoded value. Elements that fall into the
  // subnormal range round, which the classification allows.
  const TensorGeometry& g = runs.tensor(TensorId::kIndexQFp8);
  for (int64_t d = 0; d < g.width; ++d) {
    const float halved = spec::f32_from_e4m3(*runs.expected.element(g, 5, 1, d)) / 2;
    for (TensorSet* s : {&runs.a, &runs.b}) {
      *s->element(g, 5, 1, d) = spec::e4m3_from_f32(halved, E4m3Overflow::kSatFinite);
    }
  }
  // Double one weight (f32: exact).
  const TensorGeometry& w = runs.tensor(TensorId::kIndexWeightsOut);
  float weight;
  std::memcpy(&weight, runs.expected.element(w, 5, 1, 0), 4);
  weight *= 2;
  for (TensorSet* s : {&runs.a, &runs.b}) std::memcpy(s->element(w, 5, 1, 0), &weight, 4);
  // Double a whole bf16 query_out row, nope front and rope tail (exact).
  const TensorGeometry& q = runs.tensor(TensorId::kQueryOut);
  for (int64_t d = 0; d < q.width; ++d) {
    const float doubled = spec::f32_from_bf16(get_bf16(runs.expected, q, 2, 0, d)) * 2;
    for (TensorSet* s : {&runs.a, &runs.b}) {
      put_bf16(*s, q, 2, 0, d, spec::bf16_from_f32(doubled, Bf16Nan::k7FFF));
    }
  }
  const Report r = runs.compare();
  for (const auto& [signature, count] : r.counts) {
    EXPECT_EQ(signature.mismatch, MismatchClass::kRowPowerOfTwo) << report_text(r);
  }
  EXPECT_EQ(
      r.counts.count(Signature{"index_weights_out", "weights", MismatchClass::kRowPowerOfTwo}), 1u);
  EXPECT_EQ(r.counts.at(Signature{"query_out", "nope front", MismatchClass::kRowPowerOfTwo}),
            runs.c.nope_dim);
  EXPECT_EQ(r.counts.at(Signature{"query_out", "rope tail", MismatchClass::kRowPowerOfTwo}),
            runs.c.rope_dim);
  EXPECT_GT(
      r.counts.at(Signature{"index_q_fp8", "pass-through part", MismatchClass::kRowPowerOfTwo}), 0);
}

TEST(Compare, RowWithOneWrongElementIsNotAPowerOfTwo) {
  Runs runs(test::small_case());
  const TensorGeometry& g = runs.tensor(TensorId::kIndexQFp8);
  for (int64_t d = 0; d < g.width; ++d) {
    const float halved = spec::f32_from_e4m3(*runs.expected.element(g, 5, 1, d)) / 2;
    for (TensorSet* s : {&runs.a, &runs.b})
      *s->element(g, 5, 1, d) = spec::e4m3_from_f32(halved, E4m3Overflow::kSatFinite);
  }
  for (TensorSet* s : {&runs.a, &runs.b}) *s->element(g, 5, 1, 7) = 0x33;  // breaks the pattern
  // The elements the row now gets wrong, counted here from the bytes.
  int64_t wrong = 0;
  for (int64_t d = 0; d < g.width; ++d) wrong += *runs.a.element(g, 5, 1, d) != *runs.expected.element(g, 5, 1, d);
  ASSERT_GT(wrong, 1);

  const Report r = runs.compare();
  // Each wrong element is reported as an element of its own value class,
  // never the row as a power of two, and nothing else is reported.
  int64_t reported = 0;
  for (const auto& [signature, count] : r.counts) {
    EXPECT_EQ(signature.tensor, "index_q_fp8") << report_text(r);
    EXPECT_NE(signature.mismatch, MismatchClass::kRowPowerOfTwo) << report_text(r);
    reported += count;
  }
  EXPECT_EQ(reported, wrong) << report_text(r);
  EXPECT_EQ(r.total, wrong);
  bool listed = false;
  for (const Mismatch& m : r.first) {
    EXPECT_EQ(m.token, 5);
    EXPECT_EQ(m.head, 1);
    if (m.dim == 7) {
      listed = true;
      EXPECT_EQ(m.got_bits, 0x33u);
      EXPECT_EQ(m.expected_bits, *runs.expected.element(g, 5, 1, 7));
    }
  }
  EXPECT_TRUE(listed) << "the element that breaks the pattern is not listed\n" << report_text(r);
}

TEST(Compare, WritesToDisabledIndexerOutputs) {
  Case c = test::small_case();
  c.has_indexer = false;
  Runs runs(c);
  EXPECT_TRUE(runs.compare().passed());
  const TensorGeometry& w = runs.tensor(TensorId::kIndexWeightsOut);
  std::memset(runs.a.element(w, 3, 0, 0), 0, 4);
  const Report r = runs.compare();
  EXPECT_EQ(only_signature(r).text(), "index_weights_out/weights/written-when-disabled");
  EXPECT_EQ(r.first.at(0).expected_bits, 0xFFFFFFFFu);  // poison A
}

// Run B of a disabled output holds poison B where the expected set holds
// poison A, so its check differs from every other buffer's: a write into its
// elements, its view padding or its sentinels must still show.
TEST(Compare, RunBWritesToDisabledIndexerOutputs) {
  Case c = test::small_case();
  c.has_indexer = false;
  c.index_q_fp8_layout = Layout::kPaddedRows;
  c.row_padding = 3;
  const Runs clean(c);
  EXPECT_TRUE(clean.compare().passed());
  const TensorGeometry& q = clean.tensor(TensorId::kIndexQFp8);
  const int64_t element = q.element_offset(2, 1, 3);
  const int64_t padding = q.element_offset(2, q.cols - 1, q.width);  // past the row's last element
  const int64_t back_sentinel = static_cast<int64_t>(clean.expected.buffers[q.buffer].payload_bytes()) + 5;
  const struct {
    int64_t payload_offset;
    const char* signature;
  } writes[] = {{element, "index_q_fp8/rope part/written-when-disabled"},
                {padding, "index_q_fp8/padding/padding-overwritten"},
                {back_sentinel, "index_q_fp8/sentinel after/sentinel-overwritten"}};
  for (const auto& w : writes) {
    Runs runs(c);
    runs.b.buffers[q.buffer].payload()[w.payload_offset] ^= 0x11;
    const Report r = runs.compare();
    EXPECT_EQ(only_signature(r).text(), w.signature);
    ASSERT_FALSE(r.first.empty());
    EXPECT_EQ(r.first[0].run, 'B');
  }
}

TEST(Compare, AliasFrontIsAnOutputNotAnInput) {
  Case c = test::small_case();
  c.alias = AliasMode::kExactFront;
  Runs runs(c);
  EXPECT_TRUE(runs.compare().passed());
  const TensorGeometry& g = runs.tensor(TensorId::kQueryOut);
  for (TensorSet* s : {&runs.a, &runs.b})
    put_bf16(*s, g, 0, 0, 0, get_bf16(*s, g, 0, 0, 0) ^ 0x0100);
  EXPECT_EQ(only_signature(runs.compare()).text(), "query_out/nope front/wrong-value");
}

TEST(Compare, ReportListsAtMostMaxListed) {
  Runs runs(test::small_case());
  const TensorGeometry& g = runs.tensor(TensorId::kIndexQFp8);
  for (int64_t t = 0; t < g.rows; ++t) *runs.a.element(g, t, 0, 20) ^= 0x40;
  const Report r = compare_runs(runs.c, runs.expected, runs.a, runs.b, 5);
  EXPECT_EQ(r.first.size(), 5u);
  EXPECT_EQ(r.total, g.rows);  // nondeterministic: run B is right
  EXPECT_EQ(r.first[0].token, 0);
  EXPECT_EQ(r.first[4].token, 4);
  EXPECT_NE(report_text(r).find("index_q_fp8[t=0, h=0, d=20] pass-through part: nondeterministic"),
            std::string::npos)
      << report_text(r);
}

}  // namespace
}  // namespace qcheck

namespace qcheck {
namespace {

// One run alone (the same set as run A and run B), as the C API's judge
// takes from a caller that ran its kernel once.
TEST(Compare, OneRunAlonePassesWhenRightAndCatchesWhatOneRunCanShow) {
  for (const auto& named : test::covering_grid()) {
    Runs runs(named.c);
    const Report r = compare_runs(runs.c, runs.expected, runs.a, runs.a, 50);
    EXPECT_TRUE(r.passed()) << named.name << "\n" << report_text(r);
  }
  Runs runs(test::small_case());
  const TensorGeometry& q = runs.tensor(TensorId::kQueryOut);
  put_bf16(runs.a, q, 16, 2, 0, 0xFFFF);  // the poison: never written
  runs.a.buffers[q.buffer].data()[runs.a.buffers[q.buffer].size() - 1] ^= 0x01;  // the back sentinel
  const Report r = compare_runs(runs.c, runs.expected, runs.a, runs.a, 50);
  ASSERT_EQ(r.counts.size(), 2u) << report_text(r);
  EXPECT_EQ(r.counts.at({"query_out", "nope front", MismatchClass::kUnwritten}), 1);
  EXPECT_EQ(r.counts.at({"query_out", "sentinel after", MismatchClass::kSentinelOverwritten}), 1)
      << "a guard byte is counted once, not once per run";
}

}  // namespace
}  // namespace qcheck
