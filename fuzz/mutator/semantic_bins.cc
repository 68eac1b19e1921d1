#include "fuzz/mutator/semantic_bins.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "fuzz/mutator/bin_table.h"
#include "fuzz/verdict/report.h"
#include "ops/fused_q/shapes/model_shapes.h"

// libFuzzer's extra counters: found through the linker's __start_/__stop_
// symbols of this section (FuzzerExtraCounters.cpp). Outside libFuzzer the
// section is just data.
__attribute__((section("__libfuzzer_extra_counters"), used)) static uint8_t
    g_extra_counters[qcheck::fuzzing::kTotalBins];

namespace qcheck::fuzzing {
namespace {

bool g_reached[kTotalBins];

void mark(BinGroup group, int bin) {
  const int index = bin_index(group, bin);
  g_extra_counters[index] = 1;
  g_reached[index] = true;
}

int tokens_bin(int64_t t) {
  if (t <= 1) return static_cast<int>(t);   // T=0, T=1
  if (t < 16) return 2;
  if (t == 16) return 3;
  if (t < 32) return 4;
  return t <= 64 ? 5 : 6;
}

int heads_bin(int64_t h) {
  if (h == 1) return 0;
  if (h > 16) return 3;
  return h % 2 == 1 ? 1 : 2;
}

}  // namespace

void mark_case_bins(const Case& c) {
  mark(BinGroup::kTokens, tokens_bin(c.num_tokens));
  if (c.num_tokens > 0) mark(BinGroup::kTokensMod16, static_cast<int>(c.num_tokens % 16));
  mark(BinGroup::kHeads, heads_bin(c.mqa_heads));
  mark(BinGroup::kIndexerHeads, heads_bin(c.indexer_heads));
  if (c.mqa_heads > 2 * c.indexer_heads) mark(BinGroup::kIndexerHeads, 4);  // a grid sized by NI misses heads

  const bool real = c.index_dim == kRealIndexDim && c.rope_dim == kRealRopeDim && c.nope_dim == kRealNopeDim;
  if (c.index_dim == 16 && c.rope_dim <= 4 && c.nope_dim == 8) mark(BinGroup::kShape, 0);
  if (real) mark(BinGroup::kShape, 1);
  if (c.rope_dim == 2) mark(BinGroup::kShape, 2);
  mark(BinGroup::kShape, c.rope_dim == c.index_dim ? 3 : 4);
  if (c.index_dim > 128) mark(BinGroup::kShape, 5);
  if (c.nope_dim > 512) mark(BinGroup::kShape, 6);
  if (c.cache_rows == 1) mark(BinGroup::kShape, 7);
  if (c.cache_rows > 8192) mark(BinGroup::kShape, 8);
  const int model = matching_model_shape(c);
  if (model >= 0) mark(BinGroup::kModel, c.has_indexer ? model : kModelShapeCount);

  mark(BinGroup::kPath, static_cast<int>(c.query_path));
  mark(BinGroup::kIndexer, c.has_indexer ? 1 + static_cast<int>(c.indexer_rope) : 0);
  mark(BinGroup::kDtypes, 0 + static_cast<int>(c.mqa_cache_dtype));
  if (c.has_indexer) {
    mark(BinGroup::kDtypes, 2 + static_cast<int>(c.indexer_cache_dtype));
    mark(BinGroup::kDtypes, 4 + static_cast<int>(c.weights_dtype));
    mark(BinGroup::kDtypes, 6 + static_cast<int>(c.weights_out_dtype));
  }

  const bool indexer = c.has_indexer;
  const bool reads_ql_nope = c.query_path != QueryPath::kBf16Separate && c.alias == AliasMode::kNone;
  int layouts = 0;
  auto layout_bin = [&](bool reached, int bin) {
    if (reached) mark(BinGroup::kLayouts, bin), ++layouts;
  };
  layout_bin(c.q_pe_layout == Layout::kPaddedRows, 0);
  layout_bin(c.q_pe_layout == Layout::kWideRowView, 1);
  layout_bin(reads_ql_nope && c.ql_nope_layout == Layout::kPaddedRows, 2);
  layout_bin(reads_ql_nope && c.ql_nope_layout == Layout::kHeadMajor, 3);
  layout_bin(indexer && c.index_q_layout == Layout::kPaddedRows, 4);
  layout_bin(indexer && c.weights_layout == Layout::kPaddedRows, 5);
  layout_bin(indexer && c.weights_column_stride > 1 && c.indexer_heads > 1, 6);
  layout_bin(c.mqa_cache_layout == Layout::kPaddedRows, 7);
  layout_bin(indexer && c.indexer_cache_layout == Layout::kPaddedRows, 8);
  layout_bin(c.query_out_layout == Layout::kPaddedRows, 9);
  layout_bin(c.index_q_fp8_layout == Layout::kPaddedRows || c.weights_out_layout == Layout::kPaddedRows, 10);
  if (layouts == 0) mark(BinGroup::kLayouts, 11);

  mark(BinGroup::kAlias, static_cast<int>(c.alias));
  mark(BinGroup::kValues, static_cast<int>(c.values));
  mark(BinGroup::kPositions, static_cast<int>(c.positions));
  mark(BinGroup::kProfile, c.profile == "qcheck" ? 0 : 1);
  if (c.query_path == QueryPath::kFp8Packed) {
    const bool power_of_two = (c.q_scale_bits & 0x7FFFFFu) == 0;
    mark(BinGroup::kQScale, c.q_scale_bits == 0x3F800000u ? 0 : power_of_two ? 1 : 2);
  }
}

void mark_verdict_bins(const Verdict& v) {
  switch (v.outcome.kind) {
    case OutcomeKind::kInvalidInput: mark(BinGroup::kVerdict, 1); return;
    case OutcomeKind::kRuntimeError: mark(BinGroup::kVerdict, 2); return;
    case OutcomeKind::kOk: break;
  }
  if (v.report.passed()) {
    mark(BinGroup::kVerdict, 0);
    return;
  }
  for (const auto& [mismatch, count] : v.report.counts_by_class()) {
    if (count > 0) mark(BinGroup::kVerdict, 3 + static_cast<int>(mismatch));
  }
}

// Specials and scale buckets: fuzz/mutator/input_bins.cc marks them through
// this hook, so the counters stay private to this file.
void mark_bin(BinGroup group, int bin) { mark(group, bin); }

int bin_count() { return kTotalBins; }

void clear_last_bins() { std::memset(g_extra_counters, 0, sizeof g_extra_counters); }

const uint8_t* last_bins() { return g_extra_counters; }

std::string bin_name(int index) {
  for (int g = 0; g < kBinGroupCount; ++g) {
    const BinGroupSpec& spec = kBinGroups[g];
    const int first = bin_index(static_cast<BinGroup>(g), 0);
    if (index >= first && index < first + spec.count) return std::string(spec.name) + "/" + spec.bins[index - first];
  }
  return "";
}

int bins_reached() {
  int n = 0;
  for (bool r : g_reached) n += r ? 1 : 0;
  return n;
}

std::string bins_report() {
  std::string text;
  for (int g = 0; g < kBinGroupCount; ++g) {
    const BinGroupSpec& spec = kBinGroups[g];
    std::string reached, missing;
    int n = 0;
    for (int b = 0; b < spec.count; ++b) {
      const bool r = g_reached[bin_index(static_cast<BinGroup>(g), b)];
      std::string& list = r ? reached : missing;
      list += (list.empty() ? "" : ", ") + std::string(spec.bins[b]);
      n += r ? 1 : 0;
    }
    char head[96];
    std::snprintf(head, sizeof head, "  %-18s %2d/%-2d ", spec.name, n, spec.count);
    text += head + (reached.empty() ? std::string("-") : reached);
    if (!missing.empty()) text += "  | missing: " + missing;
    text += "\n";
  }
  return "semantic bins reached: " + std::to_string(bins_reached()) + " of " + std::to_string(kTotalBins) +
         "\n" + text;
}

void print_bins_at_exit_if_asked() {
  const char* flag = std::getenv("QCHECK_PRINT_BINS");
  if (flag == nullptr || std::strcmp(flag, "1") != 0) return;
  static bool registered = false;
  if (registered) return;
  registered = true;
  std::atexit([] { std::fputs(bins_report().c_str(), stderr); });
}

}  // namespace qcheck::fuzzing
