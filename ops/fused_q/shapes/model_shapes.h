// The real model shapes fused_q runs at (SEMANTICS.md, "Real dimensions"):
// R = 64, L = 512, D = 128; DeepSeek-V3.2 with 128 MQA heads split by tensor
// parallelism (128/64/32/16 per rank at TP 1/2/4/8), NI = 64 (the indexer is
// not split), NeoX indexer RoPE; GLM-5.x with 64 MQA heads (64/32/16/8),
// NI = 32, interleaved indexer RoPE. Shared by the mutator, the seed corpus
// and the semantic bins, so the three agree on what "a real shape" is.
#pragma once

#include <cstdint>

#include "fuzz/case/case.h"

namespace qcheck::fuzzing {

struct ModelShape {
  const char* name;  // "deepseek-v3.2-tp8"
  int64_t mqa_heads;
  int64_t indexer_heads;
  RopeStyle indexer_rope;
};

constexpr int64_t kRealRopeDim = 64;
constexpr int64_t kRealNopeDim = 512;
constexpr int64_t kRealIndexDim = 128;

constexpr ModelShape kModelShapes[] = {
    {"deepseek-v3.2-tp1", 128, 64, RopeStyle::kNeox},
    {"deepseek-v3.2-tp2", 64, 64, RopeStyle::kNeox},
    {"deepseek-v3.2-tp4", 32, 64, RopeStyle::kNeox},
    {"deepseek-v3.2-tp8", 16, 64, RopeStyle::kNeox},
    {"glm-5-tp1", 64, 32, RopeStyle::kInterleaved},
    {"glm-5-tp2", 32, 32, RopeStyle::kInterleaved},
    {"glm-5-tp4", 16, 32, RopeStyle::kInterleaved},
    {"glm-5-tp8", 8, 32, RopeStyle::kInterleaved},
};
constexpr int kModelShapeCount = sizeof(kModelShapes) / sizeof(kModelShapes[0]);

// Sets the dims, indexer style and default scales of a model shape; leaves
// T, paths, layouts and recipes alone.
inline void apply_model_shape(Case& c, const ModelShape& shape) {
  c.mqa_heads = shape.mqa_heads;
  c.indexer_heads = shape.indexer_heads;
  c.indexer_rope = shape.indexer_rope;
  c.index_dim = kRealIndexDim;
  c.rope_dim = kRealRopeDim;
  c.nope_dim = kRealNopeDim;
  set_default_scales(c);
}

// The index of the model shape the case's dims and style match, or -1.
inline int matching_model_shape(const Case& c) {
  if (c.index_dim != kRealIndexDim || c.rope_dim != kRealRopeDim || c.nope_dim != kRealNopeDim) return -1;
  for (int i = 0; i < kModelShapeCount; ++i) {
    const ModelShape& s = kModelShapes[i];
    if (c.mqa_heads == s.mqa_heads && c.indexer_heads == s.indexer_heads && c.indexer_rope == s.indexer_rope) {
      return i;
    }
  }
  return -1;
}

}  // namespace qcheck::fuzzing
