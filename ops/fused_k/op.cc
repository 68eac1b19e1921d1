#include "ops/fused_k/op.h"

#include <cstdio>

namespace qcheck::fused_k {
namespace {

// The fields in canonical order with their kinds, an enumeration's names and
// the default case's value as JSON text.
class FieldLister {
 public:
  std::vector<FieldMeta> fields;
  void integer(const char* name, int64_t& v) { add(name, FieldKind::kInteger, std::to_string(v)); }
  template <typename Enum>
  void enumeration(const char* name, Enum& v, unsigned count) {
    FieldMeta& f = add(name, FieldKind::kEnumeration, std::string("\"") + name_of(v) + "\"");
    for (unsigned i = 0; i < count; ++i) f.choices.push_back(name_of(static_cast<Enum>(i)));
  }
  void boolean(const char* name, bool& v) { add(name, FieldKind::kBoolean, v ? "true" : "false"); }
  void bits32(const char* name, uint32_t& v) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "\"0x%08X\"", v);
    add(name, FieldKind::kBits32, hex);
  }
  void u64(const char* name, uint64_t& v) { add(name, FieldKind::kU64, std::to_string(v)); }

 private:
  FieldMeta& add(const char* name, FieldKind kind, std::string default_json) {
    FieldMeta f;
    f.name = name;
    f.kind = kind;
    f.default_json = std::move(default_json);
    fields.push_back(std::move(f));
    return fields.back();
  }
};

Vocabulary fused_k_vocabulary() {
  Vocabulary v;
  FusedKCase defaults;
  FieldLister lister;
  visit_fused_k_fields(defaults, lister);
  v.fields = std::move(lister.fields);
  // In the arena's order (case/case_launch.cc); an output's name is the part
  // a report names.
  v.tensors = {
      {"rope_cache", "input", {"f32", "bf16"}, "[P, R] (+ rope_row_padding)", "index_k or kv"},
      {"positions", "input", {"int64"}, "[T]", "index_k or kv"},
      {"index_k", "input", {"bf16"}, "[T, D]", "index_k"},
      {"ln_weight", "input", {"f32", "bf16"}, "[D]", "index_k"},
      {"ln_bias", "input", {"f32", "bf16"}, "[D]", "index_k"},
      {"indexer_cache", "output", {"uint8"}, "[indexer_blocks, indexer_block_size, D + 4] (+ padding)", "index_k"},
      {"index_slot_mapping", "input", {"int64"}, "[T]", "index_k and index_slots"},
      {"index_k_out", "output", {"bf16"}, "[T, D]", "index_k and index_k_out"},
      {"kv_c", "input", {"bf16"}, "[T, 512]", "kv"},
      {"k_pe", "input", {"bf16"}, "[T, 64]", "kv"},
      {"kv_weight", "input", {"f32", "bf16"}, "[512]", "kv"},
      {"mla_cache", "output", {"uint8"}, "[mla_blocks, mla_block_size, the format's bytes] (+ padding)", "kv"},
      {"kv_out", "output", {"bf16"}, "[T, 512]", "kv and kv_out"},
      {"kpe_out", "output", {"bf16"}, "[T, 64]", "kv and kpe_out"},
      {"slot_mapping", "input", {"int64"}, "[T]", "kv, or index_k without index_slots"},
      {"q_c", "input", {"bf16"}, "[T, Q]", "q_norm"},
      {"q_weight", "input", {"f32", "bf16"}, "[Q]", "q_norm"},
      {"q_c_out", "output", {"bf16"}, "[T, Q]", "q_norm"},
      {"topk", "output", {"int32"}, "[T, K]", "topk_fill"},
  };
  for (const TensorMeta& t : v.tensors) {
    if (t.role == "output") v.parts.push_back(t.name);
  }
  v.profiles = {"qcheck"};  // qcheck_fused_k_rules(): its own CUDA kernel's conventions
  return v;
}

class FusedKOp final : public Op {
 public:
  const char* name() const override { return "fused_k"; }
  uint16_t schema_version() const override { return 1; }
  const char* description() const override {
    return "the key side of a DSA layer in one launch: the indexer key's LayerNorm, RoPE and UE8M0 FP8 into a "
           "paged indexer-K cache; the KV latent's RMSNorm and k_pe's RoPE into the MLA cache (bf16, fp8, "
           "fp8_ds_mla, nvfp4_ds_mla); the Q latent's RMSNorm; the top-k buffer filled with -1 "
           "(DeepSeek-V3.2, GLM-5)";
  }
  const Vocabulary& vocabulary() const override {
    static const Vocabulary v = fused_k_vocabulary();
    return v;
  }
};

class ToAny {
 public:
  std::vector<FieldValue> fields;
  void integer(const char*, int64_t& v) { number(static_cast<uint64_t>(v)); }
  template <typename Enum>
  void enumeration(const char*, Enum& v, unsigned) {
    number(static_cast<uint8_t>(v));
  }
  void boolean(const char*, bool& v) { number(v ? 1 : 0); }
  void bits32(const char*, uint32_t& v) { number(v); }
  void u64(const char*, uint64_t& v) { number(v); }

 private:
  void number(uint64_t v) { fields.emplace_back().number = v; }
};

// The values were checked by the generic decoder (an enumeration's code is
// below its count) or come from a case.
class FromAny {
 public:
  explicit FromAny(const std::vector<FieldValue>& fields) : fields_(fields) {}
  void integer(const char*, int64_t& v) { v = static_cast<int64_t>(next()); }
  template <typename Enum>
  void enumeration(const char*, Enum& v, unsigned) {
    v = static_cast<Enum>(next());
  }
  void boolean(const char*, bool& v) { v = next() != 0; }
  void bits32(const char*, uint32_t& v) { v = static_cast<uint32_t>(next()); }
  void u64(const char*, uint64_t& v) { v = next(); }

 private:
  uint64_t next() { return fields_[at_++].number; }
  const std::vector<FieldValue>& fields_;
  size_t at_ = 0;
};

}  // namespace

const Op& fused_k_op() {
  static const FusedKOp op;
  return op;
}

AnyCase to_any_case(const FusedKCase& c) {
  FusedKCase copy = c;
  ToAny to;
  visit_fused_k_fields(copy, to);
  return AnyCase{&fused_k_op(), std::move(to.fields)};
}

std::string from_any_case(const AnyCase& a, FusedKCase* out) {
  if (a.op != &fused_k_op()) {
    return std::string("op = \"") + (a.op != nullptr ? a.op->name() : "") + "\" is not fused_k";
  }
  if (a.fields.size() != fused_k_op().vocabulary().fields.size()) return "the case has the wrong number of fields";
  FusedKCase c;
  FromAny from(a.fields);
  visit_fused_k_fields(c, from);
  *out = c;
  return "";
}

}  // namespace qcheck::fused_k
