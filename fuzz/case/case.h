// A Case: every knob of one fused_q test as a plain field. Everything the
// harness does starts from a Case (decoded from fuzzer bytes, loaded from a
// corpus file, or built by a test grid): the tensors, their layouts and
// values are a pure function of it, so a Case plus its seed reproduces every
// byte of a run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ops/fused_q/args/fused_q_args.h"

namespace qcheck {

// Where a tensor's elements sit in its allocation. Not every layout applies
// to every tensor (validate_case says which):
//   kContiguous   rows packed: strides (N*W, W)
//   kPaddedRows   every head row and every token row followed by `row_padding`
//                 unused elements: strides (N*(W+pad)+pad, W+pad)
//   kHeadMajor    ql_nope only, as production's absorbed bmm writes it:
//                 strides (W, T*W)
//   kWideRowView  q_pe only: the last R elements of a [.., 128 + R] row, as
//                 production's q[..., 128:] view (row 192 when R = 64)
enum class Layout : uint8_t { kContiguous = 0, kPaddedRows = 1, kHeadMajor = 2, kWideRowView = 3 };

// kExactFront: ql_nope is query_out[..., :L] (same address and strides), as
// when the absorbed bmm already wrote it there. Only on the bf16 packed path.
enum class AliasMode : uint8_t { kNone = 0, kExactFront = 1 };

// How positions[t] is chosen, always inside [0, P).
enum class PositionsRecipe : uint8_t {
  kArangeModP = 0,  // t % P, as vLLM's test
  kRandom = 1,      // uniform in [0, P)
  kNearEnd = 2,     // P - 1 - small
  kRepeated = 3,    // a few positions, repeated
};

// How input values are chosen (fuzz/buffers/values.h describes each).
enum class ValueRecipe : uint8_t {
  kNormal = 0,          // noise of magnitude 1, real rotary cos/sin
  kMagnitudes = 1,      // noise scaled by 2^k, k per row
  kSpecials = 2,        // noise with NaN, Inf, +-0, subnormals, 448/464/480, bf16 max mixed in
  kScaleEdges = 3,      // rows whose amax is 448*2^k (or one bf16 ulp either side) or near 1e-4
  kZeroRows = 4,        // all-zero rows among normal ones
  kScaleBand = 5,       // fp32 cos = 1 + m*2^-23, sin = 0 and an element 448*2^k (UE8M0 log2f band)
  kCancellation = 6,    // pairs with x1*c ~= x2*s
  kLargePositions = 7,  // cos/sin rows of positions near 2^20..2^24
  kMixed = 8,           // a recipe chosen per row (and per cache row)
  // Aimed at rules that only some values decide (ops/fused_q/search/rule_reach.h counts them):
  kNanRows = 9,         // rows all NaN, NaN but one finite element, or NaN but +-Inf
  kContraction = 10,    // f32 caches: cos/sin and x solved so that the FMA pattern decides an element of every pair
  kTies = 11,           // exact e4m3 / bf16 ties after the scale, both parities; indexer amax at 448*2^k (+-1 ulp)
};

// Every tensor of a launch (fuzz/case/tensor_plan.h lays them out).
enum class TensorId : uint8_t {
  kPositions,
  kQPe,
  kQlNope,
  kIndexQ,
  kIndexWeights,
  kMqaCache,
  kIndexerCache,
  kQueryOut,
  kIndexQFp8,
  kIndexWeightsOut,
};

// A value written over the generated inputs: how the minimizer makes values
// simple (a row of zeros, one element 1.0) and how a hand-written case pins
// an input. Edits apply in order, after generation; each sets the elements
// it selects to `bits`: the element's bit pattern (bf16 in the low 16 bits,
// f32 in 32), or for positions the position itself.
struct ValueEdit {
  TensorId tensor = TensorId::kQPe;  // an input: positions, q_pe, ql_nope, index_q,
                                     // index_weights, mqa_cache or indexer_cache
  int64_t row = 0;        // first token (of a cache: first cache row)
  int64_t rows = 1;       // rows from there; -1: to the last
  int64_t head = -1;      // one head; -1: every head (positions and caches have one)
  int64_t element = 0;    // first element of each selected (row, head)
  int64_t elements = -1;  // elements from there; -1: to the end of the row
  uint64_t bits = 0;

  bool operator==(const ValueEdit& other) const;
};

// Harness limits on top of the launch limits of validate_fused_q_args.
// The op this case form holds, and the version of its fields: a JSON case
// may name them ("op", "schema"; absent: this op, schema 1), and the
// registry lists the op by this name (ops/fused_q/op.h).
constexpr const char* kCaseOp = "fused_q";
constexpr uint16_t kCaseSchema = 1;
// The refusal of a file's "op" that is not kCaseOp: `where` names the key
// ("field op", "domain: op", ...), `shown` the value as the file wrote it.
std::string not_this_op(const std::string& where, const std::string& shown);

struct CaseLimits {
  static constexpr int64_t kMaxTokens = int64_t(1) << 24;
  static constexpr int64_t kMaxCacheRows = int64_t(1) << 26;
  // Up to 2^26: rows that far apart make a view of few elements span 2^32
  // (the limit cases of fuzz/mutator/case_mutator.h); padding is not filled
  // with values, so it costs memory, not time.
  static constexpr int64_t kMaxRowPadding = int64_t(1) << 26;
  static constexpr int64_t kMaxWeightsColumnStride = 64;
  // All tensors of a case on the host. A case holds at most
  // memory_limit_bytes, 1 GiB unless it says more; a production-size case
  // (GLM-5 TP4 at T = 65536 needs about 2.5 GB) raises its own limit up to 8 GiB.
  // The verdict keeps three sets of tensors and checks the host has room.
  static constexpr uint64_t kDefaultMemoryBytes = uint64_t(1) << 30;
  static constexpr uint64_t kMaxMemoryBytes = uint64_t(8) << 30;
  static constexpr size_t kMaxProfileNameLength = 32;
  static constexpr size_t kMaxEdits = 4096;
};

struct Case {
  // Dimensions (names as in FusedQArgs).
  int64_t num_tokens = 1;      // T
  int64_t mqa_heads = 16;      // H
  int64_t indexer_heads = 32;  // NI (kept when has_indexer is false: the outputs
                               // still exist and must stay untouched)
  int64_t index_dim = 128;     // D
  int64_t rope_dim = 64;       // R
  int64_t nope_dim = 512;      // L

  QueryPath query_path = QueryPath::kBf16Packed;
  bool has_indexer = true;
  RopeStyle indexer_rope = RopeStyle::kNeox;
  FloatType mqa_cache_dtype = FloatType::kF32;
  FloatType indexer_cache_dtype = FloatType::kF32;
  FloatType weights_dtype = FloatType::kF32;
  FloatType weights_out_dtype = FloatType::kF32;

  // Input layouts.
  Layout q_pe_layout = Layout::kContiguous;     // contiguous, padded rows, wide-row view
  Layout ql_nope_layout = Layout::kContiguous;  // contiguous, padded rows, head-major
  Layout index_q_layout = Layout::kContiguous;  // contiguous, padded rows
  Layout weights_layout = Layout::kContiguous;  // contiguous, padded rows
  Layout mqa_cache_layout = Layout::kContiguous;
  Layout indexer_cache_layout = Layout::kContiguous;
  int64_t weights_column_stride = 1;  // elements between heads of a weights row
  // Output layouts: contiguous or padded rows.
  Layout query_out_layout = Layout::kContiguous;
  Layout index_q_fp8_layout = Layout::kContiguous;
  Layout weights_out_layout = Layout::kContiguous;
  int64_t row_padding = 8;  // elements, for every kPaddedRows layout

  AliasMode alias = AliasMode::kNone;

  int64_t cache_rows = 8192;  // P, rows of each cos/sin cache
  PositionsRecipe positions = PositionsRecipe::kArangeModP;
  ValueRecipe values = ValueRecipe::kNormal;

  // fp32 bit patterns (SEMANTICS.md: q_scale 1.0 in production;
  // softmax_scale = RN(D^-0.5), head_scale = RN(NI^-0.5)).
  uint32_t q_scale_bits = 0x3F800000u;
  uint32_t softmax_scale_bits = 0x3DB504F3u;  // default_softmax_scale_bits(128)
  uint32_t head_scale_bits = 0x3E3504F3u;     // default_head_scale_bits(32)

  uint64_t seed = 0;
  std::string profile = "qcheck";
  // The cap on all of the case's host tensors together, in [1, 8 GiB].
  uint64_t memory_limit_bytes = CaseLimits::kDefaultMemoryBytes;
  // Values written over the generated inputs (usually none).
  std::vector<ValueEdit> edits;

  bool operator==(const Case& other) const;
  bool operator!=(const Case& other) const { return !(*this == other); }
};

// Sets softmax_scale_bits and head_scale_bits from D and NI (the defaults).
void set_default_scales(Case& c);
// Whether the case's softmax_scale and head_scale are those of its D and NI
// (what set_default_scales writes): the generator and the mutator keep such
// a case's scales following its shape as they change D and NI.
bool scales_follow_shape(const Case& c);

// The small case tests and the seed corpus start from: T = 17 (one full
// block of 16 and a one-token tail), odd H = 3, NI = 2, D = 32 with a
// pass-through part (R = 8), L = 16, a cache of 40 rows; seed 0.
Case small_case();

// The kind of case a fuzzer reports, for the minimizer's tests and examples:
// T = 41, H = 5, NI = 3, D = 16, R = 10, L = 16, padded q_pe and index_q rows,
// random positions, bf16 weights, a cache of 77 rows; seed 12345.
Case reported_case();

// "" when the case is valid, else one line naming the field and the limit:
// enums in range, dims as validate_fused_q_args plus the harness limits,
// layouts allowed for their tensor, the alias only where it can exist, a
// known profile, q_scale usable by the profile, the memory cap, and every
// edit inside an input the case has.
std::string validate_case(const Case& c);

// "" when edit `index` of a case whose other fields are valid selects
// elements of an input the case has and holds a value that element can
// take, else one line naming the edit and the limit.
std::string validate_edit(const Case& c, size_t index);

// A one-line summary ("T=17 H=8 NI=32 D=128 R=64 L=512 bf16-packed ...").
std::string describe(const Case& c);

}  // namespace qcheck
