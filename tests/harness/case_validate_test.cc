// validate_case: one line naming the field and the limit, for every kind of
// impossible case, and the memory cap.
#include <gtest/gtest.h>

#include "fuzz/case/case.h"
#include "fuzz/case/tensor_plan.h"
#include "tests/harness/case_samples.h"

namespace qcheck {
namespace {

template <typename Change>
std::string error_after(Change change) {
  Case c = test::small_case();
  change(c);
  return validate_case(c);
}

TEST(CaseValidate, DefaultsAndTheSmallCaseAreValid) {
  EXPECT_EQ(validate_case(Case{}), "");
  EXPECT_EQ(validate_case(test::small_case()), "");
  EXPECT_EQ(error_after([](Case& c) { c.num_tokens = 0; }), "");  // T = 0 is a valid no-op
  // The default scale bits in the struct are the defaults for its D and NI.
  EXPECT_EQ(Case{}.softmax_scale_bits, default_softmax_scale_bits(Case{}.index_dim));
  EXPECT_EQ(Case{}.head_scale_bits, default_head_scale_bits(Case{}.indexer_heads));
}

TEST(CaseValidate, DimsAreCheckedInTheLaunchWords) {
  EXPECT_EQ(error_after([](Case& c) { c.mqa_heads = 0; }),
            "mqa_heads (H) = 0 is outside [1, 1024]");
  EXPECT_EQ(error_after([](Case& c) { c.index_dim = 40; }),
            "index_dim (D) = 40 must be a multiple of 16");
  EXPECT_EQ(error_after([](Case& c) { c.rope_dim = 7; }), "rope_dim (R) = 7 must be even");
  EXPECT_EQ(error_after([](Case& c) { c.rope_dim = 64; }), "rope_dim (R) = 64 is outside [2, 32]");
  EXPECT_EQ(error_after([](Case& c) { c.nope_dim = 12; }),
            "nope_dim (L) = 12 must be a multiple of 8");
  // NI is checked without the indexer too: its outputs still exist.
  EXPECT_EQ(error_after([](Case& c) {
              c.has_indexer = false;
              c.indexer_heads = 0;
            }),
            "indexer_heads (NI) = 0 is outside [1, 1024]");
}

TEST(CaseValidate, HarnessLimits) {
  EXPECT_EQ(error_after([](Case& c) { c.num_tokens = -1; }),
            "num_tokens (T) = -1 is outside [0, 16777216]");
  EXPECT_EQ(error_after([](Case& c) { c.num_tokens = (int64_t(1) << 24) + 1; }),
            "num_tokens (T) = 16777217 is outside [0, 16777216]");
  EXPECT_EQ(error_after([](Case& c) { c.cache_rows = 0; }),
            "cache_rows (P) = 0 is outside [1, 67108864]");
  EXPECT_EQ(error_after([](Case& c) { c.row_padding = 0; }), "row_padding = 0 is outside [1, 67108864]");
  EXPECT_EQ(error_after([](Case& c) { c.row_padding = (int64_t(1) << 26) + 1; }),
            "row_padding = 67108865 is outside [1, 67108864]");
  EXPECT_EQ(error_after([](Case& c) { c.weights_column_stride = 65; }),
            "weights_column_stride = 65 is outside [1, 64]");
}

TEST(CaseValidate, EnumsLayoutsAliasProfileAndScale) {
  EXPECT_EQ(error_after([](Case& c) { c.values = static_cast<ValueRecipe>(12); }),
            "values = 12 is not one of normal, magnitudes, specials, scale-edges, zero-rows, "
            "scale-band, cancellation, large-positions, mixed, nan-rows, contraction, ties");
  EXPECT_EQ(error_after([](Case& c) { c.index_q_layout = Layout::kHeadMajor; }),
            "index_q_layout = head-major is not allowed here (allowed: contiguous, padded-rows)");
  EXPECT_EQ(error_after([](Case& c) { c.q_pe_layout = Layout::kHeadMajor; }),
            "q_pe_layout = head-major is not allowed here (allowed: contiguous, padded-rows, "
            "wide-row-view)");
  EXPECT_EQ(
      error_after([](Case& c) { c.query_out_layout = Layout::kWideRowView; }),
      "query_out_layout = wide-row-view is not allowed here (allowed: contiguous, padded-rows)");
  EXPECT_EQ(error_after([](Case& c) {
              c.alias = AliasMode::kExactFront;
              c.query_path = QueryPath::kFp8Packed;
            }),
            "alias = exact-front needs query_path = bf16-packed (it is fp8-packed)");
  EXPECT_NE(error_after([](Case& c) {
              c.alias = AliasMode::kExactFront;
              c.ql_nope_layout = Layout::kHeadMajor;
            }).find("ql_nope_layout must be contiguous"),
            std::string::npos);
  EXPECT_EQ(error_after([](Case& c) { c.profile = "triton\n"; }),
            "profile = \"triton?\" is not a known profile (qcheck, vllm-triton, exact-reciprocal, plain-scale, "
            "torch-eager, flashmla)");
  EXPECT_EQ(error_after([](Case& c) {
              c.query_path = QueryPath::kFp8Packed;
              c.q_scale_bits = 0x80000000u;  // -0
            }),
            "q_scale = 0x80000000 must be a positive, finite, normal fp32");
  // div.full with a q_scale that is not a power of two is judged by its
  // acceptance set (fuzz/verdict/judge.h): a valid case.
  EXPECT_EQ(error_after([](Case& c) {
              c.query_path = QueryPath::kFp8Packed;
              c.profile = "vllm-triton";
              c.q_scale_bits = 0x3EBD70A4u;  // 0.37
            }),
            "");
  // q_scale is not read off the fp8 path: any bits are fine there.
  EXPECT_EQ(error_after([](Case& c) { c.q_scale_bits = 0xFFFFFFFFu; }), "");
}

TEST(CaseValidate, MemoryCap) {
  const uint64_t small_bytes = plan_tensors(test::small_case()).total_bytes();
  EXPECT_EQ(error_after([&](Case& c) { c.memory_limit_bytes = small_bytes; }), "");
  EXPECT_EQ(error_after([&](Case& c) { c.memory_limit_bytes = small_bytes - 1; }),
            "the case's tensors need " + std::to_string(small_bytes) +
                " bytes, over memory_limit_bytes = " + std::to_string(small_bytes - 1));
  EXPECT_EQ(error_after([](Case& c) { c.memory_limit_bytes = (uint64_t(8) << 30) + 1; }),
            "memory_limit_bytes = 8589934593 is outside [1, 8589934592]");
  // A production-size case fits once it raises its own limit: GLM-5 TP4
  // (the Case defaults) at T = 65536 needs more than the default 1 GiB.
  Case glm5;
  glm5.num_tokens = 65536;
  EXPECT_GT(plan_tensors(glm5).total_bytes(), uint64_t(1) << 30);
  EXPECT_NE(validate_case(glm5).find("over memory_limit_bytes = 1073741824"), std::string::npos)
      << validate_case(glm5);
  glm5.memory_limit_bytes = uint64_t(8) << 30;
  EXPECT_EQ(validate_case(glm5), "");
  // The largest shapes stay refused by the cap, whatever else is legal:
  // T = 2^24 tokens of 1024 heads would need terabytes.
  const std::string huge = error_after([](Case& c) {
    c.num_tokens = int64_t(1) << 24;
    c.mqa_heads = 1024;
    c.indexer_heads = 1024;
    c.index_dim = 512;
    c.nope_dim = 1024;
    c.rope_dim = 512;
    c.row_padding = 256;
    c.query_out_layout = Layout::kPaddedRows;
    c.memory_limit_bytes = uint64_t(8) << 30;
  });
  EXPECT_NE(huge.find("over memory_limit_bytes = 8589934592"), std::string::npos) << huge;
}

TEST(TensorPlan, LayoutsGiveTheDocumentedStrides) {
  Case c = test::small_case();  // T 17, H 3, NI 2, D 32, R 8, L 16
  c.ql_nope_layout = Layout::kHeadMajor;
  c.q_pe_layout = Layout::kWideRowView;
  c.index_q_layout = Layout::kPaddedRows;
  c.weights_layout = Layout::kPaddedRows;
  c.weights_column_stride = 3;
  c.row_padding = 5;
  const TensorPlan plan = plan_tensors(c);
  const TensorGeometry* ql_nope = plan.find(TensorId::kQlNope);
  EXPECT_EQ(ql_nope->row_stride, 16);       // L
  EXPECT_EQ(ql_nope->col_stride, 17 * 16);  // T * L
  const TensorGeometry* q_pe = plan.find(TensorId::kQPe);
  EXPECT_EQ(q_pe->offset, 128);
  EXPECT_EQ(q_pe->col_stride, 128 + 8);
  EXPECT_EQ(q_pe->row_stride, 3 * (128 + 8));
  const TensorGeometry* index_q = plan.find(TensorId::kIndexQ);
  EXPECT_EQ(index_q->col_stride, 32 + 5);
  EXPECT_EQ(index_q->row_stride, 2 * (32 + 5) + 5);
  const TensorGeometry* weights = plan.find(TensorId::kIndexWeights);
  EXPECT_EQ(weights->col_stride, 3);
  EXPECT_EQ(weights->row_stride, 2 * 3 + 5);
  EXPECT_EQ(plan.find(TensorId::kQueryOut)->row_stride, 3 * (16 + 8));

  c.alias = AliasMode::kExactFront;
  c.ql_nope_layout = Layout::kContiguous;
  c.has_indexer = false;
  const TensorPlan aliased = plan_tensors(c);
  const TensorGeometry* front = aliased.find(TensorId::kQlNope);
  const TensorGeometry* out = aliased.find(TensorId::kQueryOut);
  EXPECT_EQ(front->buffer, out->buffer);
  EXPECT_EQ(front->row_stride, out->row_stride);
  EXPECT_EQ(front->width, 16);
  EXPECT_EQ(aliased.find(TensorId::kIndexQ), nullptr);  // no indexer inputs
  EXPECT_EQ(aliased.find(TensorId::kIndexQFp8)->role, TensorRole::kUntouchedOutput);
}

}  // namespace
}  // namespace qcheck
