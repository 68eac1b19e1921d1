#include "fuzz/case/case.h"

#include <sstream>
#include <tuple>

#include "fuzz/case/case_names.h"
#include "fuzz/case/tensor_plan.h"
#include "numerics/profile.h"

namespace qcheck {
namespace {

auto tie_fields(const Case& c) {
  return std::tie(c.num_tokens, c.mqa_heads, c.indexer_heads, c.index_dim, c.rope_dim, c.nope_dim,
                  c.query_path, c.has_indexer, c.indexer_rope, c.mqa_cache_dtype,
                  c.indexer_cache_dtype, c.weights_dtype, c.weights_out_dtype, c.q_pe_layout,
                  c.ql_nope_layout, c.index_q_layout, c.weights_layout, c.mqa_cache_layout,
                  c.indexer_cache_layout, c.weights_column_stride, c.query_out_layout,
                  c.index_q_fp8_layout, c.weights_out_layout, c.row_padding, c.alias, c.cache_rows,
                  c.positions, c.values, c.q_scale_bits, c.softmax_scale_bits, c.head_scale_bits,
                  c.seed, c.profile, c.memory_limit_bytes, c.edits);
}

std::string range_error(const char* field, int64_t value, int64_t lo, int64_t hi) {
  std::ostringstream s;
  s << field << " = " << value << " is outside [" << lo << ", " << hi << "]";
  return s.str();
}

template <typename Enum>
std::string enum_error(const char* field, Enum value) {
  std::ostringstream s;
  s << field << " = " << static_cast<unsigned>(value) << " is not one of " << names_of_all<Enum>();
  return s.str();
}

// Which layouts each tensor accepts.
std::string layout_error(const char* field, Layout layout, bool head_major, bool wide_row) {
  if (!in_range(layout)) return enum_error(field, layout);
  const bool ok = layout == Layout::kContiguous || layout == Layout::kPaddedRows ||
                  (head_major && layout == Layout::kHeadMajor) ||
                  (wide_row && layout == Layout::kWideRowView);
  if (ok) return "";
  std::string allowed = "contiguous, padded-rows";
  if (head_major) allowed += ", head-major";
  if (wide_row) allowed += ", wide-row-view";
  return std::string(field) + " = " + name_of(layout) +
         " is not allowed here (allowed: " + allowed + ")";
}

std::string check_enums(const Case& c) {
  if (!in_range(c.query_path)) return enum_error("query_path", c.query_path);
  if (!in_range(c.indexer_rope)) return enum_error("indexer_rope", c.indexer_rope);
  if (!in_range(c.mqa_cache_dtype)) return enum_error("mqa_cache_dtype", c.mqa_cache_dtype);
  if (!in_range(c.indexer_cache_dtype))
    return enum_error("indexer_cache_dtype", c.indexer_cache_dtype);
  if (!in_range(c.weights_dtype)) return enum_error("weights_dtype", c.weights_dtype);
  if (!in_range(c.weights_out_dtype)) return enum_error("weights_out_dtype", c.weights_out_dtype);
  if (!in_range(c.alias)) return enum_error("alias", c.alias);
  if (!in_range(c.positions)) return enum_error("positions", c.positions);
  if (!in_range(c.values)) return enum_error("values", c.values);
  const std::pair<const char*, Layout> plain[] = {
      {"index_q_layout", c.index_q_layout},        {"weights_layout", c.weights_layout},
      {"mqa_cache_layout", c.mqa_cache_layout},    {"indexer_cache_layout", c.indexer_cache_layout},
      {"query_out_layout", c.query_out_layout},    {"index_q_fp8_layout", c.index_q_fp8_layout},
      {"weights_out_layout", c.weights_out_layout}};
  for (const auto& [field, layout] : plain) {
    std::string e = layout_error(field, layout, false, false);
    if (!e.empty()) return e;
  }
  std::string e = layout_error("q_pe_layout", c.q_pe_layout, false, true);
  if (e.empty()) e = layout_error("ql_nope_layout", c.ql_nope_layout, true, false);
  return e;
}

std::string check_dims(const Case& c) {
  // The launch's own dim checks, in its words: validate_fused_q_args stops
  // after the dims when T = 0. NI is checked even without the indexer,
  // because its outputs still exist.
  FusedQArgs dims;
  dims.mqa_heads = c.mqa_heads;
  dims.indexer_heads = c.indexer_heads;
  dims.index_dim = c.index_dim;
  dims.rope_dim = c.rope_dim;
  dims.nope_dim = c.nope_dim;
  dims.has_indexer = true;
  std::string e = validate_fused_q_args(dims);
  if (!e.empty()) return e;
  if (c.num_tokens < 0 || c.num_tokens > CaseLimits::kMaxTokens) {
    return range_error("num_tokens (T)", c.num_tokens, 0, CaseLimits::kMaxTokens);
  }
  if (c.cache_rows < 1 || c.cache_rows > CaseLimits::kMaxCacheRows) {
    return range_error("cache_rows (P)", c.cache_rows, 1, CaseLimits::kMaxCacheRows);
  }
  if (c.row_padding < 1 || c.row_padding > CaseLimits::kMaxRowPadding) {
    return range_error("row_padding", c.row_padding, 1, CaseLimits::kMaxRowPadding);
  }
  if (c.weights_column_stride < 1 ||
      c.weights_column_stride > CaseLimits::kMaxWeightsColumnStride) {
    return range_error("weights_column_stride", c.weights_column_stride, 1,
                       CaseLimits::kMaxWeightsColumnStride);
  }
  return "";
}

std::string hex(uint32_t bits) {
  std::ostringstream s;
  s << "0x" << std::hex << bits;
  return s.str();
}

}  // namespace

bool ValueEdit::operator==(const ValueEdit& o) const {
  return std::tie(tensor, row, rows, head, element, elements, bits) ==
         std::tie(o.tensor, o.row, o.rows, o.head, o.element, o.elements, o.bits);
}

bool Case::operator==(const Case& other) const { return tie_fields(*this) == tie_fields(other); }

namespace {

std::string edit_problem(const Case& c, const TensorPlan& plan, size_t index) {
  const ValueEdit& e = c.edits[index];
  const std::string where = "edits[" + std::to_string(index) + "]";
  if (e.tensor > TensorId::kIndexerCache) return where + ".tensor is not an input";
  const TensorGeometry* g = plan.find(e.tensor);
  if (g == nullptr) {
    return where + ".tensor = " + name_of(e.tensor) + " is not an input of this case (" +
           (e.tensor == TensorId::kQlNope ? "the bf16 separate path has no ql_nope" : "no indexer") + ")";
  }
  const auto outside = [&](const char* field, int64_t value, int64_t lo, int64_t hi) {
    return where + "." + field + " = " + std::to_string(value) + " is outside [" + std::to_string(lo) + ", " +
           std::to_string(hi) + "] (" + name_of(e.tensor) + ")";
  };
  if (e.row < 0 || e.row >= g->rows) return outside("row", e.row, 0, g->rows - 1);
  if (e.rows != -1 && (e.rows < 1 || e.rows > g->rows - e.row)) return outside("rows", e.rows, 1, g->rows - e.row);
  if (e.head < -1 || e.head >= g->cols) return outside("head", e.head, -1, g->cols - 1);
  if (e.element < 0 || e.element >= g->width) return outside("element", e.element, 0, g->width - 1);
  if (e.elements != -1 && (e.elements < 1 || e.elements > g->width - e.element)) {
    return outside("elements", e.elements, 1, g->width - e.element);
  }
  const uint64_t max_bits = g->type == ElementType::kBf16 ? 0xFFFF
                            : g->type == ElementType::kF32 ? 0xFFFFFFFFull
                                                            : static_cast<uint64_t>(c.cache_rows - 1);
  if (e.bits > max_bits) {
    return where + ".bits = " + std::to_string(e.bits) + " is over " + std::to_string(max_bits) +
           (g->type == ElementType::kInt64 ? " (a position must be < cache_rows)" : " (the element's bits)");
  }
  return "";
}

}  // namespace

std::string validate_edit(const Case& c, size_t index) { return edit_problem(c, plan_tensors(c), index); }

void set_default_scales(Case& c) {
  c.softmax_scale_bits = default_softmax_scale_bits(c.index_dim);
  c.head_scale_bits = default_head_scale_bits(c.indexer_heads);
}

bool scales_follow_shape(const Case& c) {
  return c.softmax_scale_bits == default_softmax_scale_bits(c.index_dim) &&
         c.head_scale_bits == default_head_scale_bits(c.indexer_heads);
}

Case small_case() {
  Case c;
  c.num_tokens = 17;
  c.mqa_heads = 3;
  c.indexer_heads = 2;
  c.index_dim = 32;
  c.rope_dim = 8;
  c.nope_dim = 16;
  c.cache_rows = 40;
  set_default_scales(c);
  return c;
}

Case reported_case() {
  Case c = small_case();
  c.num_tokens = 41;
  c.mqa_heads = 5;
  c.indexer_heads = 3;
  c.index_dim = 16;
  c.rope_dim = 10;
  c.q_pe_layout = Layout::kPaddedRows;
  c.index_q_layout = Layout::kPaddedRows;
  c.positions = PositionsRecipe::kRandom;
  c.weights_dtype = FloatType::kBf16;
  c.cache_rows = 77;
  c.seed = 12345;
  set_default_scales(c);
  return c;
}

std::string validate_case(const Case& c) {
  std::string e = check_enums(c);
  if (e.empty()) e = check_dims(c);
  if (!e.empty()) return e;

  Profile profile;
  if (c.profile.size() > CaseLimits::kMaxProfileNameLength || !find_profile(c.profile, &profile)) {
    std::string known;
    for (const std::string& name : profile_names()) known += (known.empty() ? "" : ", ") + name;
    std::string shown;  // printable characters only: the message stays one line
    for (char ch : c.profile.substr(0, 40)) shown += (ch >= 0x20 && ch < 0x7F) ? ch : '?';
    return "profile = \"" + shown + "\" is not a known profile (" + known + ")";
  }
  if (c.alias == AliasMode::kExactFront) {
    if (c.query_path != QueryPath::kBf16Packed) {
      return std::string("alias = exact-front needs query_path = bf16-packed (it is ") +
             name_of(c.query_path) + ")";
    }
    if (c.ql_nope_layout != Layout::kContiguous) {
      return "ql_nope_layout must be contiguous with alias = exact-front (ql_nope takes "
             "query_out's strides)";
    }
  }
  if (c.query_path == QueryPath::kFp8Packed) {
    const uint32_t exponent = (c.q_scale_bits >> 23) & 0xFF;
    if ((c.q_scale_bits >> 31) != 0 || exponent == 0 || exponent == 0xFF) {
      return "q_scale = " + hex(c.q_scale_bits) + " must be a positive, finite, normal fp32";
    }
  }
  if (c.memory_limit_bytes < 1 || c.memory_limit_bytes > CaseLimits::kMaxMemoryBytes) {
    return "memory_limit_bytes = " + std::to_string(c.memory_limit_bytes) + " is outside [1, " +
           std::to_string(CaseLimits::kMaxMemoryBytes) + "]";
  }
  const uint64_t bytes = plan_tensors(c).total_bytes();  // (computed twice only with edits)
  if (bytes > c.memory_limit_bytes) {
    return "the case's tensors need " + std::to_string(bytes) +
           " bytes, over memory_limit_bytes = " + std::to_string(c.memory_limit_bytes);
  }
  if (c.edits.size() > CaseLimits::kMaxEdits) {
    return "edits: " + std::to_string(c.edits.size()) + " edits, over " + std::to_string(CaseLimits::kMaxEdits);
  }
  const TensorPlan plan = plan_tensors(c);
  for (size_t i = 0; i < c.edits.size(); ++i) {
    e = edit_problem(c, plan, i);
    if (!e.empty()) return e;
  }
  return "";
}

std::string describe(const Case& c) {
  std::ostringstream s;
  s << "T=" << c.num_tokens << " H=" << c.mqa_heads << " NI=" << c.indexer_heads
    << " D=" << c.index_dim << " R=" << c.rope_dim << " L=" << c.nope_dim << " "
    << name_of(c.query_path) << (c.has_indexer ? "" : " no-indexer")
    << " rope=" << name_of(c.indexer_rope) << " caches=" << name_of(c.mqa_cache_dtype) << "/"
    << name_of(c.indexer_cache_dtype) << " weights=" << name_of(c.weights_dtype) << "->"
    << name_of(c.weights_out_dtype) << " layouts q_pe=" << name_of(c.q_pe_layout)
    << " ql_nope=" << name_of(c.ql_nope_layout) << " index_q=" << name_of(c.index_q_layout)
    << " weights=" << name_of(c.weights_layout) << "/col" << c.weights_column_stride
    << " caches=" << name_of(c.mqa_cache_layout) << "/" << name_of(c.indexer_cache_layout)
    << " out=" << name_of(c.query_out_layout) << "/" << name_of(c.index_q_fp8_layout) << "/"
    << name_of(c.weights_out_layout) << " pad=" << c.row_padding << " alias=" << name_of(c.alias)
    << " P=" << c.cache_rows << " positions=" << name_of(c.positions)
    << " values=" << name_of(c.values) << " q_scale=" << hex(c.q_scale_bits) << " seed=" << c.seed
    << " profile=" << c.profile;
  if (!c.edits.empty()) s << " edits=" << c.edits.size();
  return s.str();
}

std::string not_this_op(const std::string& where, const std::string& shown) {
  return where + " = " + shown + " is not \"" + kCaseOp +
         "\", the op this build's cases hold (python -m qcheck ops lists the ops)";
}

}  // namespace qcheck
