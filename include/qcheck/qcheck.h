/* qcheck.h: the C API of libqcheck, the door for kernels that live outside this
 * repository (the Python package qcheck is built on it).
 *
 * libqcheck holds no CUDA: it writes a case's inputs into buffers the caller
 * gives it and judges the outputs the caller hands back; the caller moves the
 * bytes to and from its device and runs its kernel. Every function returns a
 * qcheck_status and, when it is not QCHECK_OK, writes one line into the
 * caller's message buffer (if given); no function aborts or exits. Every
 * struct the caller fills or reads starts with its own size (struct_size),
 * so a newer library can read an older caller's struct and the reverse.
 *
 * The data path is the harness's (DESIGN.md): a case -> a tensor plan of
 * guarded buffers (sentinel bytes around each, view padding, outputs
 * poisoned) -> the caller's kernel runs twice, once on buffers poisoned with
 * poison A and once with poison B -> the verdict compares every byte with the
 * oracle's under a named profile.
 */
#ifndef QCHECK_CAPI_QCHECK_H_
#define QCHECK_CAPI_QCHECK_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Versions only add functions: a caller built against version N works with
 * every library of version N or later. 5 added qcheck_ops_json; 6 added
 * fused_k's cases (qcheck_case_from_seed_op, qcheck_case_op,
 * qcheck_case_bin_names, the dtypes UINT8 and INT32). */
#define QCHECK_API_VERSION 6u

/* The exit codes of qcheck-replay: pass, mismatch, invalid input, runtime error. */
typedef enum {
  QCHECK_OK = 0,
  QCHECK_MISMATCH = 1,
  QCHECK_INVALID_INPUT = 2,
  QCHECK_RUNTIME_ERROR = 3
} qcheck_status;

/* QCHECK_API_VERSION of the library (a caller checks it is at least its header's). */
uint32_t qcheck_api_version(void);
/* The project's version ("0.4.0"), as the tools' --version print it. */
const char* qcheck_version(void);

/* --- cases ------------------------------------------------------------------ */

typedef struct qcheck_case qcheck_case; /* opaque; free with qcheck_case_free */

/* Decodes a case file's bytes: the binary form (corpus files, libFuzzer
 * artifacts) or JSON (starting with '{'). The case is not validated. */
qcheck_status qcheck_case_decode(const uint8_t* bytes, size_t size, qcheck_case** out, char* message,
                                 size_t message_size);
/* A valid case from the structure-aware mutator's generator; size is "tiny",
 * "usual", "default" or "limit" (the fuzz target's --case-size). */
qcheck_status qcheck_case_from_seed(uint64_t seed, const char* size, qcheck_case** out, char* message,
                                    size_t message_size);
/* Under size "limit": when execution number `execution` (0-based) of a fuzz
 * loop is due for a case at the hardware's limits (T past 65535, a view past
 * 2^32 elements, a real model at production T), that case in *out, the
 * loop's limit case number `index`; else (and under any other size) *out is
 * NULL. A limit case holds up to about 4.5 GB of tensors. */
qcheck_status qcheck_case_limit(uint64_t seed, int64_t execution, int64_t index, const char* size, qcheck_case** out,
                                char* message, size_t message_size);
/* A copy of `c` changed by the mutator (one to three fields), still valid. */
qcheck_status qcheck_case_mutate(const qcheck_case* c, uint64_t seed, const char* size, qcheck_case** out,
                                 char* message, size_t message_size);
/* A copy of a valid case `c` whose compile key (below) is c's: values,
 * positions, scales and seed changed, T, P, paddings and the weights' column
 * stride within their classes. The compile-aware fuzz loop's warm mutation. */
qcheck_status qcheck_case_mutate_warm(const qcheck_case* c, uint64_t seed, const char* size, qcheck_case** out,
                                      char* message, size_t message_size);
/* Each field from a or b, then repaired to a valid case. */
qcheck_status qcheck_case_cross_over(const qcheck_case* a, const qcheck_case* b, uint64_t seed, const char* size,
                                     qcheck_case** out, char* message, size_t message_size);
/* Since version 6. A valid case of `op` ("fused_q", "fused_k": qcheck_ops_json
 * lists them) from `seed`; size as above. For fused_k the size bounds the
 * launch's arena: "tiny" 1 MiB, the others 64 MiB.
 *
 * What takes a fused_k case so far: decode (a file naming the op), encode,
 * validate, describe, digest, mutate, the plan, fill, expected, judge, the
 * verdict's accessors, qcheck_case_bin_names and qcheck_finding_classify
 * (no known entry covers a fused_k finding yet: known entries have fused_q
 * domains). Its plan is one buffer, "arena": the launch's
 * tensors as views into it (caches as [blocks, block_size, entry bytes]
 * UINT8 with their padded strides, the top-k buffer INT32) between gaps of
 * poison that serve as the sentinels; its only profile is "qcheck". Every
 * other function refuses a fused_k case with QCHECK_INVALID_INPUT and a
 * message naming itself. */
qcheck_status qcheck_case_from_seed_op(const char* op, uint64_t seed, const char* size, qcheck_case** out,
                                       char* message, size_t message_size);
/* Since version 6. The op of a case: "fused_q" or "fused_k" ("" for NULL). */
const char* qcheck_case_op(const qcheck_case* c);
/* QCHECK_OK, or QCHECK_INVALID_INPUT with the field and the limit in message. */
qcheck_status qcheck_case_validate(const qcheck_case* c, char* message, size_t message_size);
void qcheck_case_free(qcheck_case* c);

/* Text outputs (encode, describe, reports) are written into out[capacity]:
 * *needed receives the size the whole text needs, its terminating NUL
 * included for text; when capacity is smaller nothing is written and the
 * call returns QCHECK_INVALID_INPUT, so a caller asks again with *needed. */
#define QCHECK_FORM_BINARY 0
#define QCHECK_FORM_JSON 1
qcheck_status qcheck_case_encode(const qcheck_case* c, int form, uint8_t* out, size_t capacity, size_t* needed,
                                 char* message, size_t message_size);
/* The one-line description the reports print ("T=17 H=3 NI=2 ..."). */
qcheck_status qcheck_case_describe(const qcheck_case* c, char* out, size_t capacity, size_t* needed);
/* What a JIT compiler specializing as Triton does by default sees of a
 * valid case, one line (fuzz/mutator/compile_key.h): paths and flags, per
 * tensor its dtype, dims (T and P as classes), stride classes (1, multiple of
 * 16, 64-bit, other) and pointer alignment. QCHECK_INVALID_INPUT for an
 * invalid case. */
qcheck_status qcheck_case_compile_key(const qcheck_case* c, char* out, size_t capacity, size_t* needed);
/* The 16 hex digits that name corpus files (XXH64 of the binary form). */
qcheck_status qcheck_case_digest(const qcheck_case* c, char* out, size_t capacity, size_t* needed);

/* --- the tensor plan ------------------------------------------------------------- */

#define QCHECK_DTYPE_INT64 0 /* positions */
#define QCHECK_DTYPE_F32 1
#define QCHECK_DTYPE_BF16 2  /* held as 16-bit words */
#define QCHECK_DTYPE_E4M3 3  /* held as 8-bit words (OCP E4M3FN) */
#define QCHECK_DTYPE_UINT8 4 /* since version 6: bytes (fused_k's paged caches) */
#define QCHECK_DTYPE_INT32 5 /* since version 6 (fused_k's top-k buffer) */

#define QCHECK_ROLE_INPUT 0
#define QCHECK_ROLE_OUTPUT 1
#define QCHECK_ROLE_UNTOUCHED_OUTPUT 2 /* must stay as it is (the indexer outputs without an indexer) */

/* One guarded allocation: [sentinel | payload | sentinel]. The caller
 * allocates `bytes` for it (on its device, and on the host for the copies). */
typedef struct {
  uint32_t struct_size;
  char name[32];     /* the tensor that owns it */
  uint64_t bytes;    /* the whole allocation, sentinels included */
  int32_t is_output; /* holds an output (with ql_nope aliased into its front, maybe) */
} qcheck_buffer_info;

/* One tensor as a view into a buffer: element [t, h, i] is at
 * offset_bytes + (t * strides[0] + h * strides[1] + i * strides[2]) * element size
 * from the start of buffer `buffer`'s allocation. Positions are [T] (ndim 1),
 * caches [P, R] (ndim 2), the rest [T, heads, width] (ndim 3). */
typedef struct {
  uint32_t struct_size;
  char name[32]; /* positions, q_pe, ql_nope, index_q, index_weights, mqa_cache, indexer_cache,
                    query_out, index_q_fp8, index_weights_out */
  int32_t role;
  int32_t dtype;
  int32_t ndim;
  int64_t shape[3];
  int64_t strides[3]; /* in elements */
  int32_t buffer;     /* index into the plan's buffers */
  uint64_t offset_bytes;
} qcheck_tensor_info;

/* The case's buffers and tensors, in the plan's order. Arrays of
 * `capacity` entries (struct_size set by the caller); *count receives how
 * many there are (ask with capacity 0 first). ql_nope is a view into
 * query_out's buffer when the case aliases it (*aliased set to 1). */
qcheck_status qcheck_plan_buffers(const qcheck_case* c, qcheck_buffer_info* out, size_t capacity, size_t* count,
                                  char* message, size_t message_size);
qcheck_status qcheck_plan_tensors(const qcheck_case* c, qcheck_tensor_info* out, size_t capacity, size_t* count,
                                  int32_t* aliased, char* message, size_t message_size);

/* Every byte of every buffer as a run starts: sentinels, view padding,
 * the generated inputs, outputs filled with poison 0 (A: 0xFF bytes) or 1
 * (B: 0x5B bytes). buffers[i] points at buffer i's allocation (bytes of
 * qcheck_buffer_info). The caller copies them to its device, runs the
 * kernel, copies every byte back. */
qcheck_status qcheck_fill_buffers(const qcheck_case* c, int poison, uint8_t* const* buffers, size_t buffer_count,
                                  char* message, size_t message_size);

/* The oracle's outputs under `profile` ("qcheck", "vllm-triton", ...; NULL or
 * "" for the case's), written into buffers laid out as the plan says (the
 * inputs and guards as qcheck_fill_buffers writes them with poison A). */
qcheck_status qcheck_expected_buffers(const qcheck_case* c, const char* profile, uint8_t* const* buffers,
                                      size_t buffer_count, char* message, size_t message_size);

/* The verdict over what the kernel left in the buffers of its two runs
 * (run A started from poison 0, run B from poison 1): every output element
 * bit for bit against the oracle, sentinels and padding untouched, inputs
 * unchanged, elements neither run wrote, runs that differ. run_b may be
 * NULL for a kernel run once (on poison 0): then an output element that
 * still holds poison A's bits is reported unwritten, and nothing is said of
 * runs that differ. */
typedef struct {
  uint32_t struct_size;
  const char* profile; /* NULL or "": the case's; a name of qcheck_profile_names,
                          NAME+any-fma (any contraction pattern per row), or
                          "auto" (every named profile; fuzz/verdict/judge.h) */
  const char* kernel;  /* the name the reports give the kernel; NULL: "outside kernel" */
  uint32_t max_listed; /* mismatches listed in the reports (0: 20) */
  /* Added in version 2 (a caller's older, shorter struct is read without it):
   * the buffers of a third run, the launch captured in a CUDA graph and
   * replayed, on poison 0; every byte that differs from run_a's is a
   * mismatch of class graph-replay-differs. NULL: no graph run. */
  const uint8_t* const* run_graph;
} qcheck_verdict_options;

typedef struct qcheck_verdict qcheck_verdict; /* opaque; free with qcheck_verdict_free */

qcheck_status qcheck_judge(const qcheck_case* c, const qcheck_verdict_options* options, const uint8_t* const* run_a,
                           const uint8_t* const* run_b, size_t buffer_count, qcheck_verdict** out, char* message,
                           size_t message_size);
/* Kernel against kernel: the outputs of two kernels' runs on the same case
 * and poison, `first`'s taking the oracle's place (the verdict's report is
 * where `second` differs from `first`; its text names both). */
qcheck_status qcheck_differ(const qcheck_case* c, const char* first_name, const uint8_t* const* first,
                            const char* second_name, const uint8_t* const* second, size_t buffer_count,
                            uint32_t max_listed, qcheck_verdict** out, char* message, size_t message_size);
/* The verdict's exit code: 0 pass, 1 mismatch, 2 invalid input, 3 runtime error. */
int qcheck_verdict_exit_code(const qcheck_verdict* v);
/* "tensor/part/class" of the most severe mismatch, "" on a pass. */
qcheck_status qcheck_verdict_signature(const qcheck_verdict* v, char* out, size_t capacity, size_t* needed);
/* Under profile "auto": the profiles that explain the outputs bit for bit,
 * comma-separated ("" when none does, or without auto). */
qcheck_status qcheck_verdict_profiles(const qcheck_verdict* v, char* out, size_t capacity, size_t* needed);
/* qcheck-replay's text and JSON reports. */
qcheck_status qcheck_verdict_text(const qcheck_verdict* v, char* out, size_t capacity, size_t* needed);
qcheck_status qcheck_verdict_json(const qcheck_verdict* v, char* out, size_t capacity, size_t* needed);
void qcheck_verdict_free(qcheck_verdict* v);

/* --- semantic bins (the fuzz loop's feedback) ------------------------------------------ */

/* The semantic bins a case reaches: its shape class, T % 16, heads, path,
 * dtypes, layouts, alias, recipes, profile, q_scale class, and, from its
 * inputs under `profile` (NULL: the case's), the special values and UE8M0
 * exponent buckets. bins[i] is set to 1 or 0 for every bin (*count of
 * them; ask with capacity 0). A kernel that gives no coverage (Triton) is
 * fuzzed with these: a case that reaches a bin no earlier case reached is
 * kept. Not thread-safe. */
qcheck_status qcheck_case_bins(const qcheck_case* c, const char* profile, uint8_t* bins, size_t capacity,
                               size_t* count, char* message, size_t message_size);
/* Since version 6. The semantic bins of a case of any op from its fields
 * alone (core/op/any_bins.h: "FIELD=CHOICE", "FIELD=true", "FIELD=4..7",
 * "FIELD:subnormal"), one name per line: the fuzz loop's feedback for an
 * op without bins of its own (fused_k). */
qcheck_status qcheck_case_bin_names(const qcheck_case* c, char* out, size_t capacity, size_t* needed);
/* The verdict's bin (pass, or each mismatch class it found), the same way. */
qcheck_status qcheck_verdict_bins(const qcheck_verdict* v, uint8_t* bins, size_t capacity, size_t* count);
/* A bin's name, "group/bin" ("tokens/T=17..31"). */
qcheck_status qcheck_bin_name(size_t index, char* out, size_t capacity, size_t* needed);

/* --- the minimizer, for a kernel the caller runs ------------------------------------------- */

/* The caller's judge of one candidate: it runs its kernel on `candidate`
 * (twice, as qcheck_judge wants) and returns the verdict's exit code (0..3),
 * writing into failure[failure_size] the primary failure on the first line
 * (the verdict's signature, or "runtime error: ..." when the kernel raised)
 * and, on the following lines, every signature of the verdict. */
typedef int (*qcheck_evaluate_fn)(const qcheck_case* candidate, void* user, char* failure, size_t failure_size);

typedef struct qcheck_domain qcheck_domain; /* the cases a kernel supports (below) */

typedef struct {
  uint32_t struct_size;
  double budget_seconds; /* for the shrink passes; 0: 60 */
  int32_t explain;       /* 1: change each field of the result alone afterwards */
  /* Added in version 3 (an older, shorter struct is read without it): the
   * kernel's domain; no candidate outside it is proposed. NULL: any case. */
  const qcheck_domain* domain;
} qcheck_minimize_options;

typedef struct qcheck_minimized qcheck_minimized; /* opaque; free with qcheck_minimized_free */

/* Shrinks `c`, which fails under `evaluate`, to the smallest case that fails
 * the same way (the qcheck-minimize passes: tools/minimize). The caller runs
 * the determinism gate first (its kernel, its runs). */
qcheck_status qcheck_minimize(const qcheck_case* c, qcheck_evaluate_fn evaluate, void* user,
                              const qcheck_minimize_options* options, qcheck_minimized** out, char* message,
                              size_t message_size);
/* The minimized case (a new handle). */
qcheck_status qcheck_minimized_case(const qcheck_minimized* m, qcheck_case** out);
/* report.txt around `differs` (the minimized case's verdict text), with the
 * replay command; and test_regression.py: a pytest test that runs
 * `adapter` ("MODULE:FUNCTION") on the minimized case under `profile` (NULL:
 * the case's) and expects it to pass. */
qcheck_status qcheck_minimized_report(const qcheck_minimized* m, const char* kernel, const char* differs,
                                      const char* replay_command, char* out, size_t capacity, size_t* needed);
qcheck_status qcheck_minimized_pytest(const qcheck_minimized* m, const char* adapter, const char* profile,
                                      const char* device, char* out, size_t capacity, size_t* needed);
void qcheck_minimized_free(qcheck_minimized* m);

/* --- plugins: kernels built outside the project (qcheck_plugin.h) --------------------------- */

typedef struct qcheck_loaded_plugin qcheck_loaded_plugin; /* loaded once per process, never freed */

/* Loads the plugin library at `path` (later calls with the same path give
 * the same handle): entry point, ABI version and profile are checked. */
qcheck_status qcheck_plugin_load(const char* path, const qcheck_loaded_plugin** out, char* message,
                                 size_t message_size);
/* {"path", "name", "profile", "memory": "cuda"|"host", "domain": {...}} as JSON. */
qcheck_status qcheck_plugin_info(const qcheck_loaded_plugin* p, char* out, size_t capacity, size_t* needed);
/* QCHECK_OK when the case is inside the plugin's domain, else
 * QCHECK_INVALID_INPUT with "outside the domain of plugin ...". */
qcheck_status qcheck_plugin_check_case(const qcheck_loaded_plugin* p, const qcheck_case* c, char* message,
                                       size_t message_size);
/* A copy of `c` moved into the plugin's declared domain (the fuzz loop's
 * repair); it may still be invalid or outside the domain. */
qcheck_status qcheck_plugin_fit_case(const qcheck_loaded_plugin* p, const qcheck_case* c, qcheck_case** out,
                                     char* message, size_t message_size);
/* Launches the plugin on the case's buffers: allocations[i] is the address
 * of buffer i's whole allocation (sentinels included) in the plugin's memory
 * (device addresses for a CUDA plugin, host for a host one), stream its
 * cudaStream_t (NULL: the default stream). It does not synchronize; the
 * caller does and copies every byte back. QCHECK_RUNTIME_ERROR with the
 * plugin's message when its launch fails, QCHECK_INVALID_INPUT outside its
 * domain. */
qcheck_status qcheck_plugin_launch(const qcheck_loaded_plugin* p, const qcheck_case* c, uint8_t* const* allocations,
                                   size_t allocation_count, void* stream, char* message, size_t message_size);

/* --- domains: the cases a kernel supports (fuzz/domain/domain.h) ------------------------------ */

/* A domain from its JSON form (fuzz/domain/domain_json.h: query_paths,
 * indexer, alias, indexer_ropes, the dtype lists, contiguous,
 * unit_inner_stride, dims with min/max/values/power_of_two/multiple_of,
 * relations like "mqa_heads <= 4 * indexer_heads"); every key optional.
 * QCHECK_INVALID_INPUT naming the key when it is not one. */
qcheck_status qcheck_domain_parse(const char* json, qcheck_domain** out, char* message, size_t message_size);
/* Its canonical JSON form (the keys that are not "any"). */
qcheck_status qcheck_domain_json(const qcheck_domain* d, char* out, size_t capacity, size_t* needed);
/* QCHECK_OK when the case is inside, else QCHECK_INVALID_INPUT with the
 * first field outside: "FIELD VALUE (the domain allows ...)". */
qcheck_status qcheck_domain_check_case(const qcheck_domain* d, const qcheck_case* c, char* message,
                                       size_t message_size);
/* A copy of the case moved inside with the smallest changes (the fuzz
 * loop's repair); it may still be invalid or outside (rules that
 * contradict): check both. */
qcheck_status qcheck_domain_fit_case(const qcheck_domain* d, const qcheck_case* c, qcheck_case** out, char* message,
                                     size_t message_size);
void qcheck_domain_free(qcheck_domain* d);

/* --- known bugs and finding groups (fuzz/verdict/known.h) ---------------------------------------- */

typedef struct qcheck_known qcheck_known; /* opaque; free with qcheck_known_free */

/* A known-bugs list from its JSON form: {"known": [{"signature": PATTERN,
 * "domain": {...}, "note": "..."}, ...]}; PATTERN is "tensor/part/class"
 * with '*' for any run of characters. */
qcheck_status qcheck_known_parse(const char* json, qcheck_known** out, char* message, size_t message_size);
/* How a finding counts: `signatures` holds every signature of its verdict,
 * one per line ("tensor/part/class", or the line of a runtime error).
 * *known_entry is the index of the entry that covers all of them (NULL
 * known: none), else -1; group[capacity] gets the finding's group: where
 * it differs (the tensor/part pairs no entry covers), " + " between them. */
qcheck_status qcheck_finding_classify(const qcheck_known* known, const qcheck_case* c, const char* signatures,
                                      int32_t* known_entry, char* group, size_t capacity, size_t* needed);
void qcheck_known_free(qcheck_known* k);

/* The names of the known profiles, comma-separated. */
qcheck_status qcheck_profile_names(char* out, size_t capacity, size_t* needed);

/* Since version 5. The ops of the family this library knows, as a JSON list:
 * per op {"op", "schema", "description", "fields": [{"name", "kind",
 * "required", "choices" (enumerations), "default"}], "tensors": [{"name",
 * "role", "dtypes", "shape", "when"}], "parts", "profiles"}. The cases of
 * the functions above are fused_q's unless they say otherwise (fused_k:
 * qcheck_case_from_seed_op). */
qcheck_status qcheck_ops_json(char* out, size_t capacity, size_t* needed);

#ifdef __cplusplus
}
#endif

#endif /* QCHECK_CAPI_QCHECK_H_ */
