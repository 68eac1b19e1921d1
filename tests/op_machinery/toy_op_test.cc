// The machinery the next ops need, proven on the toy op (toy_op.h): row masks
// (slot -1 writes nothing and every other row keeps its poison), typed views
// at byte offsets into one cache buffer, the element types int32, ue8m0, e2m1
// pairs and e4m3fnuz, and sums in a named order. Each planted bug must show
// as the mismatch class it is; the correct kernel must pass in every format.
#include <cstring>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "ops/registry/registry.h"
#include "tests/op_machinery/toy_op.h"

namespace qcheck::toy {
namespace {

struct Runs {
  TensorSet expected, a, b;
};

Runs run(const ToyCase& c, ToyBug bug) {
  Runs r{build(c, Poison::kA), build(c, Poison::kA), build(c, Poison::kB)};
  run_oracle(c, r.expected);
  run_kernel(c, bug, r.a);
  run_kernel(c, bug, r.b);
  return r;
}

Report compare(const ToyCase& c, ToyBug bug) {
  const Runs r = run(c, bug);
  return compare_runs(parts(c), r.expected, r.a, r.b);
}

int64_t count(const Report& report, const std::string& tensor, const std::string& part, MismatchClass kind) {
  const auto it = report.counts.find(Signature{tensor, part, kind});
  return it == report.counts.end() ? 0 : it->second;
}

std::set<std::string> tensors_of(const Report& report) {
  std::set<std::string> names;
  for (const auto& [signature, n] : report.counts) names.insert(signature.tensor);
  return names;
}

ToyCase mxfp4() {
  ToyCase c;
  c.format = ToyFormat::kMxfp4;
  return c;
}

void set_x(TensorSet& set, int64_t t, const std::vector<float>& values) {
  const TensorGeometry& x = set.plan.tensors[kX];
  for (int64_t i = 0; i < x.width; ++i) {
    const float v = i < static_cast<int64_t>(values.size()) ? values[i] : 0.0f;
    uint32_t f;
    std::memcpy(&f, &v, 4);
    const uint16_t bits = static_cast<uint16_t>(f >> 16);  // the values below are exact in bf16
    std::memcpy(set.element(x, t, 0, i), &bits, 2);
  }
}

TEST(ToyOp, TheCorrectKernelPassesInEveryFormatScaleStoreAndOrder) {
  for (const ToyFormat format : {ToyFormat::kE4m3, ToyFormat::kE4m3fnuz, ToyFormat::kMxfp4}) {
    for (const ToyScaleStore store : {ToyScaleStore::kF32, ToyScaleStore::kInt32Code}) {
      for (const ReductionOrder order : {ReductionOrder::kSequential, ReductionOrder::kPairwise,
                                         ReductionOrder::kStridedLanes, ReductionOrder::kBlockedLanes}) {
        for (uint64_t seed = 1; seed <= 3; ++seed) {
          ToyCase c;
          c.format = format, c.scale_store = store, c.reduction.order = order, c.seed = seed;
          c.dim = 32 * static_cast<int64_t>(seed + 1);
          const Report report = compare(c, ToyBug::kNone);
          EXPECT_TRUE(report.passed()) << name_of(order) << " seed " << seed << "\n" << report_text(report);
          EXPECT_GT(report.bytes_compared, 0u);
        }
      }
    }
  }
}

TEST(ToyOp, UnmappedRowsKeepTheirPoisonInBothRuns) {
  const ToyCase c;
  const Runs r = run(c, ToyBug::kNone);
  const TensorGeometry& codes = r.b.plan.tensors[kCacheCodes];
  int64_t unmapped = 0;
  for (int64_t row = 0; row < c.slots; ++row) {
    if (r.b.row_written(codes, row)) continue;
    ++unmapped;
    EXPECT_EQ(*r.a.element(codes, row, 0, 0), poison_byte(Poison::kA));
    EXPECT_EQ(*r.b.element(codes, row, 0, 0), poison_byte(Poison::kB));
  }
  EXPECT_EQ(unmapped, c.slots - 4);  // tokens 0, 2, 3 and 5 of 6 have a slot
}

TEST(ToyOp, AWriteToARowNoTokenMapsIsWrittenWhenDisabled) {
  for (const ToyFormat format : {ToyFormat::kE4m3, ToyFormat::kMxfp4}) {
    ToyCase c;
    c.format = format;
    const Report report = compare(c, ToyBug::kWritesUnmappedRow);
    const char* codes_part = format == ToyFormat::kMxfp4 ? "block 0" : "codes";
    EXPECT_GT(count(report, "cache codes", codes_part, MismatchClass::kWrittenWhenDisabled), 0) << report_text(report);
    EXPECT_GT(count(report, "cache scales", "scales", MismatchClass::kWrittenWhenDisabled), 0);
    EXPECT_EQ(tensors_of(report), (std::set<std::string>{"cache codes", "cache scales"}));
  }
}

TEST(ToyOp, SlotMinusOneUsedAsARowOverwritesTheBytesBeforeTheCache) {
  const Report report = compare(ToyCase{}, ToyBug::kNegativeSlotWrites);
  EXPECT_GT(count(report, "cache", "sentinel before", MismatchClass::kSentinelOverwritten), 0) << report_text(report);
  EXPECT_EQ(report.primary_signature().mismatch, MismatchClass::kSentinelOverwritten);
}

TEST(ToyOp, SwappedNibblesAreReportedCodeByCode) {
  const ToyCase c = mxfp4();
  const Report report = compare(c, ToyBug::kSwapsNibbles);
  ASSERT_FALSE(report.passed());
  EXPECT_EQ(tensors_of(report), std::set<std::string>{"cache codes"});
  for (const Mismatch& m : report.first) {
    EXPECT_EQ(m.type, ElementType::kE2m1x2);
    EXPECT_LT(m.expected_bits, 16u);
    EXPECT_LT(m.got_bits, 16u);
    EXPECT_LT(m.dim, c.dim);  // dims count codes, two per byte
  }
  // The same pair seen from both codes: code 2k got code 2k+1's value.
  const Runs r = run(c, ToyBug::kSwapsNibbles);
  const Mismatch& first = report.first.front();
  const uint8_t byte = *r.expected.element(r.expected.plan.tensors[kCacheCodes], first.token, 0, first.dim / 2);
  EXPECT_EQ(first.got_bits, first.dim % 2 == 0 ? byte >> 4 : byte & 0xFu);
}

TEST(ToyOp, AScaleWrittenIntoThePaddingLeavesTheScaleUnwritten) {
  const Report report = compare(ToyCase{}, ToyBug::kScaleInPadding);
  EXPECT_GT(count(report, "cache", "padding", MismatchClass::kPaddingOverwritten), 0) << report_text(report);
  EXPECT_GT(count(report, "cache scales", "scales", MismatchClass::kUnwritten), 0);
  EXPECT_EQ(count(report, "cache codes", "codes", MismatchClass::kUnwritten), 0);
}

TEST(ToyOp, OcpBytesOnTheFnuzPathAreWrongCodes) {
  ToyCase c;
  c.format = ToyFormat::kE4m3fnuz;
  const Report report = compare(c, ToyBug::kOcpCodesOnFnuz);
  ASSERT_FALSE(report.passed());
  EXPECT_EQ(tensors_of(report), std::set<std::string>{"cache codes"});
  // OCP's bias is 7, FNUZ's 8: the same value's OCP byte reads as half of it
  // in FNUZ, so whole rows are off by a factor 2.
  EXPECT_GT(count(report, "cache codes", "codes", MismatchClass::kRowPowerOfTwo), 0) << report_text(report);
}

TEST(ToyOp, ASumInTheWrongOrderChangesTheRms) {
  ToyCase c;  // strided lanes over 32, as a CUDA warp reduces
  Runs r = run(c, ToyBug::kNone);
  // Token 0: 4096 and 63 ones. In order, each 1 vanishes against 2^24 (a tie
  // to even); over 32 lanes the ones add up first: 2^24 + 62.
  std::vector<float> x(64, 1.0f);
  x[0] = 4096.0f;
  for (TensorSet* set : {&r.expected, &r.a, &r.b}) set_x(*set, 0, x);
  run_oracle(c, r.expected);
  const ToyBug bugs[] = {ToyBug::kNone, ToyBug::kSequentialSum};
  for (const ToyBug bug : bugs) {
    for (TensorSet* set : {&r.a, &r.b}) {
      fill_poison(*set, set->poison);
      run_kernel(c, bug, *set);
    }
    const Report report = compare_runs(parts(c), r.expected, r.a, r.b);
    if (bug == ToyBug::kNone) {
      EXPECT_TRUE(report.passed()) << report_text(report);
      continue;
    }
    ASSERT_EQ(report.total, 1) << report_text(report);
    const Mismatch& m = report.first.front();
    EXPECT_EQ(m.signature.tensor, "rms");
    EXPECT_EQ(m.token, 0);
    EXPECT_EQ(m.expected_bits, 0x4400000Fu);  // sqrt((2^24 + 62) / 64) in f32 (numpy)
    EXPECT_EQ(m.got_bits, 0x44000000u);       // sqrt(2^24 / 64) = 512
  }
}

TEST(ToyOp, ASkippedTokenLeavesItsRmsAndItsCacheRowUnwritten) {
  const Report report = compare(ToyCase{}, ToyBug::kSkipsLastToken);
  EXPECT_EQ(count(report, "rms", "rms", MismatchClass::kUnwritten), 1) << report_text(report);
  EXPECT_EQ(count(report, "cache codes", "codes", MismatchClass::kUnwritten), 64);
  EXPECT_EQ(count(report, "cache scales", "scales", MismatchClass::kUnwritten), 1);
}

TEST(ToyOp, KnownAnswersOfTheOracle) {
  // mxfp4, one block: amax 6 -> scale 1 (ue8m0 127); 3 -> code 5, -0.5 -> 0x9,
  // 6 -> 7, 0 -> 0: bytes 0x95, 0x07. Second block amax 12 -> scale 2 (128):
  // 12 / 2 = 6 -> 7, 1 / 2 = 0.5 -> 1: byte 0x17.
  ToyCase c = mxfp4();
  TensorSet set = build(c, Poison::kA);
  std::vector<float> x(64, 0.0f);
  x[0] = 3, x[1] = -0.5f, x[2] = 6, x[32] = 12, x[33] = 1;
  set_x(set, 0, x);
  run_oracle(c, set);
  int64_t slot;
  std::memcpy(&slot, set.element(set.plan.tensors[kSlotMapping], 0, 0, 0), 8);
  ASSERT_GE(slot, 0);
  const TensorGeometry& codes = set.plan.tensors[kCacheCodes];
  const TensorGeometry& scales = set.plan.tensors[kCacheScales];
  EXPECT_EQ(*set.element(codes, slot, 0, 0), 0x95);
  EXPECT_EQ(*set.element(codes, slot, 0, 1), 0x07);
  EXPECT_EQ(*set.element(codes, slot, 0, 2), 0x00);
  EXPECT_EQ(*set.element(codes, slot, 0, 16), 0x17);
  EXPECT_EQ(*set.element(scales, slot, 0, 0), 127);
  EXPECT_EQ(*set.element(scales, slot, 0, 1), 128);
  // The scale view starts right after the codes, in the same row.
  EXPECT_EQ(set.element(scales, slot, 0, 0) - set.element(codes, slot, 0, 0), 32);
  // rms of [3, 4, 0, ...] over 32: sqrtf(25 / 32) = 0x3F624630 (numpy)
  ToyCase e = ToyCase{};
  e.dim = 32;
  TensorSet f = build(e, Poison::kA);
  set_x(f, 2, {3, 4});
  run_oracle(e, f);
  uint32_t rms;
  std::memcpy(&rms, f.element(f.plan.tensors[kRms], 2, 0, 0), 4);
  EXPECT_EQ(rms, 0x3F624630u);
  // e4m3 with the scale as an int32 code: amax 4 -> 4 / 448 -> 2^-6 (ue8m0 121)
  e.scale_store = ToyScaleStore::kInt32Code;
  TensorSet g = build(e, Poison::kA);
  set_x(g, 0, {4, -1});
  run_oracle(e, g);
  std::memcpy(&slot, g.element(g.plan.tensors[kSlotMapping], 0, 0, 0), 8);
  int32_t code;
  std::memcpy(&code, g.element(g.plan.tensors[kCacheScales], slot, 0, 0), 4);
  EXPECT_EQ(code, 121);
  EXPECT_EQ(*g.element(g.plan.tensors[kCacheCodes], slot, 0, 0), 0x78);  // 256 = 2^8: e4m3 0 1111 000
  EXPECT_EQ(*g.element(g.plan.tensors[kCacheCodes], slot, 0, 1), 0xE8);  // -64 = -2^6: 1 1101 000
}

TEST(ElementBits, TheNewTypesReadAsTheirFormatsSay) {
  EXPECT_EQ(value_text(ElementType::kE4m3fnuz, 0x80), "NaN");
  EXPECT_EQ(value_text(ElementType::kE4m3fnuz, 0x7F), "240");
  EXPECT_EQ(value_text(ElementType::kE4m3fnuz, 0x40), "1");  // bias 8
  EXPECT_EQ(value_text(ElementType::kUe8m0, 127), "1");
  EXPECT_EQ(value_text(ElementType::kUe8m0, 0), "5.87747175e-39");  // 2^-127
  EXPECT_EQ(value_text(ElementType::kUe8m0, 0xFF), "NaN");
  EXPECT_EQ(value_text(ElementType::kE2m1x2, 0xF), "-6");
  EXPECT_EQ(value_text(ElementType::kE2m1x2, 0x3), "1.5");
  EXPECT_EQ(value_text(ElementType::kInt32, 0xFFFFFFFFu), "-1");
  EXPECT_EQ(code_distance(ElementType::kE4m3fnuz, 0x01, 0x81), 2);  // +min subnormal to -min subnormal
  EXPECT_EQ(code_distance(ElementType::kE4m3fnuz, 0x80, 0x00), -1);
  EXPECT_EQ(code_distance(ElementType::kE2m1x2, 0x8, 0x0), 0);  // -0 and +0
  EXPECT_EQ(code_distance(ElementType::kUe8m0, 126, 129), 3);
  EXPECT_EQ(code_distance(ElementType::kInt32, 0xFFFFFFFFu, 1), 2);
  EXPECT_EQ(element_bytes(ElementType::kE2m1x2), 1);
  EXPECT_EQ(element_bytes(ElementType::kInt32), 4);
}

TEST(ToyOp, ListsItsVocabularyButIsNotAUserOp) {
  const std::string json = vocabulary_json(toy_op());
  for (const char* needle : {"\"toy_scatter_quant\"", "\"e2m1x2\"", "\"e4m3fnuz\"", "\"ue8m0\"", "\"int32\"",
                             "\"strided-lanes\""}) {
    EXPECT_NE(json.find(needle), std::string::npos) << needle << " in " << json;
  }
  EXPECT_EQ(find_op("toy_scatter_quant"), nullptr);
}

}  // namespace
}  // namespace qcheck::toy
