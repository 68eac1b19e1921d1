// The plain argument struct of one fused_k launch, the key side of a DSA
// layer (SEMANTICS-K.md 1): up to four roles in one launch, each on or off.
// The same struct describes a CUDA launch (device pointers) and a run of the
// CPU oracle (host pointers). No CUDA, no I/O.
//
// Shapes; row strides in elements, the last dimension always unit stride:
//   positions            [T] int64                 (roles 0 and 1)
//   rope_cache           [P, R] f32 | bf16, a row = [cos(R/2), sin(R/2)]
//   slot_mapping         [T] int64: the MLA slot, -1 = write nothing
//   role 0, index-K prep:
//     index_k            [T, D] bf16
//     ln_weight, ln_bias [D] f32 | bf16
//     index_slot_mapping [T] int64 (nullptr: slot_mapping)
//     indexer_cache      blocks of block_size tokens, each D + 4 bytes
//                        (codes, then the 4-byte scales; flat or shuffled;
//                        codes OCP e4m3 or e4m3fnuz: index_fp8)
//     index_k_out        [T, D] bf16, optional (the rotated row)
//   role 1, KV latent and MLA cache:
//     kv_c [T, 512] bf16, kv_weight [512], k_pe [T, 64] bf16 (RoPE
//     interleaved over the whole row, R = 64)
//     mla_cache          blocks of block_size entries of the format's bytes
//     kv_out [T, 512], kpe_out [T, 64] bf16, optional
//   role 2, Q latent RMSNorm: q_c [T, Q] bf16, q_weight [Q], q_c_out [T, Q] bf16
//   role 3, top-k fill: topk [T, K] int32, every element set to -1
#pragma once

#include <cstdint>
#include <string>

#include "numerics/types.h"

namespace qcheck::fused_k {

// The paged indexer-K cache's layouts and scale words (oracle/indexer_k_cache.h).
enum class IndexerKLayout : uint8_t { kFlat = 0, kShuffled = 1 };
// The indexer cache's FP8 encoding: OCP e4m3 (max 448), or AMD's e4m3fnuz,
// whose kernels scale to 224 (SEMANTICS-K.md 1.5: vLLM's FP8_MAX on FNUZ).
enum class IndexKFp8 : uint8_t { kOcp = 0, kFnuz = 1 };
enum class IndexerKScale : uint8_t { kF32 = 0, kUe8m0x4 = 1 };
const char* name_of(IndexerKLayout layout);
const char* name_of(IndexerKScale scale);
const char* name_of(IndexKFp8 fp8);

// The MLA cache's entry formats (oracle/mla_cache.h).
constexpr int64_t kMlaLatent = 512;
constexpr int64_t kMlaRope = 64;
enum class MlaCacheFormat : uint8_t { kBf16 = 0, kFp8 = 1, kFp8DsMla = 2, kNvfp4DsMla = 3 };
const char* name_of(MlaCacheFormat format);
int64_t mla_entry_bytes(MlaCacheFormat format);

struct RowsIn {
  const void* data = nullptr;
  int64_t row_stride = 0;
};
struct RowsOut {
  void* data = nullptr;  // nullptr: not written
  int64_t row_stride = 0;
};
struct VectorIn {
  const void* data = nullptr;
  FloatType dtype = FloatType::kF32;
};
struct RopeCache {
  const void* data = nullptr;
  FloatType dtype = FloatType::kF32;
  int64_t rows = 0;        // P: every position must be < rows
  int64_t row_stride = 0;  // elements (>= the rope width)
  int64_t width = 0;       // R: cos R/2, then sin R/2
};
struct PagedCache {
  void* data = nullptr;
  int64_t num_blocks = 0;
  int64_t block_size = 0;    // tokens per block; a slot s is token s % block_size of block s / block_size
  int64_t block_stride = 0;  // bytes between blocks
  int64_t entry_bytes = 0;   // the cache tensor's last dimension: D + 4 (indexer), the format's bytes (MLA)
  int64_t entry_stride = 0;  // MLA: bytes between a block's entries (>= entry_bytes); indexer: unused
};

struct FusedKArgs {
  int64_t num_tokens = 0;  // T
  const int64_t* positions = nullptr;
  RopeCache rope_cache;
  const int64_t* slot_mapping = nullptr;

  bool index_k = false;  // role 0
  int64_t index_dim = 128;  // D
  int64_t index_rope_dim = 64;  // the first R elements are rotated; R = rope_cache.width
  RopeStyle index_rope = RopeStyle::kNeox;
  RowsIn index_k_in;
  VectorIn ln_weight, ln_bias;
  uint32_t ln_eps_bits = 0x358637BDu;  // 1e-6f
  const int64_t* index_slot_mapping = nullptr;
  PagedCache indexer_cache;
  IndexerKLayout indexer_layout = IndexerKLayout::kFlat;
  IndexerKScale indexer_scale = IndexerKScale::kF32;
  IndexKFp8 index_fp8 = IndexKFp8::kOcp;
  RowsOut index_k_out;

  bool kv = false;  // role 1
  RowsIn kv_c, k_pe;
  VectorIn kv_weight;
  uint32_t kv_eps_bits = 0x358637BDu;
  PagedCache mla_cache;
  MlaCacheFormat mla_format = MlaCacheFormat::kBf16;
  uint32_t k_scale_bits = 0x3F800000u;  // fp8: positive, finite, normal
  RowsOut kv_out, kpe_out;

  bool q_norm = false;  // role 2
  int64_t q_dim = 1536;  // Q
  RowsIn q_c;
  VectorIn q_weight;
  uint32_t q_eps_bits = 0x358637BDu;
  RowsOut q_c_out;

  bool topk_fill = false;  // role 3
  int32_t* topk = nullptr;
  int64_t topk_width = 2048;  // K
  int64_t topk_row_stride = 2048;
};

struct FusedKLimits {
  static constexpr int64_t kMaxTokens = int64_t(1) << 40;
  static constexpr int64_t kMaxIndexDim = 512;   // D, a multiple of 16
  static constexpr int64_t kMaxQDim = 8192;      // Q
  static constexpr int64_t kMaxTopk = 1 << 20;   // K
  static constexpr int64_t kMaxBlockSize = 1024;
};

// Checks the roles' dims, pointers, strides, cache geometries and overlaps
// without reading any tensor (so it works on device pointers). "" when the
// launch is valid, otherwise one line naming the field and the limit.
std::string validate_fused_k_args(const FusedKArgs& args);

// Reads positions and slot mappings (host pointers): "" when every position
// is below rope_cache.rows and every slot is -1 or inside its cache, else
// one line naming the tensor, the token, the value and the limit. After
// validate_fused_k_args.
std::string check_fused_k_inputs(const FusedKArgs& args);

}  // namespace qcheck::fused_k
