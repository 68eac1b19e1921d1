#include "ops/fused_k/args/fused_k_args.h"

#include <cmath>
#include <cstring>
#include <vector>

namespace qcheck::fused_k {

const char* name_of(IndexerKLayout layout) { return layout == IndexerKLayout::kFlat ? "flat" : "shuffled"; }
const char* name_of(IndexerKScale scale) { return scale == IndexerKScale::kF32 ? "f32" : "ue8m0x4"; }
const char* name_of(IndexKFp8 fp8) { return fp8 == IndexKFp8::kOcp ? "ocp" : "fnuz"; }

const char* name_of(MlaCacheFormat format) {
  switch (format) {
    case MlaCacheFormat::kBf16: return "bf16";
    case MlaCacheFormat::kFp8: return "fp8";
    case MlaCacheFormat::kFp8DsMla: return "fp8_ds_mla";
    case MlaCacheFormat::kNvfp4DsMla: return "nvfp4_ds_mla";
  }
  return "?";
}

int64_t mla_entry_bytes(MlaCacheFormat format) {
  switch (format) {
    case MlaCacheFormat::kBf16: return 2 * (kMlaLatent + kMlaRope);                   // 1152
    case MlaCacheFormat::kFp8: return kMlaLatent + kMlaRope;                          // 576
    case MlaCacheFormat::kFp8DsMla: return kMlaLatent + 4 * 4 + 2 * kMlaRope;         // 656
    case MlaCacheFormat::kNvfp4DsMla: return kMlaLatent / 2 + kMlaRope + kMlaLatent / 16;  // 352
  }
  return 0;
}

namespace {

int bytes_of(FloatType type) { return type == FloatType::kF32 ? 4 : 2; }

struct Extent {
  std::string name;
  uintptr_t begin, end;
};

class Checker {
 public:
  explicit Checker(const FusedKArgs& a) : a_(a) {}
  std::string run();

 private:
  bool fail(const std::string& message) {
    if (error_.empty()) error_ = message;
    return false;
  }
  bool in_range(const std::string& field, int64_t value, int64_t lo, int64_t hi) {
    if (value >= lo && value <= hi) return true;
    return fail(field + " = " + std::to_string(value) + " is outside [" + std::to_string(lo) + ", " +
                std::to_string(hi) + "]");
  }
  bool given(const std::string& field, const void* p) { return p != nullptr || fail(field + " is null"); }
  // A [T, width] view of `bytes`-byte elements; optional views may be null.
  bool rows(const std::string& field, const void* data, int64_t row_stride, int64_t width, int bytes, bool output,
            bool optional);
  bool vector(const std::string& field, const VectorIn& v, int64_t width);
  bool eps(const std::string& field, uint32_t bits);
  bool cache(const std::string& field, const PagedCache& c, int64_t entry_bytes, const char* entry_name,
             int64_t used_per_block);
  void roles();
  void overlaps();

  const FusedKArgs& a_;
  std::string error_;
  std::vector<Extent> inputs_, outputs_;
};

bool Checker::rows(const std::string& field, const void* data, int64_t row_stride, int64_t width, int bytes,
                   bool output, bool optional) {
  if (data == nullptr) return optional || fail(field + " is null");
  if (row_stride < width) {
    return fail(field + ".row_stride = " + std::to_string(row_stride) + " is less than its width " +
                std::to_string(width));
  }
  if (a_.num_tokens == 0) return true;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(data);
  const uint64_t span = (static_cast<uint64_t>(a_.num_tokens - 1) * static_cast<uint64_t>(row_stride) +
                         static_cast<uint64_t>(width)) * static_cast<uint64_t>(bytes);
  (output ? outputs_ : inputs_).push_back({field, begin, begin + span});
  return true;
}

bool Checker::vector(const std::string& field, const VectorIn& v, int64_t width) {
  if (!given(field, v.data)) return false;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(v.data);
  inputs_.push_back({field, begin, begin + static_cast<uint64_t>(width) * bytes_of(v.dtype)});
  return true;
}

bool Checker::eps(const std::string& field, uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, 4);
  return (std::isfinite(value) && value >= 0.0f) || fail(field + " is not a finite number >= 0");
}

bool Checker::cache(const std::string& field, const PagedCache& c, int64_t entry_bytes, const char* entry_name,
                    int64_t used_per_block) {
  if (!given(field + ".data", c.data)) return false;
  if (!in_range(field + ".num_blocks", c.num_blocks, 1, int64_t(1) << 40)) return false;
  if (!in_range(field + ".block_size", c.block_size, 1, FusedKLimits::kMaxBlockSize)) return false;
  if (c.entry_bytes != entry_bytes) {
    return fail(field + ".entry_bytes = " + std::to_string(c.entry_bytes) + " is not " + entry_name + " = " +
                std::to_string(entry_bytes));
  }
  if (c.block_stride < used_per_block) {
    return fail(field + ".block_stride = " + std::to_string(c.block_stride) + " is less than the " +
                std::to_string(used_per_block) + " bytes a block uses");
  }
  const uintptr_t begin = reinterpret_cast<uintptr_t>(c.data);
  outputs_.push_back({field, begin, begin + static_cast<uint64_t>(c.num_blocks - 1) * c.block_stride +
                                        static_cast<uint64_t>(used_per_block)});
  return true;
}

void Checker::roles() {
  const FusedKArgs& a = a_;
  if (!in_range("num_tokens", a.num_tokens, 0, FusedKLimits::kMaxTokens)) return;
  const bool rope = a.index_k || a.kv;
  if (rope) {
    if (a.num_tokens > 0 && !given("positions", a.positions)) return;
    const RopeCache& c = a.rope_cache;
    if (!given("rope_cache.data", c.data)) return;
    if (!in_range("rope_cache.rows", c.rows, 1, int64_t(1) << 40)) return;
    if (c.width < 2 || c.width % 2 != 0) {
      return (void)fail("rope_cache.width = " + std::to_string(c.width) + " is not an even number >= 2");
    }
    if (c.row_stride < c.width) {
      return (void)fail("rope_cache.row_stride = " + std::to_string(c.row_stride) + " is less than its width " +
                        std::to_string(c.width));
    }
    const uintptr_t begin = reinterpret_cast<uintptr_t>(c.data);
    inputs_.push_back({"rope_cache", begin,
                       begin + (static_cast<uint64_t>(c.rows - 1) * c.row_stride + c.width) * bytes_of(c.dtype)});
    if (a.positions != nullptr && a.num_tokens > 0) {
      const uintptr_t p = reinterpret_cast<uintptr_t>(a.positions);
      inputs_.push_back({"positions", p, p + static_cast<uint64_t>(a.num_tokens) * 8});
    }
  }
  const bool caches = (a.index_k && a.index_slot_mapping == nullptr) || a.kv;
  if (caches && a.num_tokens > 0) {
    if (!given("slot_mapping", a.slot_mapping)) return;
    const uintptr_t p = reinterpret_cast<uintptr_t>(a.slot_mapping);
    inputs_.push_back({"slot_mapping", p, p + static_cast<uint64_t>(a.num_tokens) * 8});
  }
  if (a.index_k) {
    const int64_t d = a.index_dim;
    if (!in_range("index_dim", d, 1, FusedKLimits::kMaxIndexDim)) return;
    if (a.index_rope_dim != a.rope_cache.width) {
      return (void)fail("index_rope_dim = " + std::to_string(a.index_rope_dim) + " is not rope_cache.width = " +
                        std::to_string(a.rope_cache.width));
    }
    if (a.index_rope_dim > d) {
      return (void)fail("index_rope_dim = " + std::to_string(a.index_rope_dim) + " is more than index_dim = " +
                        std::to_string(d));
    }
    if (!rows("index_k", a.index_k_in.data, a.index_k_in.row_stride, d, 2, false, false)) return;
    if (!vector("ln_weight", a.ln_weight, d) || !vector("ln_bias", a.ln_bias, d) || !eps("ln_eps", a.ln_eps_bits)) {
      return;
    }
    if (a.index_slot_mapping != nullptr && a.num_tokens > 0) {
      const uintptr_t p = reinterpret_cast<uintptr_t>(a.index_slot_mapping);
      inputs_.push_back({"index_slot_mapping", p, p + static_cast<uint64_t>(a.num_tokens) * 8});
    }
    const PagedCache& c = a.indexer_cache;
    if (!cache("indexer_cache", c, d + 4, "index_dim + 4", c.block_size * (d + 4))) return;
    if (a.indexer_layout == IndexerKLayout::kShuffled && (c.block_size % 16 != 0 || d % 16 != 0)) {
      return (void)fail("indexer_cache.block_size = " + std::to_string(c.block_size) + " and index_dim = " +
                        std::to_string(d) + " must both be multiples of 16 for the shuffled layout");
    }
    if (a.index_fp8 != IndexKFp8::kOcp && a.index_fp8 != IndexKFp8::kFnuz) {
      return (void)fail("index_fp8 = " + std::to_string(static_cast<int>(a.index_fp8)) + " is not ocp (0) or fnuz (1)");
    }
    if (!rows("index_k_out", a.index_k_out.data, a.index_k_out.row_stride, d, 2, true, true)) return;
  }
  if (a.kv) {
    if (a.rope_cache.width != kMlaRope) {
      return (void)fail("rope_cache.width = " + std::to_string(a.rope_cache.width) + " is not 64, k_pe's width");
    }
    if (!rows("kv_c", a.kv_c.data, a.kv_c.row_stride, kMlaLatent, 2, false, false) ||
        !rows("k_pe", a.k_pe.data, a.k_pe.row_stride, kMlaRope, 2, false, false) ||
        !vector("kv_weight", a.kv_weight, kMlaLatent) || !eps("kv_eps", a.kv_eps_bits)) {
      return;
    }
    const PagedCache& c = a.mla_cache;
    const int64_t entry = mla_entry_bytes(a.mla_format);
    if (c.entry_stride < entry) {
      return (void)fail("mla_cache.entry_stride = " + std::to_string(c.entry_stride) + " is less than the " +
                        name_of(a.mla_format) + " entry, " + std::to_string(entry) + " bytes");
    }
    const std::string format_entry = std::string("the ") + name_of(a.mla_format) + " entry";
    if (!cache("mla_cache", c, entry, format_entry.c_str(), (c.block_size - 1) * c.entry_stride + entry)) return;
    const int64_t align = a.mla_format == MlaCacheFormat::kFp8DsMla ? 4 : a.mla_format == MlaCacheFormat::kBf16 ? 2 : 1;
    if (c.entry_stride % align != 0 || c.block_stride % align != 0 ||
        reinterpret_cast<uintptr_t>(c.data) % static_cast<uintptr_t>(align) != 0) {
      return (void)fail(std::string("mla_cache: ") + name_of(a.mla_format) + " entries hold " +
                        (align == 4 ? "f32 scales" : "bf16 values") + ": its address, entry_stride and block_stride "
                        "must be multiples of " + std::to_string(align));
    }
    if (a.mla_format == MlaCacheFormat::kFp8) {
      float k_scale;
      std::memcpy(&k_scale, &a.k_scale_bits, 4);
      if (!(std::isnormal(k_scale) && k_scale > 0)) return (void)fail("k_scale is not a positive normal number");
    }
    if (!rows("kv_out", a.kv_out.data, a.kv_out.row_stride, kMlaLatent, 2, true, true) ||
        !rows("kpe_out", a.kpe_out.data, a.kpe_out.row_stride, kMlaRope, 2, true, true)) {
      return;
    }
  }
  if (a.q_norm) {
    if (!in_range("q_dim", a.q_dim, 1, FusedKLimits::kMaxQDim)) return;
    if (!rows("q_c", a.q_c.data, a.q_c.row_stride, a.q_dim, 2, false, false) ||
        !vector("q_weight", a.q_weight, a.q_dim) || !eps("q_eps", a.q_eps_bits) ||
        !rows("q_c_out", a.q_c_out.data, a.q_c_out.row_stride, a.q_dim, 2, true, false)) {
      return;
    }
  }
  if (a.topk_fill) {
    if (!in_range("topk_width", a.topk_width, 1, FusedKLimits::kMaxTopk)) return;
    if (!rows("topk", a.topk, a.topk_row_stride, a.topk_width, 4, true, false)) return;
  }
}

void Checker::overlaps() {
  for (size_t i = 0; i < outputs_.size(); ++i) {
    const Extent& out = outputs_[i];
    for (const Extent& in : inputs_) {
      if (out.begin < in.end && in.begin < out.end) {
        return (void)fail(out.name + " overlaps the input " + in.name);
      }
    }
    for (size_t j = i + 1; j < outputs_.size(); ++j) {
      if (out.begin < outputs_[j].end && outputs_[j].begin < out.end) {
        return (void)fail(out.name + " overlaps the output " + outputs_[j].name);
      }
    }
  }
}

std::string Checker::run() {
  roles();
  if (error_.empty()) overlaps();
  return error_;
}

std::string slot_problem(const char* tensor, const int64_t* slots, int64_t tokens, const PagedCache& c) {
  const int64_t capacity = c.num_blocks * c.block_size;
  for (int64_t t = 0; t < tokens; ++t) {
    if (slots[t] >= capacity) {
      return std::string(tensor) + "[" + std::to_string(t) + "] = " + std::to_string(slots[t]) +
             " is past the cache: its " + std::to_string(c.num_blocks) + " blocks of " + std::to_string(c.block_size) +
             " hold slots 0 to " + std::to_string(capacity - 1) + " (-1: no write)";
    }
  }
  return "";
}

}  // namespace

std::string validate_fused_k_args(const FusedKArgs& args) { return Checker(args).run(); }

std::string check_fused_k_inputs(const FusedKArgs& a) {
  if (a.index_k || a.kv) {
    for (int64_t t = 0; t < a.num_tokens; ++t) {
      if (a.positions[t] < 0 || a.positions[t] >= a.rope_cache.rows) {
        return "positions[" + std::to_string(t) + "] = " + std::to_string(a.positions[t]) + " is outside [0, " +
               std::to_string(a.rope_cache.rows - 1) + "], the rope cache's rows";
      }
    }
  }
  if (a.index_k) {
    const bool own = a.index_slot_mapping != nullptr;
    const std::string p = slot_problem(own ? "index_slot_mapping" : "slot_mapping",
                                       own ? a.index_slot_mapping : a.slot_mapping, a.num_tokens, a.indexer_cache);
    if (!p.empty()) return p;
  }
  if (a.kv) return slot_problem("slot_mapping", a.slot_mapping, a.num_tokens, a.mla_cache);
  return "";
}

}  // namespace qcheck::fused_k
