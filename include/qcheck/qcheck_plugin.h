/* qcheck_plugin.h: the C ABI of a kernel plugin, the door for a fused_q kernel
 * compiled outside this project (nvcc on a GPU host, another build system).
 *
 * A plugin is a shared library that exports one function,
 *
 *     const qcheck_plugin* qcheck_plugin_v1(void);
 *
 * returning a description that lives as long as the library. qcheck loads it
 * with `--backend plugin:PATH` (qcheck-replay, qcheck-minimize, the fused_q
 * fuzz target, qcheck.plugin(PATH) in Python), lays a case's tensors out in
 * guarded buffers on the plugin's memory (CUDA device memory, or host memory
 * for a CPU kernel), calls `launch` twice (on outputs poisoned two ways) and
 * judges every byte against the oracle under the profile the plugin names.
 *
 * This header needs nothing but <stddef.h> and <stdint.h> and describes the
 * launch as plain data: a plugin author includes it and nothing else of
 * qcheck. Every struct starts with its own size (struct_size) so that a newer
 * qcheck reads an older plugin's structs and the reverse; fields are only
 * ever added at the end.
 *
 * Shapes (element [t, h, i] of a [T, heads, width] tensor is at
 * data + t * token_stride + h * head_stride + i, counted in elements; the
 * last dimension always has unit stride):
 *   positions          [T]             int64
 *   q_pe               [T, H, R]       bf16
 *   ql_nope            [T, H, L]       bf16   (not read on the separate path)
 *   index_q            [T, NI, D]      bf16
 *   index_weights      [T, NI]         fp32 | bf16 (head_stride: the column stride)
 *   mqa/indexer cache  [P, R]          fp32 | bf16, row = [cos(R/2) | sin(R/2)]
 *   query_out          fp8 packed  [T, H, L+R] e4m3; bf16 packed [T, H, L+R] bf16
 *                      (the front holds ql_nope, maybe already: ql_nope_aliased);
 *                      bf16 separate [T, H, R] bf16
 *   index_q_fp8        [T, NI, D]      e4m3 (OCP E4M3FN)
 *   index_weights_out  [T, NI]         fp32 | bf16
 * The MQA rope is interleaved; the indexer rope is NeoX or interleaved.
 * Without the indexer the indexer outputs are still passed and must stay as
 * they are (the indexer inputs are NULL then).
 */
#ifndef QCHECK_CAPI_QCHECK_PLUGIN_H_
#define QCHECK_CAPI_QCHECK_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define QCHECK_PLUGIN_ABI_VERSION 1u
#define QCHECK_PLUGIN_ENTRY_NAME "qcheck_plugin_v1"

/* query_path */
#define QCHECK_PLUGIN_FP8_PACKED 0
#define QCHECK_PLUGIN_BF16_PACKED 1
#define QCHECK_PLUGIN_BF16_SEPARATE 2
/* indexer_rope */
#define QCHECK_PLUGIN_ROPE_NEOX 0
#define QCHECK_PLUGIN_ROPE_INTERLEAVED 1
/* dtype of the caches and the weights */
#define QCHECK_PLUGIN_F32 0
#define QCHECK_PLUGIN_BF16 1
/* memory: where the pointers of the args point */
#define QCHECK_PLUGIN_MEMORY_CUDA 0
#define QCHECK_PLUGIN_MEMORY_HOST 1

typedef struct {
  const void* data;
  int64_t token_stride;
  int64_t head_stride;
} qcheck_plugin_input;

typedef struct {
  void* data;
  int64_t token_stride;
  int64_t head_stride;
} qcheck_plugin_output;

typedef struct {
  const void* data;
  int32_t dtype;      /* QCHECK_PLUGIN_F32 or QCHECK_PLUGIN_BF16 */
  int64_t rows;       /* P: every position is < rows */
  int64_t row_stride; /* elements between rows (>= R) */
} qcheck_plugin_cache;

/* One launch. The scales are fp32 bit patterns (q_scale only matters on the
 * fp8 path and is positive, finite and normal there). */
typedef struct {
  uint32_t struct_size;
  int64_t num_tokens;    /* T (0: launch nothing) */
  int64_t mqa_heads;     /* H */
  int64_t indexer_heads; /* NI */
  int64_t index_dim;     /* D, a multiple of 16 */
  int64_t rope_dim;      /* R, even, <= D */
  int64_t nope_dim;      /* L, a multiple of 8 */
  int32_t query_path;
  int32_t has_indexer;
  int32_t indexer_rope;
  int32_t ql_nope_aliased; /* 1: ql_nope is exactly query_out[..., :L] */
  const int64_t* positions;
  qcheck_plugin_cache mqa_cache;
  qcheck_plugin_cache indexer_cache;
  qcheck_plugin_input q_pe;
  qcheck_plugin_input ql_nope;
  qcheck_plugin_input index_q;
  qcheck_plugin_input index_weights;
  int32_t index_weights_dtype;
  qcheck_plugin_output query_out;
  qcheck_plugin_output index_q_fp8;
  qcheck_plugin_output index_weights_out;
  int32_t index_weights_out_dtype;
  uint32_t q_scale_bits;
  uint32_t softmax_scale_bits;
  uint32_t head_scale_bits;
} qcheck_plugin_args;

/* What the kernel supports. qcheck fuzzes only cases inside it (the mutator
 * moves every case into it) and reports a case outside it as outside the
 * plugin's domain, exit 2, not as a finding. Masks have bit (1 << value) set
 * for each supported value; 0 in a mask, a list or a limit means "any". */
typedef struct {
  uint32_t struct_size;
  uint32_t query_paths;        /* 1 << QCHECK_PLUGIN_FP8_PACKED | ... */
  uint32_t indexer;            /* bit 0: without the indexer, bit 1: with it */
  uint32_t indexer_ropes;      /* 1 << QCHECK_PLUGIN_ROPE_NEOX | ... */
  uint32_t cache_dtypes;       /* both caches: 1 << QCHECK_PLUGIN_F32 | ... */
  uint32_t weights_dtypes;     /* index_weights */
  uint32_t weights_out_dtypes; /* index_weights_out */
  uint32_t aliasing;           /* bit 0: ql_nope apart from query_out, bit 1: aliased */
  int32_t contiguous_only;     /* 1: every tensor contiguous, weights column stride 1 */
  int64_t rope_dims[8];        /* the R it supports, 0-terminated (all 0: any) */
  int64_t nope_dims[8];        /* L */
  int64_t index_dims[8];       /* D */
  int64_t max_mqa_heads;       /* H <= this */
  int64_t max_indexer_heads;   /* NI <= this */
  int64_t max_tokens;          /* T <= this */
} qcheck_plugin_domain;

typedef struct {
  uint32_t struct_size;
  uint32_t abi_version; /* QCHECK_PLUGIN_ABI_VERSION */
  const char* name;     /* for reports */
  /* The profile the kernel implements ("qcheck", "vllm-triton", ... or
   * NAME+any-fma); NULL or "": qcheck. --profile overrides it. */
  const char* profile;
  int32_t memory; /* QCHECK_PLUGIN_MEMORY_CUDA or QCHECK_PLUGIN_MEMORY_HOST */
  /* Launches on `stream` (a cudaStream_t; NULL: the default stream; NULL
   * always for host memory) and returns 0, or nonzero with one line in
   * message[message_size]: qcheck reports it as a runtime error with the
   * case saved. It need not synchronize; qcheck does, and a fault in the
   * kernel is reported from there. For a CUDA graph the launch must be
   * capturable: no synchronization, allocation or host copy inside. */
  int (*launch)(const qcheck_plugin_args* args, void* stream, char* message, size_t message_size);
  /* Optional (NULL: any case): fills *out, whose struct_size qcheck has set. */
  void (*domain)(qcheck_plugin_domain* out);
  /* Optional finer check of one launch before it runs (the pointers are
   * NULL): 1 when the kernel supports it, else 0 and why in message. */
  int (*supports)(const qcheck_plugin_args* args, char* message, size_t message_size);
} qcheck_plugin;

typedef const qcheck_plugin* (*qcheck_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* QCHECK_CAPI_QCHECK_PLUGIN_H_ */
