// fused_q_plugin.cu: an example fused_q kernel as a qcheck plugin, built with
// nvcc alone (README.md beside this file):
//
//   nvcc -O3 -arch=sm_90 -shared -Xcompiler -fPIC -I<dir holding qcheck/qcheck_plugin.h> fused_q_plugin.cu -o libfused_q_plugin.so
//
// It follows the "qcheck" profile bit for bit: interleaved MQA RoPE and the
// indexer RoPE with the product with cos fused into an FMA and the product
// with sin rounded first, IEEE division, the exact power-of-two ceiling of
// RN(amax / 448) with the 1e-4 floor on amax, saturating e4m3 (NaN -> 0x7F),
// bf16 round to nearest even (NaN -> 0x7FFF), fp32 NaN -> 0x7FFFFFFF, and the
// weights as ((w * scale) * softmax_scale) * head_scale.
//
// It is written for clarity, not speed: one warp per output row, that is per
// (token, MQA head) or (token, indexer head), each lane taking every 32nd
// element of the row.
//
// Every rounding step is an explicit intrinsic (__fmaf_rn, __fmul_rn,
// __fdiv_rn), which nvcc never contracts or reorders whatever -fmad says. The
// conversions to bf16 and e4m3 are done on the bits, so that their rounding,
// saturation and NaN bits are the profile's by construction rather than by a
// property of one GPU's convert instruction. Do not build with
// --use_fast_math or -ftz=true: they turn even these intrinsics into their
// .ftz forms (fma.rn.ftz.f32, ...), which flush the subnormals the profile
// keeps, and nvcc defines no macro by which this file could refuse them.
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <qcheck/qcheck_plugin.h>

namespace {

constexpr int kWarpSize = 32;
constexpr int kRowsPerBlock = 4;  // one warp per row
constexpr int kThreadsPerBlock = kWarpSize * kRowsPerBlock;
// Grid x holds tokens and grid y holds groups of rows; each loops when there
// are more than these, so any T and any head count fit (grid y and z stop at
// 65535, which tokens would pass at T = 65536).
constexpr int64_t kMaxTokenBlocks = int64_t(1) << 20;
constexpr int64_t kMaxRowGroupBlocks = 65535;

constexpr uint32_t kF32AbsMask = 0x7FFFFFFFu;
constexpr uint32_t kF32InfBits = 0x7F800000u;
constexpr uint32_t kF32CanonicalNan = 0x7FFFFFFFu;
constexpr uint32_t kF32BitsOf448 = 0x43E00000u;  // 448 = 1.75 * 2^8, the largest e4m3

__host__ __device__ inline uint32_t bits_of(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  return bits;
}

__host__ __device__ inline float float_from_bits(uint32_t bits) {
  float value;
  memcpy(&value, &bits, sizeof value);
  return value;
}

// bf16 -> f32 is exact: the 16 bits are the top half of the f32.
__host__ __device__ inline float f32_from_bf16(uint16_t bits) { return float_from_bits(uint32_t(bits) << 16); }

// f32 -> bf16, round to nearest even; subnormals are kept and values that
// round past the largest bf16 become Inf. Every NaN becomes 0x7FFF (what the
// GPU's cvt.rn.bf16.f32 gives, the profile's rule), whatever its sign or
// payload.
__host__ __device__ inline uint16_t bf16_from_f32(float value) {
  const uint32_t bits = bits_of(value);
  if ((bits & kF32AbsMask) > kF32InfBits) return 0x7FFF;
  // Adding 0x7FFF rounds up when the dropped half is above one half; the kept
  // part's lowest bit breaks the exact tie toward even.
  const uint32_t kept_lsb = (bits >> 16) & 1u;
  return uint16_t((bits + 0x7FFFu + kept_lsb) >> 16);
}

// f32 -> OCP e4m3 (bias 7, no Inf, max 448 = 0x7E) as PTX
// cvt.rn.satfinite.e4m3x2.f32 rounds: to nearest even, magnitudes that round
// above 448 and +-Inf saturate to +-448, every NaN becomes 0x7F (the sign is
// dropped).
__host__ __device__ inline uint8_t e4m3_from_f32(float value) {
  const uint32_t bits = bits_of(value);
  const uint8_t sign = uint8_t((bits >> 24) & 0x80u);
  const uint32_t magnitude = bits & kF32AbsMask;
  if (magnitude > kF32InfBits) return 0x7F;
  // Everything from 448 up rounds to 448 or saturates to it: the tie 464
  // goes to 448 (even), what is above would be 480, past the range.
  if (magnitude >= kF32BitsOf448) return uint8_t(sign | 0x7E);
  const uint32_t exponent = magnitude >> 23;  // biased by 127
  if (exponent >= 127 - 6) {
    // A normal e4m3 (|x| >= 2^-6): keep the top 3 of the 23 mantissa bits,
    // round to nearest even on the 20 dropped bits (a carry steps into the
    // next binade, which is correct), then rebias the exponent from 127 to 7.
    const uint32_t rounded = magnitude + 0x7FFFFu + ((magnitude >> 20) & 1u);
    return uint8_t(sign | ((rounded >> 20) - ((127u - 7u) << 3)));
  }
  // The subnormal e4m3 are k * 2^-9, k = 0..7 (k = 8 is 2^-6, code 0x08, the
  // smallest normal, so a round-up to 8 is right as it is). Below 2^-10,
  // half of 2^-9, everything rounds to a signed zero; 2^-10 itself is a tie
  // that goes to the even 0.
  if (exponent < 127 - 10) return sign;
  // |x| = significand * 2^(exponent - 150), so k = |x| * 2^9 is the
  // significand shifted right by 141 - exponent (21..24 here), rounded to
  // nearest even on the bits shifted out.
  const uint32_t significand = (magnitude & 0x7FFFFFu) | 0x800000u;
  const uint32_t shift = 141u - exponent;
  uint32_t k = significand >> shift;
  const uint32_t dropped = significand & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1u);
  if (dropped > half || (dropped == half && (k & 1u) != 0)) ++k;
  return uint8_t(sign | k);
}

// The UE8M0 scale of an indexer row from the bits of its amax (NaN lanes
// already left out): the floor 1e-4 on amax, s0 = RN(amax / 448) by IEEE
// division, then the smallest power of two >= s0 taken on the bits: adding
// 0x7FFFFF carries into the exponent exactly when the mantissa is not zero,
// and the mask drops the mantissa. An Inf amax gives an Inf scale (then the
// row's finite codes are +-0, its Infs NaN). amax >= 1e-4 makes s0 a normal
// number, so the bit trick never meets a subnormal.
__device__ inline float ue8m0_scale(uint32_t amax_bits) {
  float amax = float_from_bits(amax_bits);
  if (amax < 1e-4f) amax = 1e-4f;
  const float s0 = __fdiv_rn(amax, 448.0f);
  const uint32_t s0_bits = bits_of(s0);
  if (s0_bits >= kF32InfBits) return s0;
  return float_from_bits((s0_bits + 0x7FFFFFu) & kF32InfBits);
}

// One RoPE term r = a*c + b*s, the sign of the formula folded into b: the
// product with sin is rounded first, the product with cos is fused into the
// FMA (the profile's pattern for every MQA and indexer term).
// RN((-x) * s) == -RN(x * s), so negating b before the product is the same
// as subtracting the rounded product.
__device__ inline float rope_term(float a, float c, float b, float s) { return __fmaf_rn(a, c, __fmul_rn(b, s)); }

// Element `index` of the cache row of `position`; a row is [cos(R/2), sin(R/2)].
// Positions are not checked here: qcheck refuses a case whose positions do
// not lie in [0, rows) of the caches before it launches.
__device__ inline float cache_value(const qcheck_plugin_cache& cache, int64_t position, int64_t index) {
  const int64_t offset = position * cache.row_stride + index;
  if (cache.dtype == QCHECK_PLUGIN_F32) return static_cast<const float*>(cache.data)[offset];
  return f32_from_bf16(static_cast<const uint16_t*>(cache.data)[offset]);
}

// Element pointers of [token, head, 0] of an input and of an output view.
// All offsets are int64: token * token_stride passes 2^31 at production
// sizes.
template <typename T>
__device__ inline const T* input_row(const qcheck_plugin_input& view, int64_t token, int64_t head) {
  return static_cast<const T*>(view.data) + token * view.token_stride + head * view.head_stride;
}

template <typename T>
__device__ inline T* output_row(const qcheck_plugin_output& view, int64_t token, int64_t head) {
  return static_cast<T*>(view.data) + token * view.token_stride + head * view.head_stride;
}

// Element j of the interleaved (GPT-J) RoPE of one q_pe row: pairs (2i, 2i+1)
// with c = cos[i], s = sin[i]; r1 = x1*c - x2*s, r2 = x2*c + x1*s.
__device__ inline float mqa_rope(const uint16_t* q_pe, const qcheck_plugin_cache& cache, int64_t position,
                                 int64_t rope_dim, int64_t j) {
  const int64_t i = j / 2;
  const float x = f32_from_bf16(q_pe[j]);
  const float partner = f32_from_bf16(q_pe[j ^ 1]);
  const float b = (j % 2 == 0) ? -partner : partner;
  return rope_term(x, cache_value(cache, position, i), b, cache_value(cache, position, rope_dim / 2 + i));
}

// Element j of the indexer row after its RoPE: the first R elements are
// rotated (NeoX: partner j +- R/2; interleaved: partner j ^ 1), the others
// pass through exactly. No bf16 rounding in between: the f32 value is what
// is quantized.
__device__ inline float indexer_value(const uint16_t* row, const qcheck_plugin_cache& cache, int64_t position,
                                      int64_t rope_dim, int32_t style, int64_t j) {
  const float x = f32_from_bf16(row[j]);
  if (j >= rope_dim) return x;
  const int64_t half = rope_dim / 2;
  int64_t partner, index;
  bool minus;
  if (style == QCHECK_PLUGIN_ROPE_INTERLEAVED) {
    partner = j ^ 1;
    index = j / 2;
    minus = (j % 2) == 0;
  } else {
    minus = j < half;
    partner = minus ? j + half : j - half;
    index = minus ? j : j - half;
  }
  const float x_partner = f32_from_bf16(row[partner]);
  const float b = minus ? -x_partner : x_partner;
  return rope_term(x, cache_value(cache, position, index), b, cache_value(cache, position, half + index));
}

// One MQA row (token t, head h): the RoPE'd q_pe at the back of the packed
// row (or alone on the separate path), and on the packed paths ql_nope at
// the front.
__device__ void mqa_row(const qcheck_plugin_args& a, int64_t t, int64_t h, int lane) {
  const int64_t R = a.rope_dim, L = a.nope_dim;
  const int64_t position = a.positions[t];
  const uint16_t* q_pe = input_row<uint16_t>(a.q_pe, t, h);
  if (a.query_path == QCHECK_PLUGIN_FP8_PACKED) {
    // Both parts are e4m3(RN(x / q_scale)), IEEE division: q_scale need not
    // be a power of two (0.37 in vLLM's test), so no reciprocal is used.
    const float q_scale = float_from_bits(a.q_scale_bits);
    const uint16_t* nope = input_row<uint16_t>(a.ql_nope, t, h);
    uint8_t* out = output_row<uint8_t>(a.query_out, t, h);
    for (int64_t i = lane; i < L; i += kWarpSize) out[i] = e4m3_from_f32(__fdiv_rn(f32_from_bf16(nope[i]), q_scale));
    for (int64_t j = lane; j < R; j += kWarpSize) {
      out[L + j] = e4m3_from_f32(__fdiv_rn(mqa_rope(q_pe, a.mqa_cache, position, R, j), q_scale));
    }
    return;
  }
  uint16_t* out = output_row<uint16_t>(a.query_out, t, h);
  int64_t rope_column = 0;
  if (a.query_path == QCHECK_PLUGIN_BF16_PACKED) {
    rope_column = L;
    // A raw 16-bit copy, so NaN payloads survive. When ql_nope already is
    // the front of query_out (the absorbed bmm wrote it there) the copy
    // would store each element onto itself: skip it.
    if (!a.ql_nope_aliased) {
      const uint16_t* nope = input_row<uint16_t>(a.ql_nope, t, h);
      for (int64_t i = lane; i < L; i += kWarpSize) out[i] = nope[i];
    }
  }
  for (int64_t j = lane; j < R; j += kWarpSize) {
    out[rope_column + j] = bf16_from_f32(mqa_rope(q_pe, a.mqa_cache, position, R, j));
  }
}

// One indexer row (token t, indexer head h): RoPE, the row's UE8M0 scale,
// the e4m3 codes of x / scale and the scaled weight. The warp computes the
// amax, shares it, then recomputes each element for its code (the same
// arithmetic, so the same bits) instead of keeping up to 512 values.
__device__ void indexer_row(const qcheck_plugin_args& a, int64_t t, int64_t h, int lane) {
  const int64_t R = a.rope_dim, D = a.index_dim;
  const int64_t position = a.positions[t];
  const uint16_t* row = input_row<uint16_t>(a.index_q, t, h);

  // amax over |x| with NaN lanes left out. Non-negative floats order as
  // their bit patterns, so the max is taken on the bits (an all-NaN row
  // keeps 0, which the floor then lifts to 1e-4).
  uint32_t amax_bits = 0;
  for (int64_t j = lane; j < D; j += kWarpSize) {
    const uint32_t magnitude =
        bits_of(indexer_value(row, a.indexer_cache, position, R, a.indexer_rope, j)) & kF32AbsMask;
    if (magnitude <= kF32InfBits && magnitude > amax_bits) amax_bits = magnitude;
  }
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    const uint32_t other = __shfl_xor_sync(0xFFFFFFFFu, amax_bits, offset);
    if (other > amax_bits) amax_bits = other;
  }
  const float scale = ue8m0_scale(amax_bits);

  // Codes of RN(x / scale). scale is a power of two, so the quotient is
  // exact unless it is subnormal, where IEEE division rounds it as the
  // profile does; x / Inf is +-0 and Inf / Inf is NaN (0x7F).
  uint8_t* codes = output_row<uint8_t>(a.index_q_fp8, t, h);
  for (int64_t j = lane; j < D; j += kWarpSize) {
    codes[j] = e4m3_from_f32(__fdiv_rn(indexer_value(row, a.indexer_cache, position, R, a.indexer_rope, j), scale));
  }

  if (lane != 0) return;
  // The weight: ((w * scale) * softmax_scale) * head_scale, three fp32
  // roundings in that order. head_stride of the weights is their column
  // stride, which need not be 1.
  const int64_t w_offset = t * a.index_weights.token_stride + h * a.index_weights.head_stride;
  const float w = a.index_weights_dtype == QCHECK_PLUGIN_F32
                      ? static_cast<const float*>(a.index_weights.data)[w_offset]
                      : f32_from_bf16(static_cast<const uint16_t*>(a.index_weights.data)[w_offset]);
  const float weight = __fmul_rn(__fmul_rn(__fmul_rn(w, scale), float_from_bits(a.softmax_scale_bits)),
                                 float_from_bits(a.head_scale_bits));
  const int64_t out_offset = t * a.index_weights_out.token_stride + h * a.index_weights_out.head_stride;
  if (a.index_weights_out_dtype == QCHECK_PLUGIN_F32) {
    // Stored NaNs are the canonical 0x7FFFFFFF, as GPU arithmetic makes
    // them; pinned here so that no input NaN's payload can leak through.
    const bool is_nan = (bits_of(weight) & kF32AbsMask) > kF32InfBits;
    static_cast<float*>(a.index_weights_out.data)[out_offset] = is_nan ? float_from_bits(kF32CanonicalNan) : weight;
  } else {
    static_cast<uint16_t*>(a.index_weights_out.data)[out_offset] = bf16_from_f32(weight);
  }
}

// Rows [0, H) of a token are its MQA heads, rows [H, H + NI) its indexer
// heads (none without the indexer, whose outputs are then never touched).
// Each row belongs to one warp, so the warp's branches and its shuffle are
// uniform.
__global__ void __launch_bounds__(kThreadsPerBlock) fused_q_kernel(const qcheck_plugin_args a) {
  const int lane = int(threadIdx.x) % kWarpSize;
  const int warp = int(threadIdx.x) / kWarpSize;
  const int64_t rows = a.mqa_heads + (a.has_indexer ? a.indexer_heads : 0);
  for (int64_t t = blockIdx.x; t < a.num_tokens; t += gridDim.x) {
    for (int64_t row = int64_t(blockIdx.y) * kRowsPerBlock + warp; row < rows;
         row += int64_t(gridDim.y) * kRowsPerBlock) {
      if (row < a.mqa_heads) {
        mqa_row(a, t, row, lane);
      } else {
        indexer_row(a, t, row - a.mqa_heads, lane);
      }
    }
  }
}

void set_message(char* message, size_t message_size, const char* text) {
  if (message != nullptr && message_size > 0) snprintf(message, message_size, "%s", text);
}

bool is_float_type(int32_t dtype) { return dtype == QCHECK_PLUGIN_F32 || dtype == QCHECK_PLUGIN_BF16; }

// Refuses a value that no enum of the header names rather than guessing
// (qcheck validates the rest of a case before it calls launch).
bool args_supported(const qcheck_plugin_args& a, char* message, size_t message_size) {
  const char* problem = nullptr;
  if (a.query_path < QCHECK_PLUGIN_FP8_PACKED || a.query_path > QCHECK_PLUGIN_BF16_SEPARATE) {
    problem = "query_path is not one of fp8 packed, bf16 packed, bf16 separate";
  } else if (a.num_tokens < 0 || a.mqa_heads < 1 || (a.has_indexer && a.indexer_heads < 1)) {
    problem = "T must be >= 0, H >= 1, and NI >= 1 with the indexer";
  } else if (!is_float_type(a.mqa_cache.dtype)) {
    problem = "the MQA cache dtype is neither f32 nor bf16";
  } else if (a.has_indexer && a.indexer_rope != QCHECK_PLUGIN_ROPE_NEOX &&
             a.indexer_rope != QCHECK_PLUGIN_ROPE_INTERLEAVED) {
    problem = "indexer_rope is neither NeoX nor interleaved";
  } else if (a.has_indexer && (!is_float_type(a.indexer_cache.dtype) || !is_float_type(a.index_weights_dtype) ||
                               !is_float_type(a.index_weights_out_dtype))) {
    problem = "an indexer cache or weights dtype is neither f32 nor bf16";
  }
  if (problem == nullptr) return true;
  set_message(message, message_size, problem);
  return false;
}

// Asynchronous on `stream`, and capturable in a CUDA graph: one kernel
// launch, no synchronization, allocation or copy.
int launch(const qcheck_plugin_args* args, void* stream, char* message, size_t message_size) {
  if (args == nullptr || args->struct_size < sizeof(qcheck_plugin_args)) {
    set_message(message, message_size, "qcheck_plugin_args is older than this plugin (struct_size too small)");
    return 1;
  }
  const qcheck_plugin_args& a = *args;
  if (!args_supported(a, message, message_size)) return 1;
  if (a.num_tokens == 0) return 0;  // T = 0 is a valid no-op: launch nothing

  const int64_t rows = a.mqa_heads + (a.has_indexer ? a.indexer_heads : 0);
  const int64_t row_groups = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
  const dim3 grid(unsigned(a.num_tokens < kMaxTokenBlocks ? a.num_tokens : kMaxTokenBlocks),
                  unsigned(row_groups < kMaxRowGroupBlocks ? row_groups : kMaxRowGroupBlocks));
  fused_q_kernel<<<grid, kThreadsPerBlock, 0, static_cast<cudaStream_t>(stream)>>>(a);
  // A bad launch (no device, an image built for another architecture) shows
  // here; a fault inside the kernel shows at qcheck's synchronization.
  const cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess) {
    char text[256];
    snprintf(text, sizeof text, "fused_q_kernel launch failed: %s (%s)", cudaGetErrorString(error),
             cudaGetErrorName(error));
    set_message(message, message_size, text);
    return 1;
  }
  return 0;
}

// Every case the header can describe: each path, with and without the
// indexer, both indexer RoPE styles, f32 and bf16 caches and weights,
// ql_nope apart or aliased, any strides; no list of dims and no limits (the
// grid loops over tokens and rows). Only the fields of the caller's
// struct_size are written, so an older qcheck's shorter struct is safe.
void domain(qcheck_plugin_domain* out) {
  if (out == nullptr) return;
  qcheck_plugin_domain d;
  memset(&d, 0, sizeof d);
  d.query_paths =
      (1u << QCHECK_PLUGIN_FP8_PACKED) | (1u << QCHECK_PLUGIN_BF16_PACKED) | (1u << QCHECK_PLUGIN_BF16_SEPARATE);
  d.indexer = 1u | 2u;  // without and with
  d.indexer_ropes = (1u << QCHECK_PLUGIN_ROPE_NEOX) | (1u << QCHECK_PLUGIN_ROPE_INTERLEAVED);
  d.cache_dtypes = (1u << QCHECK_PLUGIN_F32) | (1u << QCHECK_PLUGIN_BF16);
  d.weights_dtypes = (1u << QCHECK_PLUGIN_F32) | (1u << QCHECK_PLUGIN_BF16);
  d.weights_out_dtypes = (1u << QCHECK_PLUGIN_F32) | (1u << QCHECK_PLUGIN_BF16);
  d.aliasing = 1u | 2u;  // apart and aliased
  d.contiguous_only = 0;
  const uint32_t caller_size = out->struct_size;
  d.struct_size = caller_size;
  memcpy(out, &d, caller_size < sizeof d ? caller_size : sizeof d);
}

const qcheck_plugin kPlugin = {
    sizeof(qcheck_plugin),
    QCHECK_PLUGIN_ABI_VERSION,
    "nvcc-only example",
    "qcheck",
    QCHECK_PLUGIN_MEMORY_CUDA,
    launch,
    domain,
    nullptr,  // no finer check: every case of the domain runs
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const qcheck_plugin* qcheck_plugin_v1(void) { return &kPlugin; }
