// The JSON form every op shares (core/op/any_case_json.h), read and written
// from the op's field metadata alone, held to fused_q's own form
// (fuzz/case/case_json.h): the same text for every case, the same case for
// every text it accepts, the same one-line refusal for every text it
// refuses; with "op" and "schema" named, the same case back.
#include <string>
#include <vector>

#include "core/op/any_case_json.h"
#include "fuzz/case/case_json.h"
#include "gtest/gtest.h"
#include "ops/fused_q/op.h"
#include "tests/harness/case_samples.h"

namespace qcheck {
namespace {

std::string generic_read(const std::string& text, AnyCase* out) {
  return any_case_from_json(text, {&fused_q_op()}, fused_q_op(), out);  // (as fused_q's own reader: one op)
}

TEST(AnyCaseJson, EveryCaseIsWrittenAsFusedQWritesItAndReadBack) {
  int with_edits = 0;
  for (const Case& c : test::round_trip_cases()) {
    const std::string text = case_to_json(c);
    ASSERT_EQ(any_case_to_json(to_any_case(c), false), text);
    AnyCase any;
    ASSERT_EQ(generic_read(text, &any), "") << text;
    Case back;
    ASSERT_EQ(from_any_case(any, &back), "");
    EXPECT_EQ(back, c) << text;
    // Named: "op" and "schema" first, the same case back.
    const std::string named = any_case_to_json(to_any_case(c), true);
    ASSERT_EQ(named.rfind("{\n  \"op\": \"fused_q\",\n  \"schema\": 1,\n", 0), 0u) << named;
    AnyCase again;
    ASSERT_EQ(generic_read(named, &again), "");
    EXPECT_TRUE(again == any);
    Case typed;
    ASSERT_EQ(case_from_json(named, &typed), "");  // fused_q's reader takes the named form too
    EXPECT_EQ(typed, c);
    with_edits += !c.edits.empty();
  }
  EXPECT_GT(with_edits, 0);
}

// A case's required fields, then `extra`.
std::string with(const std::string& extra) {
  const std::string required =
      "\"num_tokens\": 3, \"mqa_heads\": 2, \"indexer_heads\": 2, \"index_dim\": 32, \"rope_dim\": 8, "
      "\"nope_dim\": 16, \"query_path\": \"bf16-packed\"";
  return "{" + required + (extra.empty() ? "" : ", " + extra) + "}";
}

// Texts both readers take (defaults, numbers for bits, derived scales) and
// texts both refuse, each with the same line.
TEST(AnyCaseJson, BothReadersTakeAndRefuseTheSameTexts) {
  const std::vector<std::string> taken = {
      with(""),
      "{\"index_dim\": 64, \"indexer_heads\": 8, \"num_tokens\": 5, \"mqa_heads\": 1, \"rope_dim\": 64, "
      "\"nope_dim\": 8, \"query_path\": \"fp8-packed\"}",  // softmax and head scales follow D and NI
      with("\"softmax_scale\": 0.5"),
      with("\"q_scale\": \"0x3f8\""),
      with("\"q_scale\": 1.5, \"seed\": 18446744073709551615"),
      with("\"op\": \"fused_q\", \"schema\": 1, \"has_indexer\": false"),
      with("\"edits\": []"),
      with("\"edits\": [{\"tensor\": \"positions\", \"bits\": 7}]"),
      with("\"edits\": [{\"tensor\": \"q_pe\", \"row\": 1, \"rows\": 2, \"head\": -1, \"element\": 3, "
           "\"elements\": 4, \"bits\": \"0xFFFF\"}]"),
  };
  const std::vector<std::string> refused = {
      "",
      "[1, 2]",
      "{}",
      "{\"num_tokens\": 3}",
      "{\"num_tokens\": \"5\"}",
      "{\"num_tokens\": 9223372036854775808}",
      "{\"num_tokens\": 1.5}",
      "{\"num_tokens\": 3, \"mqa_heads\": 2, \"indexer_heads\": 2, \"index_dim\": 32, \"rope_dim\": 8, "
      "\"nope_dim\": 16, \"query_path\": \"bf16\"}",
      "{\"num_tokens\": 3, \"mqa_heads\": 2, \"indexer_heads\": 2, \"index_dim\": 32, \"rope_dim\": 8, "
      "\"nope_dim\": 16, \"query_path\": 3}",
      with("\"has_indexer\": 1"),
      with("\"q_scale\": \"3f800000\""),
      with("\"q_scale\": \"0x123456789\""),
      with("\"q_scale\": true"),
      with("\"seed\": -1"),
      with("\"profile\": 5"),
      with("\"op\": \"index_k\""),
      with("\"op\": 1"),
      with("\"schema\": 2"),
      with("\"schema\": \"1\""),
      with("\"tokens\": 5"),
      with("\"\": \"qcheck\""),  // the empty key is a key, and names no field
      with("\"edits\": [{\"tensor\": \"q_pe\", \"\": 1, \"bits\": 1}]"),
      with("\"edits\": {}"),
      with("\"edits\": [5]"),
      with("\"edits\": [{\"bits\": 1}]"),
      with("\"edits\": [{\"tensor\": \"query_out\", \"bits\": 1}]"),
      with("\"edits\": [{\"tensor\": \"q_pe\"}]"),
      with("\"edits\": [{\"tensor\": \"q_pe\", \"bits\": -1}]"),
      with("\"edits\": [{\"tensor\": \"q_pe\", \"bits\": \"0x\"}]"),
      with("\"edits\": [{\"tensor\": \"q_pe\", \"row\": \"1\", \"bits\": 1}]"),
      with("\"edits\": [{\"tensor\": \"q_pe\", \"colour\": 1, \"bits\": 1}]"),
      with("\"has_indexer\": 1, \"q_scale\": true"),  // the first field in canonical order is named
  };
  for (const std::string& text : taken) {
    Case typed;
    ASSERT_EQ(case_from_json(text, &typed), "") << text;
    AnyCase any;
    ASSERT_EQ(generic_read(text, &any), "") << text;
    Case back;
    ASSERT_EQ(from_any_case(any, &back), "");
    EXPECT_EQ(back, typed) << text;
  }
  for (const std::string& text : refused) {
    Case typed;
    const std::string typed_error = case_from_json(text, &typed);
    AnyCase any;
    EXPECT_NE(typed_error, "") << text;
    EXPECT_EQ(generic_read(text, &any), typed_error) << text;
  }
}
}  // namespace
}  // namespace qcheck
