#include "ops/fused_q/bench/bench_launch.h"

#include <cuda_runtime_api.h>

#include <algorithm>

namespace qcheck::bench {

const char* name_of(BenchPath path) {
  switch (path) {
    case BenchPath::kBf16Separate: return "bf16 separate q_pe_out";
    case BenchPath::kBf16PackedAlias: return "bf16 packed, alias";
    case BenchPath::kBf16PackedCopy: return "bf16 packed, copy";
    case BenchPath::kFp8Packed: return "fp8 packed";
  }
  return "?";
}

BenchLaunch::~BenchLaunch() {
  for (void* p : allocations_) cudaFree(p);
}

void* BenchLaunch::allocate(size_t bytes) {
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, std::max<size_t>(bytes, 256));
  if (e != cudaSuccess) {
    if (error_.empty()) error_ = std::string("cudaMalloc(") + std::to_string(bytes) + "): " + cudaGetErrorString(e);
    return nullptr;
  }
  allocations_.push_back(p);
  return p;
}

std::string BenchLaunch::create(const BenchShape& shape, BenchPath path, int64_t tokens, int sets) {
  const int64_t T = tokens, H = shape.heads, NI = shape.indexer_heads;
  const int64_t D = shape.index_dim, R = shape.rope_dim, L = shape.nope_dim;
  const int64_t P = std::max<int64_t>(T, 4096);
  const bool fp8 = path == BenchPath::kFp8Packed;
  const bool packed = path != BenchPath::kBf16Separate;
  const bool alias = path == BenchPath::kBf16PackedAlias;
  const int64_t out_width = packed ? L + R : R;
  const int64_t out_bytes = fp8 ? 1 : 2;
  const int64_t q_pe_row = 128 + R;  // q_pe is the tail of a wider row (192 for R = 64)

  // Caches and positions are shared by every set (read-only, like the model's).
  auto* positions = static_cast<int64_t*>(allocate(T * 8));
  void* mqa_cache = allocate(P * R * 4);
  void* indexer_cache = allocate(P * R * 4);
  if (!error_.empty()) return error_;
  for (std::string e : {fill_positions(positions, T, P), fill_f32(mqa_cache, P * R, 1, true),
                        fill_f32(indexer_cache, P * R, 2, true)}) {
    if (!e.empty()) return e;
  }
  for (int s = 0; s < sets; ++s) {
    FusedQArgs a;
    a.num_tokens = T, a.mqa_heads = H, a.indexer_heads = NI;
    a.index_dim = D, a.rope_dim = R, a.nope_dim = L;
    a.query_path = fp8 ? QueryPath::kFp8Packed : packed ? QueryPath::kBf16Packed : QueryPath::kBf16Separate;
    a.has_indexer = true;
    a.indexer_rope = RopeStyle::kNeox;
    a.positions = positions;
    a.mqa_cache = CacheView{mqa_cache, FloatType::kF32, P, R};
    a.indexer_cache = CacheView{indexer_cache, FloatType::kF32, P, R};
    auto* q_pe_rows = static_cast<uint16_t*>(allocate(T * H * q_pe_row * 2));
    a.q_pe = InputView{q_pe_rows ? q_pe_rows + 128 : nullptr, H * q_pe_row, q_pe_row};
    void* query_out = allocate(T * H * out_width * out_bytes);
    a.query_out = OutputView{query_out, H * out_width, out_width};
    if (alias) {
      a.ql_nope = InputView{query_out, H * out_width, out_width};
    } else if (packed) {
      a.ql_nope = InputView{allocate(H * T * L * 2), L, T * L};  // head-major
    }
    a.index_q = InputView{allocate(T * NI * D * 2), NI * D, D};
    auto* weight_rows = static_cast<float*>(allocate(T * (D + NI) * 4));
    a.index_weights = InputView{weight_rows ? weight_rows + D : nullptr, D + NI, 1};
    a.index_weights_dtype = FloatType::kF32;
    a.index_q_fp8 = OutputView{allocate(T * NI * D), NI * D, D};
    a.index_weights_out = OutputView{allocate(T * NI * 4), NI, 1};
    a.index_weights_out_dtype = FloatType::kF32;
    a.softmax_scale_bits = default_softmax_scale_bits(D);
    a.head_scale_bits = default_head_scale_bits(NI);
    if (!error_.empty()) return error_;
    const uint32_t seed = 100 + 10 * s;
    for (std::string e :
         {fill_bf16(q_pe_rows, T * H * q_pe_row, seed),
          alias ? fill_bf16(query_out, T * H * out_width, seed + 1)
                : (packed ? fill_bf16(const_cast<void*>(a.ql_nope.data), H * T * L, seed + 1) : ""),
          fill_bf16(const_cast<void*>(a.index_q.data), T * NI * D, seed + 2),
          fill_f32(weight_rows, T * (D + NI), seed + 3, false)}) {
      if (!e.empty()) return e;
    }
    args_.push_back(a);
  }
  const double t = static_cast<double>(T);
  const bool reads_nope = packed && !alias;
  bytes_moved_ = t * 8                                        // positions
                 + 2 * t * R * 4                              // one cos/sin row per token, 2 caches
                 + t * H * R * 2                              // q_pe
                 + (reads_nope ? t * H * L * 2 : 0)           // ql_nope
                 + t * NI * D * 2 + t * NI * 4                // index_q, weights
                 + t * H * R * out_bytes                      // rope part of the query out
                 + (reads_nope ? t * H * L * out_bytes : 0)   // front of the query out
                 + t * NI * D + t * NI * 4;                   // index_q_fp8, weights out
  return "";
}

}  // namespace qcheck::bench
