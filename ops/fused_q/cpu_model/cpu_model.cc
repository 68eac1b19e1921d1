// The CPU model of the token-blocked fused_q kernel (seed PR 000: grid
// (cdiv(T, 16), tasks), one program = 16 tokens x one head of one task).
//
// The model walks the grid program by program and, inside a program, computes
// each output element on its own, as one GPU thread would: no row functions
// of the oracle, only the scalar spec's per-element functions
// (numerics/conversions.h, ue8m0.h, rope.h rope_term), so every numeric rule
// still exists once. What the model adds is the kernel's structure: the task
// decoding, the token block with its masked tail, the RoPE partner indexing,
// the strided loads and stores, and the choice of which copies to run. That
// structure is where the planted bugs live (SEMANTICS.md "Bugs this kernel
// family really shipped").
//
// The model follows profile qcheck: the contraction patterns, NaN and overflow
// rules, scale floor and ceiling are read from qcheck_profile() so they are
// named once; its weights order and "no bf16 before quantization" are the
// fixed kernel code below. Its fp32 products, quotients and RoPE terms go
// through product(), quotient() and rope(), plain IEEE operations (rope():
// spec::rope_term) except under the fast-math twin, which flushes
// subnormals there.
//
// Built with -ffp-contract=off like numerics/ (no a*b+c is written here, but
// the products below must stay single roundings).
#include "ops/fused_q/cpu_model/cpu_model.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "numerics/conversions.h"
#include "numerics/float_bits.h"
#include "numerics/profile.h"
#include "numerics/rope.h"
#include "numerics/ue8m0.h"
#include "ops/fused_q/oracle/fused_q_oracle.h"

namespace qcheck {

namespace {

constexpr int64_t kBlockTokens = 16;  // tokens per program (seed PR 000, BLOCK_T)

enum class TaskKind { kMqaRope, kIndexer, kNopePack };

struct Task {
  TaskKind kind;
  int64_t head;
};

// Where the q_pe RoPE of one element finds its partner and its cos/sin column
// (rope.h gives the rule; this is the kernel's per-element indexing of it).
struct RopePartner {
  int64_t partner;
  int64_t column;  // index into cos and sin (each R/2 wide)
  bool minus;      // the partner enters with a minus sign (r1 terms)
};

RopePartner rope_partner(int64_t j, int64_t rope_dim, RopeStyle style) {
  if (style == RopeStyle::kInterleaved) return {j ^ 1, j / 2, (j % 2) == 0};
  const int64_t half = rope_dim / 2;
  if (j < half) return {j + half, j, true};
  return {j - half, j - half, false};
}

class BlockedModel {
 public:
  BlockedModel(const FusedQArgs& args, PlantedCpuBug bug)
      : a_(args), p_(qcheck_profile()), bug_(bug) {}

  void run() const;

 private:
  int64_t task_count() const;
  Task decode_task(int64_t task_id) const;
  int64_t mqa_heads_covered() const;
  bool runs_indexer() const;
  bool runs_nope_pack() const;
  int64_t tokens_in_block(int64_t block) const;

  void mqa_rope_program(int64_t first_token, int64_t tokens, int64_t head) const;
  void indexer_program(int64_t first_token, int64_t tokens, int64_t head) const;
  void nope_pack_program(int64_t first_token, int64_t tokens, int64_t head) const;

  float cache_at(const CacheView& cache, int64_t position, int64_t column) const;
  uint16_t to_bf16(float value) const;
  uint8_t to_e4m3(float value) const;
  uint8_t to_e4m3_ties(float value, bool ties_away) const;
  float flushed(float value) const;
  float product(float a, float b) const;
  float quotient(float x, float divisor) const;
  float rope(float a, float c, float b, float s, Contraction contraction) const;

  const FusedQArgs& a_;
  const Profile p_;
  // The variant: the correct kernel (kNone), one planted bug, or the twin.
  const PlantedCpuBug bug_;
  bool planted(PlantedCpuBug bug) const { return bug_ == bug; }
};

// Pointer to element [token, head, 0] of a strided view (64-bit offsets).
template <typename T, typename View>
T* element(const View& view, int64_t token, int64_t head) {
  return static_cast<T*>(view.data) + token * view.token_stride + head * view.head_stride;
}

float BlockedModel::cache_at(const CacheView& cache, int64_t position, int64_t column) const {
  const int64_t offset = position * cache.row_stride + column;
  if (cache.dtype == FloatType::kF32) return static_cast<const float*>(cache.data)[offset];
  return spec::f32_from_bf16(static_cast<const uint16_t*>(cache.data)[offset]);
}

uint16_t BlockedModel::to_bf16(float value) const {
  // The truncating twin keeps the top 16 bits (what Highway 1.0.3 DemoteTo and
  // hand-written `bits >> 16` do; SEMANTICS.md "Numeric building blocks").
  if (planted(PlantedCpuBug::kTruncatingBf16)) return static_cast<uint16_t>(bits_of(value) >> 16);
  return spec::bf16_from_f32(value, p_.bf16_nan);
}

uint8_t BlockedModel::to_e4m3(float value) const {
  // The twins of SEMANTICS.md's non-saturating e4m3 (torch eager, ml_dtypes):
  // E4m3Overflow::kNan turns overflow and +-Inf into NaN with the input's
  // sign, and keeps a NaN's sign. Each planted bug takes one half of it.
  // (The values come from the host's fp32 arithmetic: on x86 a NaN operand
  // keeps its sign through a division and Inf / Inf is the negative default
  // NaN, so negative NaNs do reach this conversion; RoPE NaNs are canonical.)
  const bool nan = std::isnan(value);
  if ((planted(PlantedCpuBug::kNonSaturatingE4m3) && !nan) || (planted(PlantedCpuBug::kE4m3NanSign) && nan)) {
    return spec::e4m3_from_f32(value, E4m3Overflow::kNan);
  }
  return spec::e4m3_from_f32(value, p_.e4m3_overflow);
}

// to_e4m3, or with ties_away a value exactly halfway between two codes
// goes to the one of larger magnitude (not to the even one).
uint8_t BlockedModel::to_e4m3_ties(float value, bool ties_away) const {
  const uint8_t code = to_e4m3(value);
  if (!ties_away || std::isnan(value) || (code & 0x7F) >= 0x7E) return code;
  const float near = spec::f32_from_e4m3(code), far = spec::f32_from_e4m3(static_cast<uint8_t>(code + 1));
  const bool tie_went_down = std::fabs(near) < std::fabs(value) && value - near == far - value;
  return tie_went_down ? static_cast<uint8_t>(code + 1) : code;
}

// bf16 of value with ties away from zero: a tie's low half is exactly 0x8000.
uint16_t bf16_ties_away(float value) {
  const uint32_t bits = bits_of(value);
  if (std::isnan(value) || (bits & 0xFFFFu) != 0x8000u) return spec::bf16_from_f32(value, Bf16Nan::k7FFF);
  return static_cast<uint16_t>((bits >> 16) + 1);
}

// The fast-math twin (nvcc --use_fast_math, PTX .ftz): a subnormal fp32
// operand or result becomes a zero of its sign. Otherwise the identity.
float BlockedModel::flushed(float value) const {
  const uint32_t bits = bits_of(value);
  if (!planted(PlantedCpuBug::kFastMathFtz) || (bits & kF32ExponentMask) != 0) return value;
  return float_from_bits(bits & kF32SignMask);
}

float BlockedModel::product(float a, float b) const { return flushed(flushed(a) * flushed(b)); }

float BlockedModel::quotient(float x, float divisor) const { return flushed(flushed(x) / divisor); }

// One RoPE term a*c + b*s under the profile's contraction (spec::rope_term);
// under the fast-math twin as mul.ftz / add.ftz / fma.ftz compute it: every
// operand flushed, the rounded product and the result flushed.
float BlockedModel::rope(float a, float c, float b, float s, Contraction contraction) const {
  if (!planted(PlantedCpuBug::kFastMathFtz)) return spec::rope_term(a, c, b, s, contraction);
  a = flushed(a), c = flushed(c), b = flushed(b), s = flushed(s);
  float r = 0.0f;
  switch (contraction) {
    case Contraction::kNone: r = product(a, c) + product(b, s); break;
    case Contraction::kFuseCos: r = std::fma(a, c, product(b, s)); break;
    case Contraction::kFuseSin: r = std::fma(b, s, product(a, c)); break;
  }
  r = flushed(r);
  return std::isnan(r) ? float_from_bits(0x7FFFFFFFu) : r;  // canonical, as spec::rope_term
}

bool BlockedModel::runs_nope_pack() const {
  switch (a_.query_path) {
    case QueryPath::kFp8Packed: return true;  // the front is quantized, never aliased
    case QueryPath::kBf16Packed:
      // The exact alias makes the copy an identity; a kernel may skip it
      // (SEMANTICS.md task 3). The bug skips it in every case, as if the
      // absorbed bmm always wrote the front.
      if (ql_nope_aliases_query_out(a_)) return planted(PlantedCpuBug::kCopyWhenAliased);
      return !planted(PlantedCpuBug::kSkipCopyUnaliased);
    case QueryPath::kBf16Separate: return false;  // ql_nope is handed on separately
  }
  return false;
}

// The MQA heads the grid covers: all of them. The head-coverage bugs
// (SEMANTICS.md bug 4) launch too few: programs of two heads, H / 2 of them,
// or NI of them (the indexer's heads as launched: none without the indexer).
int64_t BlockedModel::mqa_heads_covered() const {
  int64_t heads = a_.mqa_heads;
  if (planted(PlantedCpuBug::kOddHeadsDropLast)) heads = heads / 2 * 2;
  if (planted(PlantedCpuBug::kMqaGridSizedByNi)) {
    heads = std::min(heads, 2 * (a_.has_indexer ? a_.indexer_heads : 0));
  }
  return heads;
}

// Shared layers (has_indexer false) launch no indexer task; the ignoring
// twin launches them anyway (SEMANTICS.md bug 5).
bool BlockedModel::runs_indexer() const {
  if (a_.has_indexer) return true;
  // (Where the caller passed the outputs: they may be null without the indexer.)
  return planted(PlantedCpuBug::kHasIndexerIgnored) && a_.index_q_fp8.data != nullptr &&
         a_.index_weights_out.data != nullptr;
}

// Tasks along grid y: the MQA heads, then the indexer heads, then one ql_nope
// pack task per MQA head.
int64_t BlockedModel::task_count() const {
  int64_t tasks = mqa_heads_covered();
  if (runs_indexer()) tasks += a_.indexer_heads;
  if (runs_nope_pack()) tasks += mqa_heads_covered();
  return tasks;
}

Task BlockedModel::decode_task(int64_t task_id) const {
  const int64_t mqa_heads = mqa_heads_covered();
  if (task_id < mqa_heads) return {TaskKind::kMqaRope, task_id};
  task_id -= mqa_heads;
  if (runs_indexer()) {
    if (task_id < a_.indexer_heads) return {TaskKind::kIndexer, task_id};
    task_id -= a_.indexer_heads;
  }
  return {TaskKind::kNopePack, task_id};
}

// The number of live tokens in a block: 16, or T % 16 in the masked tail.
int64_t BlockedModel::tokens_in_block(int64_t block) const {
  const int64_t live = std::min(kBlockTokens, a_.num_tokens - block * kBlockTokens);
  // The tail bug: the masked path counts its tokens off by one; full blocks
  // take the unmasked path and are unaffected.
  if (planted(PlantedCpuBug::kSkipLastTailToken) && live < kBlockTokens) return live - 1;
  return live;
}

void BlockedModel::run() const {
  const int64_t blocks = (a_.num_tokens + kBlockTokens - 1) / kBlockTokens;
  const int64_t tasks = task_count();
  for (int64_t block = 0; block < blocks; ++block) {
    const int64_t first = block * kBlockTokens;
    const int64_t tokens = tokens_in_block(block);
    for (int64_t task_id = 0; task_id < tasks; ++task_id) {
      const Task task = decode_task(task_id);
      switch (task.kind) {
        case TaskKind::kMqaRope: mqa_rope_program(first, tokens, task.head); break;
        case TaskKind::kIndexer: indexer_program(first, tokens, task.head); break;
        case TaskKind::kNopePack: nope_pack_program(first, tokens, task.head); break;
      }
    }
  }
}

// MQA q_pe RoPE, interleaved pairs (2i, 2i+1), written to the tail of the
// packed output (columns L..L+R-1) or to q_pe_out.
void BlockedModel::mqa_rope_program(int64_t first_token, int64_t tokens, int64_t head) const {
  const int64_t R = a_.rope_dim, half = R / 2;
  const bool fp8 = a_.query_path == QueryPath::kFp8Packed;
  const Contraction r1_rule =
      fp8 ? (planted(PlantedCpuBug::kMqaFp8R1Unfused) ? Contraction::kNone : p_.mqa_fp8_r1) : p_.mqa_bf16_r1;
  const Contraction r2_rule = fp8 ? p_.mqa_fp8_r2 : p_.mqa_bf16_r2;
  const int64_t tail = a_.query_path == QueryPath::kBf16Separate ? 0 : a_.nope_dim;
  const float q_scale = float_from_bits(a_.q_scale_bits);
  const RopeStyle style = planted(PlantedCpuBug::kMqaNeoxRope) ? RopeStyle::kNeox : RopeStyle::kInterleaved;
  const int64_t cos_at = planted(PlantedCpuBug::kSwappedCosSin) ? half : 0;  // the row is [cos, sin]
  const int64_t sin_at = half - cos_at;
  for (int64_t t = first_token; t < first_token + tokens; ++t) {
    const int64_t position = a_.positions[t];
    const uint16_t* x = element<const uint16_t>(a_.q_pe, t, head);
    for (int64_t j = 0; j < R; ++j) {
      const RopePartner rp = rope_partner(j, R, style);
      const float xj = spec::f32_from_bf16(x[j]);
      const float xp = spec::f32_from_bf16(x[rp.partner]);
      const float c = cache_at(a_.mqa_cache, position, cos_at + rp.column);
      const float s = cache_at(a_.mqa_cache, position, sin_at + rp.column);
      const bool minus = rp.minus != planted(PlantedCpuBug::kMqaSinSignFlipped);  // the sin term's sign
      const float r = rope(xj, c, minus ? -xp : xp, s, rp.minus ? r1_rule : r2_rule);
      if (fp8) {
        element<uint8_t>(a_.query_out, t, head)[tail + j] =
            to_e4m3_ties(quotient(r, q_scale), planted(PlantedCpuBug::kE4m3TiesAwayMqa));
      } else {
        element<uint16_t>(a_.query_out, t, head)[tail + j] =
            planted(PlantedCpuBug::kBf16TiesAwayMqa) ? bf16_ties_away(r) : to_bf16(r);
      }
    }
  }
}

// Indexer: RoPE on the first R of D dims (the rest pass through), one UE8M0
// scale per (token, head) over the whole row, fp8 codes, and the weight
// ((w * scale) * softmax_scale) * head_scale (SEMANTICS.md task 2).
void BlockedModel::indexer_program(int64_t first_token, int64_t tokens, int64_t head) const {
  const int64_t R = a_.rope_dim, D = a_.index_dim, half = R / 2;
  RopeStyle style = a_.indexer_rope;
  if (planted(PlantedCpuBug::kSwappedIndexerRope)) {
    style = style == RopeStyle::kNeox ? RopeStyle::kInterleaved : RopeStyle::kNeox;
  }
  ScaleCeiling ceiling = planted(PlantedCpuBug::kLog2fScale) ? ScaleCeiling::kLog2f : p_.scale_ceiling;
  if (planted(PlantedCpuBug::kNonPow2Scale) || planted(PlantedCpuBug::kFloorScale)) {
    ceiling = ScaleCeiling::kNone;  // s0 itself
  }
  ScaleFloor scale_floor = p_.scale_floor;
  if (planted(PlantedCpuBug::kScaleFloorOnScale)) scale_floor = ScaleFloor::kScale1e4;
  if (planted(PlantedCpuBug::kAmaxEps1e10)) scale_floor = ScaleFloor::kAmax1e10;
  const int64_t weight_column_stride = planted(PlantedCpuBug::kUnitWeightsColumn) ? 1 : a_.index_weights.head_stride;
  const float softmax_scale = float_from_bits(a_.softmax_scale_bits);
  const float head_scale = float_from_bits(
      planted(PlantedCpuBug::kRecomputedHeadScale) ? default_head_scale_bits(a_.indexer_heads) : a_.head_scale_bits);
  // Without the indexer (only the ignoring twin runs this then) every load
  // is masked to 0, as tl.load(..., mask=HAS_INDEXER, other=0.0): the inputs
  // may be null. The stores are not masked.
  const bool loads = a_.has_indexer;
  float row[DimLimits::kMaxIndexDim];  // one row in registers
  for (int64_t t = first_token; t < first_token + tokens; ++t) {
    const int64_t position = a_.positions[t];
    const uint16_t* x = loads ? element<const uint16_t>(a_.index_q, t, head) : nullptr;
    for (int64_t j = 0; j < D; ++j) {
      const float xj = loads ? spec::f32_from_bf16(x[j]) : 0.0f;
      if (j >= R) {
        row[j] = xj;  // pass-through dims are exact
        continue;
      }
      const RopePartner rp = rope_partner(j, R, style);
      const float xp = loads ? spec::f32_from_bf16(x[rp.partner]) : 0.0f;
      const float c = loads ? cache_at(a_.indexer_cache, position, rp.column) : 0.0f;
      const float s = loads ? cache_at(a_.indexer_cache, position, half + rp.column) : 0.0f;
      const Contraction rule = planted(PlantedCpuBug::kIndexerUnfused) ? Contraction::kNone
                               : rp.minus                                ? p_.indexer_minus
                                                                         : p_.indexer_plus;
      row[j] = rope(xj, c, rp.minus ? -xp : xp, s, rule);
      // The bf16 twin stores the RoPE'd row in bf16 and reads it back.
      if (planted(PlantedCpuBug::kBf16BeforeQuant)) {
        row[j] = spec::f32_from_bf16(spec::bf16_from_f32(row[j], p_.bf16_nan));
      }
    }
    // The block-wide max reduction (maxnum: NaN lanes ignored).
    float scale = spec::ue8m0_scale(spec::row_amax(row, D), ceiling, scale_floor);
    // The NaN twin: a max that starts from row[0] is NaN only for an all-NaN
    // row, and a floor written as amax < 1e-4 ? 1e-4 : amax keeps that NaN.
    if (planted(PlantedCpuBug::kNanRowScaleNan) && std::all_of(row, row + D, [](float v) { return std::isnan(v); })) {
      scale = float_from_bits(0x7FFFFFFFu);
    }
    // The floor twin keeps s0's exponent: 2^floor(log2 s0), +Inf stays +Inf.
    if (planted(PlantedCpuBug::kFloorScale)) scale = float_from_bits(bits_of(scale) & kF32ExponentMask);
    uint8_t* codes = element<uint8_t>(a_.index_q_fp8, t, head);
    const bool ties_away = planted(PlantedCpuBug::kE4m3TiesAwayIndexer);
    for (int64_t j = 0; j < D; ++j) codes[j] = to_e4m3_ties(quotient(row[j], scale), ties_away);

    const int64_t w_in = t * a_.index_weights.token_stride + head * weight_column_stride;
    float w = 0.0f;
    if (loads) {
      w = a_.index_weights_dtype == FloatType::kF32
              ? static_cast<const float*>(a_.index_weights.data)[w_in]
              : spec::f32_from_bf16(static_cast<const uint16_t*>(a_.index_weights.data)[w_in]);
    }
    float weight = 0.0f;
    if (planted(PlantedCpuBug::kWeightsFoldedOrder)) {
      weight = product(product(w, product(softmax_scale, head_scale)), scale);
    } else if (planted(PlantedCpuBug::kWeightsWithoutScale)) {
      weight = product(product(w, softmax_scale), head_scale);
    } else {
      const float scaled = product(w, scale);
      const float with_softmax = product(scaled, softmax_scale);
      weight = product(with_softmax, head_scale);
    }
    const int64_t w_out =
        t * a_.index_weights_out.token_stride + head * a_.index_weights_out.head_stride;
    if (a_.index_weights_out_dtype == FloatType::kF32) {
      static_cast<float*>(a_.index_weights_out.data)[w_out] = spec::f32_stored(weight, p_.f32_nan);
    } else {
      static_cast<uint16_t*>(a_.index_weights_out.data)[w_out] = to_bf16(weight);
    }
  }
}

// The front of the packed output (columns 0..L-1): ql_nope quantized by
// q_scale on the fp8 path, a raw 16-bit copy on the bf16 packed path (an
// element-wise copy, so copying onto itself under the alias is an identity).
void BlockedModel::nope_pack_program(int64_t first_token, int64_t tokens, int64_t head) const {
  const int64_t L = a_.nope_dim;
  const float q_scale = float_from_bits(a_.q_scale_bits);
  for (int64_t t = first_token; t < first_token + tokens; ++t) {
    const uint16_t* nope = element<const uint16_t>(a_.ql_nope, t, head);
    if (a_.query_path == QueryPath::kFp8Packed) {
      uint8_t* out = element<uint8_t>(a_.query_out, t, head);
      const bool ties_away = planted(PlantedCpuBug::kE4m3TiesAwayMqa);
      for (int64_t l = 0; l < L; ++l) out[l] = to_e4m3_ties(quotient(spec::f32_from_bf16(nope[l]), q_scale), ties_away);
    } else {
      uint16_t* out = element<uint16_t>(a_.query_out, t, head);
      for (int64_t l = 0; l < L; ++l) out[l] = nope[l];
    }
  }
}

}  // namespace

std::string run_blocked_model(const FusedQArgs& args, PlantedCpuBug bug) {
  // The same checks as the oracle, with the same messages, before any read.
  const std::string error = check_oracle_inputs(args);
  if (!error.empty() || args.num_tokens == 0) return error;
  BlockedModel(args, bug).run();
  return "";
}

}  // namespace qcheck
