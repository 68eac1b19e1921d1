// The case form every op shares (core/op/any_case.h, binary version 3) and
// fused_q's way into it and back (ops/fused_q/op.h): every case survives
// typed -> generic -> version 3 bytes -> both decoders -> typed; fused_q
// still writes versions 1 and 2; every malformed header or field is refused
// naming what is wrong.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "core/op/any_bins.h"
#include "core/op/any_case.h"
#include "fuzz/case/case_binary.h"
#include "fuzz/case/tensor_plan.h"
#include "gtest/gtest.h"
#include "ops/fused_q/op.h"
#include "ops/registry/registry.h"
#include "tests/harness/case_samples.h"

namespace qcheck {
namespace {

std::string decode_any(const std::vector<uint8_t>& bytes, AnyCase* out) {
  return decode_any_case(bytes.data(), bytes.size(), all_ops(), out);
}

TEST(AnyCase, EveryCaseSurvivesVersionThreeThroughBothDecoders) {
  int with_edits = 0;
  for (const Case& c : test::round_trip_cases()) {
    const AnyCase any = to_any_case(c);
    const std::vector<uint8_t> v3 = encode_any_case(any);
    ASSERT_EQ(v3[4], 3);
    AnyCase generic;
    ASSERT_EQ(decode_any(v3, &generic), "");
    EXPECT_TRUE(generic == any);
    EXPECT_EQ(encode_any_case(generic), v3);  // strict: the same bytes again
    Case back;
    ASSERT_EQ(from_any_case(generic, &back), "");
    EXPECT_EQ(back, c);
    Case typed;
    ASSERT_EQ(decode_case(v3, &typed), "");  // fused_q's own decoder reads version 3 too
    EXPECT_EQ(typed, c);
    // fused_q keeps writing versions 1 and 2: its files and digests stay.
    EXPECT_EQ(encode_case(typed)[4], c.edits.empty() ? 1 : 2);
    with_edits += !c.edits.empty();
  }
  EXPECT_GT(with_edits, 0);
}

TEST(AnyCase, TheHeaderNamesTheOpAndItsSchema) {
  const std::vector<uint8_t> v3 = encode_any_case(to_any_case(Case{}));
  const uint8_t head[] = {'Q', 'C', 'K', 'C', 3, 0, 7, 'f', 'u', 's', 'e', 'd', '_', 'q', 1, 0};
  ASSERT_GT(v3.size(), sizeof head);
  EXPECT_EQ(std::memcmp(v3.data(), head, sizeof head), 0);
  // After the header, the fields as version 1 writes them, then an empty edit count.
  const std::vector<uint8_t> v1 = encode_case(Case{});
  EXPECT_EQ(v3.size(), sizeof head + (v1.size() - 6) + 2);
  EXPECT_EQ(std::memcmp(v3.data() + sizeof head, v1.data() + 6, v1.size() - 6), 0);
  std::string name;
  EXPECT_EQ(any_case_op_name(v3.data(), v3.size(), &name), "");
  EXPECT_EQ(name, "fused_q");
}

// The version-3 bytes of the default case with `edit` applied to them.
std::vector<uint8_t> bytes_with(void (*edit)(std::vector<uint8_t>&)) {
  std::vector<uint8_t> v3 = encode_any_case(to_any_case(Case{}));
  edit(v3);
  return v3;
}

TEST(AnyCase, MalformedFilesAreRefusedNamingWhatIsWrong) {
  struct Bad {
    void (*edit)(std::vector<uint8_t>&);
    const char* generic;  // a piece of decode_any_case's message
    const char* typed;    // a piece of decode_case's
  };
  const Bad bad[] = {
      {[](std::vector<uint8_t>& b) { b[7] = 'F'; }, "op name byte 0 = 0x46 is not one of [a-z0-9_]",
       "op name byte 0"},
      {[](std::vector<uint8_t>& b) { b[7] = 'g'; }, "op = \"gused_q\" is not an op of this build (fused_q, fused_k)",
       "op = \"gused_q\": this reads fused_q cases"},
      {[](std::vector<uint8_t>& b) { b[6] = 0; }, "op name length = 0 is outside [1, 32]", "op name length = 0"},
      {[](std::vector<uint8_t>& b) { b[14] = 2; }, "schema = 2 of op fused_q is not supported (this build reads schema 1)",
       "schema = 2 of op fused_q"},
      {[](std::vector<uint8_t>& b) { b.push_back(0); }, "1 trailing bytes", "1 trailing bytes"},
      {[](std::vector<uint8_t>& b) { b.resize(b.size() - 1); }, "truncated: edits count", "truncated"},
      {[](std::vector<uint8_t>& b) { b[16 + 6 * 8] = 9; }, "query_path = 9 is outside [0, ", "query_path"},
      {[](std::vector<uint8_t>& b) { b[16 + 6 * 8 + 1] = 2; }, "has_indexer = 2 is not a boolean", "has_indexer"},
      {[](std::vector<uint8_t>& b) { b[4] = 4; }, "version = 4 is not 3", "version = 4 is not supported"},
  };
  for (const Bad& b : bad) {
    const std::vector<uint8_t> bytes = bytes_with(b.edit);
    AnyCase any;
    const std::string generic = decode_any(bytes, &any);
    EXPECT_NE(generic.find(b.generic), std::string::npos) << generic;
    Case typed;
    const std::string error = decode_case(bytes, &typed);
    EXPECT_NE(error.find(b.typed), std::string::npos) << error;
  }
}

TEST(AnyCase, AnEditOutsideTheTensorTableIsRefused) {
  Case c;
  c.edits = {ValueEdit{}};
  std::vector<uint8_t> v3 = encode_any_case(to_any_case(c));
  const size_t tensor_at = v3.size() - (1 + 5 * 8 + 8);  // the last edit's tensor byte: 1 + 5 int64 + bits
  v3[tensor_at] = 10;  // fused_q's table has 10 tensors
  AnyCase any;
  EXPECT_NE(decode_any(v3, &any).find("edits[0].tensor = 10 is outside the op's tensor table [0, 9]"),
            std::string::npos);
  v3[tensor_at] = 7;  // query_out: in the table, but not an input an edit may set
  EXPECT_EQ(decode_any(v3, &any), "");
  Case typed;
  EXPECT_NE(decode_case(v3, &typed).find("is not an input"), std::string::npos);
}

TEST(AnyCase, TheTensorTableIsInTensorIdsOrder) {
  const std::vector<TensorMeta>& tensors = fused_q_op().vocabulary().tensors;
  ASSERT_EQ(tensors.size(), 10u);
  for (size_t i = 0; i < tensors.size(); ++i) EXPECT_EQ(tensors[i].name, name_of(static_cast<TensorId>(i))) << i;
}

// The bins any op's case reaches from its fields alone (core/op/any_bins.h),
// on fused_q's fields: the names are written out here, not derived.
TEST(AnyCaseBins, EachFieldGivesItsClassAndTheSeedNone) {
  Case c;
  c.num_tokens = 17;
  c.has_indexer = false;
  c.query_path = QueryPath::kFp8Packed;
  AnyCase any = to_any_case(c);
  const std::vector<std::string> bins = any_case_bins(any);
  const auto has = [&](const std::string& name) { return std::find(bins.begin(), bins.end(), name) != bins.end(); };
  EXPECT_TRUE(has("num_tokens=16..31"));
  EXPECT_TRUE(has("has_indexer=false"));
  EXPECT_TRUE(has("query_path=fp8-packed"));
  EXPECT_TRUE(has("q_scale:normal"));
  for (const std::string& b : bins) EXPECT_NE(b.rfind("seed", 0), 0u) << b;  // a seed changes values only
  const auto bin_of = [&](const char* field, uint64_t number) {
    const std::vector<FieldMeta>& fields = any.op->vocabulary().fields;
    AnyCase changed = any;
    for (size_t i = 0; i < fields.size(); ++i) {
      if (fields[i].name == field) changed.fields[i].number = number;
    }
    for (const std::string& b : any_case_bins(changed)) {
      if (b.rfind(field, 0) == 0 && (b[std::strlen(field)] == '=' || b[std::strlen(field)] == ':' ||
                                     b[std::strlen(field)] == '<')) {
        return b;
      }
    }
    return std::string();
  };
  EXPECT_EQ(bin_of("num_tokens", 0), "num_tokens=0");
  EXPECT_EQ(bin_of("num_tokens", 1), "num_tokens=1");
  EXPECT_EQ(bin_of("num_tokens", 3), "num_tokens=2..3");
  EXPECT_EQ(bin_of("num_tokens", 65536), "num_tokens=65536..131071");
  EXPECT_EQ(bin_of("num_tokens", static_cast<uint64_t>(-5)), "num_tokens<0");
  EXPECT_EQ(bin_of("q_scale", 0x80000000u), "q_scale:zero");
  EXPECT_EQ(bin_of("q_scale", 0x00000001u), "q_scale:subnormal");
  EXPECT_EQ(bin_of("q_scale", 0xFF800000u), "q_scale:inf");
  EXPECT_EQ(bin_of("q_scale", 0x7FC00000u), "q_scale:nan");
}

}  // namespace
}  // namespace qcheck
