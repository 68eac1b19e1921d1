// The JSON case form: round trips, hand edits, and refusals naming the field.
#include "fuzz/case/case_json.h"

#include <gtest/gtest.h>

#include "fuzz/case/case_file.h"
#include "tests/harness/case_samples.h"

namespace qcheck {
namespace {

std::string json_error(const std::string& text) {
  Case c;
  return case_from_json(text, &c);
}

TEST(CaseJson, EverySampleCaseRoundTrips) {
  for (uint64_t i = 0; i < 500; ++i) {
    const Case c = test::sample_case(i);
    Case back;
    ASSERT_EQ(case_from_json(case_to_json(c), &back), "") << "sample " << i;
    ASSERT_TRUE(back == c) << "sample " << i << "\n" << case_to_json(c);
  }
}

TEST(CaseJson, WritesEnumsByNameAndScalesAsHexBits) {
  Case c = test::small_case();
  c.query_path = QueryPath::kFp8Packed;
  c.q_pe_layout = Layout::kWideRowView;
  const std::string text = case_to_json(c);
  EXPECT_NE(text.find("\"query_path\": \"fp8-packed\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"q_pe_layout\": \"wide-row-view\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"q_scale\": \"0x3F800000\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"profile\": \"qcheck\""), std::string::npos) << text;
}

constexpr const char* kMinimal =
    R"({"num_tokens": 5, "mqa_heads": 4, "indexer_heads": 8, "index_dim": 64,
        "rope_dim": 32, "nope_dim": 16, "query_path": "bf16-separate"})";

TEST(CaseJson, MissingOptionalFieldsTakeDefaults) {
  Case c;
  ASSERT_EQ(case_from_json(kMinimal, &c), "");
  EXPECT_EQ(c.num_tokens, 5);
  EXPECT_EQ(c.query_path, QueryPath::kBf16Separate);
  EXPECT_TRUE(c.has_indexer);
  EXPECT_EQ(c.cache_rows, Case{}.cache_rows);
  EXPECT_EQ(c.profile, "qcheck");
  EXPECT_EQ(c.q_scale_bits, 0x3F800000u);
  // The default scales follow this case's D and NI: RN(64^-0.5) = 0.125 and
  // RN(8^-0.5) = 0x3EB504F3.
  EXPECT_EQ(c.softmax_scale_bits, 0x3E000000u);
  EXPECT_EQ(c.head_scale_bits, 0x3EB504F3u);
  EXPECT_EQ(validate_case(c), "");
}

TEST(CaseJson, HandEditsAreRead) {
  Case c;
  const std::string edited =
      R"({"num_tokens": 3, "mqa_heads": 1, "indexer_heads": 1, "index_dim": 16, "rope_dim": 2,
          "nope_dim": 8, "query_path": "fp8-packed", "has_indexer": false, "q_scale": 0.5,
          "softmax_scale": "0x3f800000", "seed": 18446744073709551615, "values": "scale-band",
          "ql_nope_layout": "head-major", "alias": "none", "profile": "vllm-triton"})";
  ASSERT_EQ(case_from_json(edited, &c), "");
  EXPECT_FALSE(c.has_indexer);
  EXPECT_EQ(c.q_scale_bits, 0x3F000000u);  // a number is rounded to fp32
  EXPECT_EQ(c.softmax_scale_bits, 0x3F800000u);
  EXPECT_EQ(c.seed, 18446744073709551615ull);
  EXPECT_EQ(c.values, ValueRecipe::kScaleBand);
  EXPECT_EQ(c.ql_nope_layout, Layout::kHeadMajor);
  EXPECT_EQ(c.profile, "vllm-triton");
}

TEST(CaseJson, RefusalsNameTheField) {
  EXPECT_EQ(json_error(R"({"mqa_heads": 1})"), "missing field num_tokens");
  EXPECT_EQ(json_error(std::string(kMinimal).replace(1, 0, R"("colour": 1, )")),
            "unknown field \"colour\"");
  EXPECT_NE(json_error(std::string(kMinimal).replace(1, 0, R"("alias": "sideways", )"))
                .find("field alias = \"sideways\" is not one of none, exact-front"),
            std::string::npos);
  EXPECT_NE(json_error(std::string(kMinimal).replace(1, 0, R"("row_padding": 1.5, )"))
                .find("field row_padding must be an integer"),
            std::string::npos);
  EXPECT_NE(json_error(std::string(kMinimal).replace(1, 0, R"("q_scale": "0xZZ", )"))
                .find("field q_scale"),
            std::string::npos);
  EXPECT_NE(json_error(std::string(kMinimal).replace(1, 0, R"("seed": -1, )")).find("field seed"),
            std::string::npos);
  EXPECT_NE(json_error(std::string(kMinimal).replace(1, 0, R"("has_indexer": 1, )"))
                .find("field has_indexer must be true or false"),
            std::string::npos);
  EXPECT_NE(json_error("{").find("not valid JSON"), std::string::npos);
  EXPECT_EQ(json_error("[1, 2]"), "a JSON case must be an object ({...})");
}

TEST(CaseFile, DetectsTheFormFromTheContent) {
  const Case c = test::sample_case(3);
  const std::string dir = ::testing::TempDir();
  for (CaseForm form : {CaseForm::kBinary, CaseForm::kJson}) {
    const std::string path =
        dir + (form == CaseForm::kJson ? "/qcheck_case.json" : "/qcheck_case.bin");
    ASSERT_EQ(save_case_file(path, c, form), "");
    Case back;
    CaseForm seen = form == CaseForm::kJson ? CaseForm::kBinary : CaseForm::kJson;
    ASSERT_EQ(load_case_file(path, &back, &seen), "");
    EXPECT_EQ(seen, form);
    EXPECT_TRUE(back == c);
  }
  Case back;
  const std::string missing = load_case_file(dir + "/no_such_case.bin", &back);
  EXPECT_NE(missing.find("cannot open case file"), std::string::npos) << missing;
  const std::vector<uint8_t> leading_blanks = {' ', '\n', '{', '}'};
  EXPECT_EQ(parse_case_bytes(leading_blanks, &back), "JSON case: missing field num_tokens");
}

}  // namespace
}  // namespace qcheck
