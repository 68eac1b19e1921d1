// Value edits (Case::edits): written over the generated inputs, kept by both
// encodings, checked by validate_case with messages naming the edit.
#include <gtest/gtest.h>

#include <cstring>

#include "fuzz/buffers/tensors.h"
#include "fuzz/case/case_binary.h"
#include "fuzz/case/case_json.h"
#include "tests/harness/case_samples.h"

namespace qcheck {
namespace {

Case edited_case() {
  Case c = test::small_case();  // T 17, H 3, NI 2, D 32, R 8, L 16, P 40, bf16 packed
  c.edits.push_back({TensorId::kQPe, 0, -1, -1, 0, -1, 0x0000});      // every q_pe element +0
  c.edits.push_back({TensorId::kQPe, 16, 1, 2, 3, 1, 0x3F80});        // q_pe[16, 2, 3] = 1.0
  c.edits.push_back({TensorId::kIndexWeights, 4, 2, -1, 0, -1, 0x40400000});  // weights rows 4, 5 = 3.0
  c.edits.push_back({TensorId::kPositions, 0, 1, -1, 0, -1, 39});     // positions[0] = 39
  return c;
}

uint64_t bits_at(const TensorSet& set, TensorId id, int64_t row, int64_t head, int64_t i) {
  const TensorGeometry* g = set.find(id);
  uint64_t bits = 0;
  std::memcpy(&bits, set.element(*g, row, head, i), static_cast<size_t>(element_bytes(g->type)));
  return bits;
}

TEST(ValueEdits, AreWrittenOverTheGeneratedValuesInOrder) {
  const Case c = edited_case();
  ASSERT_EQ(validate_case(c), "");
  const TensorSet set = build_tensor_set(c, Poison::kA);
  const TensorSet plain = build_tensor_set(test::small_case(), Poison::kA);
  for (int64_t t = 0; t < c.num_tokens; ++t) {
    for (int64_t h = 0; h < c.mqa_heads; ++h) {
      for (int64_t d = 0; d < c.rope_dim; ++d) {
        const uint64_t expected = (t == 16 && h == 2 && d == 3) ? 0x3F80 : 0;
        ASSERT_EQ(bits_at(set, TensorId::kQPe, t, h, d), expected) << t << " " << h << " " << d;
      }
    }
    for (int64_t h = 0; h < c.indexer_heads; ++h) {
      const uint64_t weight = bits_at(set, TensorId::kIndexWeights, t, h, 0);
      if (t == 4 || t == 5) {
        EXPECT_EQ(weight, 0x40400000u);
      } else {
        EXPECT_EQ(weight, bits_at(plain, TensorId::kIndexWeights, t, h, 0)) << "other rows keep their values";
      }
    }
  }
  EXPECT_EQ(bits_at(set, TensorId::kPositions, 0, 0, 0), 39u);
  EXPECT_EQ(bits_at(set, TensorId::kPositions, 1, 0, 0), bits_at(plain, TensorId::kPositions, 1, 0, 0));
  // Inputs the edits do not name are the generated ones, byte for byte.
  const TensorGeometry* ql = set.find(TensorId::kQlNope);
  EXPECT_EQ(std::memcmp(set.buffers[ql->buffer].data(), plain.buffers[ql->buffer].data(),
                        set.buffers[ql->buffer].size()),
            0);
}

TEST(ValueEdits, SurviveBothEncodings) {
  const Case c = edited_case();
  const std::vector<uint8_t> bytes = encode_case(c);
  EXPECT_EQ(bytes[4], kCaseBinaryVersionWithEdits);
  Case decoded;
  ASSERT_EQ(decode_case(bytes, &decoded), "");
  EXPECT_EQ(decoded, c);
  EXPECT_EQ(encode_case(decoded), bytes);
  Case from_json;
  const std::string json = case_to_json(c);
  ASSERT_EQ(case_from_json(json, &from_json), "") << json;
  EXPECT_EQ(from_json, c);
  EXPECT_NE(json.find("\"tensor\": \"q_pe\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"bits\": \"0x3F80\""), std::string::npos) << json;
  // Without edits: version 1 and no "edits" key, as before edits existed.
  EXPECT_EQ(encode_case(test::small_case())[4], kCaseBinaryVersion);
  EXPECT_EQ(case_to_json(test::small_case()).find("edits"), std::string::npos);
}

TEST(ValueEdits, BadEditsAreRefusedNamingTheEditAndTheLimit) {
  auto refusal = [](ValueEdit e, QueryPath path = QueryPath::kBf16Packed, bool indexer = true) {
    Case c = test::small_case();
    c.query_path = path;
    c.has_indexer = indexer;
    c.edits = {{TensorId::kQPe, 0, 1, -1, 0, -1, 0}, e};
    return validate_case(c);
  };
  EXPECT_EQ(refusal({TensorId::kQPe, 17, 1, -1, 0, -1, 0}), "edits[1].row = 17 is outside [0, 16] (q_pe)");
  EXPECT_EQ(refusal({TensorId::kQPe, 10, 8, -1, 0, -1, 0}), "edits[1].rows = 8 is outside [1, 7] (q_pe)");
  EXPECT_EQ(refusal({TensorId::kQPe, 0, 1, 3, 0, -1, 0}), "edits[1].head = 3 is outside [-1, 2] (q_pe)");
  EXPECT_EQ(refusal({TensorId::kQPe, 0, 1, -1, 8, -1, 0}), "edits[1].element = 8 is outside [0, 7] (q_pe)");
  EXPECT_EQ(refusal({TensorId::kQPe, 0, 1, -1, 0, 1, 0x10000}),
            "edits[1].bits = 65536 is over 65535 (the element's bits)");
  EXPECT_EQ(refusal({TensorId::kPositions, 0, 1, -1, 0, -1, 40}),
            "edits[1].bits = 40 is over 39 (a position must be < cache_rows)");
  EXPECT_EQ(refusal({TensorId::kQlNope, 0, 1, -1, 0, -1, 0}, QueryPath::kBf16Separate),
            "edits[1].tensor = ql_nope is not an input of this case (the bf16 separate path has no ql_nope)");
  EXPECT_EQ(refusal({TensorId::kIndexQ, 0, 1, -1, 0, -1, 0}, QueryPath::kBf16Packed, false),
            "edits[1].tensor = index_q is not an input of this case (no indexer)");
  EXPECT_EQ(refusal({TensorId::kQueryOut, 0, 1, -1, 0, -1, 0}), "edits[1].tensor is not an input");
  Case bad_json;
  EXPECT_NE(case_from_json(R"({"num_tokens": 1, "mqa_heads": 1, "indexer_heads": 1, "index_dim": 16,)"
                           R"( "rope_dim": 2, "nope_dim": 8, "query_path": "fp8-packed",)"
                           R"( "edits": [{"tensor": "query_out", "bits": 0}]})",
                           &bad_json)
                .find("edits[0].tensor must be one of"),
            std::string::npos);
  EXPECT_NE(case_from_json(R"({"num_tokens": 1, "mqa_heads": 1, "indexer_heads": 1, "index_dim": 16,)"
                           R"( "rope_dim": 2, "nope_dim": 8, "query_path": "fp8-packed",)"
                           R"( "edits": [{"tensor": "q_pe", "colour": 1, "bits": 0}]})",
                           &bad_json)
                .find("edits[0]: unknown key \"colour\""),
            std::string::npos);
}

}  // namespace
}  // namespace qcheck
