#include "ops/fused_q/kernels/kernel_params.h"

#include <cmath>
#include <cstring>
#include <type_traits>

#include "ops/fused_q/kernels/planted.cuh"

namespace qcheck::cuda {
namespace {

float float_of(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// True when a [T, heads, width] view can be read or written in vectors of
// `elements` elements of `element_bytes` bytes: the base address is aligned
// to the vector size and both strides keep every row start aligned.
bool view_allows_vectors(const void* data, int64_t token_stride, int64_t head_stride,
                         int element_bytes, int elements) {
  const uint64_t vector_bytes = static_cast<uint64_t>(element_bytes) * elements;
  return reinterpret_cast<uintptr_t>(data) % vector_bytes == 0 && token_stride % elements == 0 &&
         head_stride % elements == 0;
}

// Four consecutive cos (and four sin) values at any index that is a
// multiple of 4: base aligned to 4 elements, rows and the sin half too.
bool cache_allows_vectors(const CacheView& cache, int64_t rope_dim) {
  const uint64_t vector_bytes = static_cast<uint64_t>(element_bytes(cache.dtype)) * kCacheVectorElements;
  return reinterpret_cast<uintptr_t>(cache.data) % vector_bytes == 0 &&
         cache.row_stride % kCacheVectorElements == 0 && (rope_dim / 2) % kCacheVectorElements == 0;
}

// The staged path copies rows in 16-byte pieces, each thread one fixed
// column (blocked_staged.cuh stage_rows): a row must be a power-of-two
// number of pieces, at most 16 (so it divides the 32 or 64 threads).
bool stageable_row_bytes(int64_t bytes) {
  const int64_t pieces = bytes / 16;
  return bytes % 16 == 0 && pieces >= 1 && pieces <= 16 && (pieces & (pieces - 1)) == 0;
}

// Whole cos/sin rows copied 16 bytes at a time: the base and every row start
// are multiples of 16 bytes, and the row length (R elements) is stageable.
bool cache_rows_stageable(const CacheView& cache, int64_t rope_dim) {
  const int64_t bytes = element_bytes(cache.dtype);
  return reinterpret_cast<uintptr_t>(cache.data) % 16 == 0 && (cache.row_stride * bytes) % 16 == 0 &&
         stageable_row_bytes(rope_dim * bytes);
}

// `data` advanced by `tokens` rows of `token_stride` elements of `bytes`
// each; a null pointer (a tensor the launch does not use) stays null.
template <typename Pointer>
Pointer advance(Pointer data, int64_t tokens, int64_t token_stride, int bytes) {
  if (data == nullptr) return data;
  using Byte = std::conditional_t<std::is_const_v<std::remove_pointer_t<Pointer>>, const char, char>;
  return static_cast<Byte*>(data) + tokens * token_stride * bytes;
}

template <typename View>
void advance_view(View& view, int64_t tokens, int bytes) {
  view.data = advance(view.data, tokens, view.token_stride, bytes);
}

}  // namespace

KernelParams params_from_token(const KernelParams& params, int64_t first_token) {
  KernelParams part = params;
  FusedQArgs& a = part.args;
  a.num_tokens -= first_token;
  a.positions = static_cast<const int64_t*>(advance(static_cast<const void*>(a.positions), first_token, 1, 8));
  advance_view(a.q_pe, first_token, 2);
  advance_view(a.ql_nope, first_token, 2);
  advance_view(a.index_q, first_token, 2);
  advance_view(a.index_weights, first_token, element_bytes(a.index_weights_dtype));
  advance_view(a.query_out, first_token, query_out_element_bytes(a));
  advance_view(a.index_q_fp8, first_token, 1);
  if (!planted::is(planted::kPartsSkipWeightsOut)) {
    advance_view(a.index_weights_out, first_token, element_bytes(a.index_weights_out_dtype));
  }
  return part;
}

KernelParams make_kernel_params(const FusedQArgs& args) {
  KernelParams p;
  p.args = args;
  if (planted::is(planted::kIndexerRopeSwapped)) {
    p.args.indexer_rope = args.indexer_rope == RopeStyle::kNeox ? RopeStyle::kInterleaved : RopeStyle::kNeox;
  }
  const FusedQArgs& a = p.args;
  const int64_t R = a.rope_dim;
  const bool fp8 = a.query_path == QueryPath::kFp8Packed;
  const int out_bytes = query_out_element_bytes(a);

  if (fp8) {
    p.nope_task = KernelParams::NopeTask::kQuantizeFp8;
  } else if (a.query_path == QueryPath::kBf16Packed &&
             (!ql_nope_aliases_query_out(a) || planted::is(planted::kTwinCopyWhenAliased)) &&
             !planted::is(planted::kSkipCopyUnaliased)) {
    p.nope_task = KernelParams::NopeTask::kCopyBf16;
  }

  const bool out_vectors = view_allows_vectors(a.query_out.data, a.query_out.token_stride,
                                               a.query_out.head_stride, out_bytes, kVectorElements);
  // A chunk of 8 holds 4 whole interleaved pairs when R is a multiple of 8.
  p.mqa_vectors = R % kVectorElements == 0 && out_vectors &&
                  view_allows_vectors(a.q_pe.data, a.q_pe.token_stride, a.q_pe.head_stride, 2,
                                      kVectorElements);
  p.nope_vectors = p.nope_task != KernelParams::NopeTask::kNone && out_vectors &&
                   view_allows_vectors(a.ql_nope.data, a.ql_nope.token_stride,
                                       a.ql_nope.head_stride, 2, kVectorElements);
  p.mqa_cache_vectors = cache_allows_vectors(a.mqa_cache, R);
  p.mqa_cache_last_row = a.mqa_cache.rows - 1;
  p.mqa_staged = p.mqa_vectors && R <= 64 && stageable_row_bytes(2 * R) &&
                 cache_rows_stageable(a.mqa_cache, R);

  if (a.has_indexer) {
    // A chunk must not straddle the RoPE boundary R, and with NeoX its
    // partner chunk (j +- R/2) must start on a chunk boundary too.
    const int64_t rope_granule = a.indexer_rope == RopeStyle::kNeox ? 2 * kVectorElements
                                                                     : kVectorElements;
    p.indexer_vectors =
        R % rope_granule == 0 &&
        view_allows_vectors(a.index_q.data, a.index_q.token_stride, a.index_q.head_stride, 2,
                            kVectorElements) &&
        view_allows_vectors(a.index_q_fp8.data, a.index_q_fp8.token_stride,
                            a.index_q_fp8.head_stride, 1, kVectorElements);
    p.indexer_cache_vectors = cache_allows_vectors(a.indexer_cache, R);
    p.indexer_registers = p.indexer_vectors && p.indexer_cache_vectors && a.index_dim <= 128;
    p.model_shape_kernel = p.indexer_registers && R == kModelRopeDim && a.index_dim == kModelIndexDim;
    p.indexer_cache_last_row = a.indexer_cache.rows - 1;
    p.indexer_staged = p.indexer_vectors && R <= 64 && a.index_dim <= 128 &&
                       stageable_row_bytes(2 * a.index_dim) && cache_rows_stageable(a.indexer_cache, R);
  }

  p.q_scale = float_of(a.q_scale_bits);
  p.softmax_scale = float_of(a.softmax_scale_bits);
  p.head_scale = float_of(a.head_scale_bits);
  if (planted::is(planted::kHeadScaleLocal)) {
    p.head_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(a.indexer_heads)));
  }

  // (planted kOddHeadDropsLast: an odd H loses its last MQA and ql_nope head)
  const int64_t heads = planted::is(planted::kOddHeadDropsLast) && a.mqa_heads > 1 ? a.mqa_heads & ~int64_t(1)
                                                                                   : a.mqa_heads;
  p.indexer_task_begin = heads;
  p.nope_task_begin = p.indexer_task_begin + (a.has_indexer ? a.indexer_heads : 0);
  p.task_count = p.nope_task_begin + (p.nope_task != KernelParams::NopeTask::kNone ? heads : 0);
  return p;
}

}  // namespace qcheck::cuda
