// The table of semantic bins (fuzz/mutator/semantic_bins.h): groups and the
// names of their bins, in counter order. Adding a bin means adding a name
// here and marking it where it is computed.
#pragma once

#include "fuzz/verdict/report.h"

namespace qcheck::fuzzing {

enum class BinGroup : int {
  kTokens,
  kTokensMod16,
  kHeads,
  kIndexerHeads,
  kShape,
  kModel,
  kPath,
  kIndexer,
  kDtypes,
  kLayouts,
  kAlias,
  kValues,
  kPositions,
  kProfile,
  kQScale,
  kRowSpecials,
  kWeightSpecials,
  kCacheSpecials,
  kScaleExponent,
  kVerdict,
};
constexpr int kBinGroupCount = 20;

struct BinGroupSpec {
  const char* name;
  const char* const* bins;
  int count;
};

namespace bin_names {
constexpr const char* kTokens[] = {"T=0", "T=1", "T=2..15", "T=16", "T=17..31", "T=32..64", "T>64"};
constexpr const char* kTokensMod16[] = {"0", "1", "2", "3", "4", "5", "6", "7",
                                        "8", "9", "10", "11", "12", "13", "14", "15"};
constexpr const char* kHeads[] = {"H=1", "H odd", "H even", "H>16"};
constexpr const char* kIndexerHeads[] = {"NI=1", "NI odd", "NI even", "NI>16", "H>2*NI"};
constexpr const char* kShape[] = {"tiny (D16 R<=4 L8)", "real dims (D128 R64 L512)", "R=2", "R=D",
                                  "R<D", "D>128", "L>512", "P=1", "P>8192"};
constexpr const char* kModel[] = {"deepseek-v3.2-tp1", "deepseek-v3.2-tp2", "deepseek-v3.2-tp4",
                                  "deepseek-v3.2-tp8", "glm-5-tp1", "glm-5-tp2", "glm-5-tp4", "glm-5-tp8",
                                  "real shape without indexer"};
constexpr const char* kPath[] = {"fp8-packed", "bf16-packed", "bf16-separate"};
constexpr const char* kIndexer[] = {"no indexer", "neox", "interleaved"};
constexpr const char* kDtypes[] = {"mqa cache f32", "mqa cache bf16", "indexer cache f32", "indexer cache bf16",
                                   "weights f32", "weights bf16", "weights out f32", "weights out bf16"};
constexpr const char* kLayouts[] = {"q_pe padded", "q_pe wide-row", "ql_nope padded", "ql_nope head-major",
                                    "index_q padded", "weights padded", "weights column stride>1",
                                    "mqa cache padded", "indexer cache padded", "query_out padded",
                                    "indexer outputs padded", "all contiguous"};
constexpr const char* kAlias[] = {"none", "exact-front"};
constexpr const char* kValues[] = {"normal", "magnitudes", "specials", "scale-edges", "zero-rows",
                                   "scale-band", "cancellation", "large-positions", "mixed", "nan-rows",
                                   "contraction", "ties"};
constexpr const char* kPositions[] = {"arange", "random", "near-end", "repeated"};
constexpr const char* kProfile[] = {"qcheck", "vllm-triton"};
constexpr const char* kQScale[] = {"1.0", "other power of two", "not a power of two"};
// Special value classes of the generated inputs (see input_bins.cc).
constexpr const char* kSpecials[] = {"NaN", "+Inf", "-Inf", "-0", "subnormal", "|x|>=464"};
// The unbiased exponent e of an indexer row's UE8M0 scale 2^e.
constexpr const char* kScaleExponent[] = {"e<=-22 (floor)", "e -21..-15", "e -14..-8", "e -7..-1",
                                          "e 0..7", "e 8..15", "e 16..63", "e 64..127", "scale +Inf",
                                          "in log2f band"};
// Mismatch classes in the order of fuzz/verdict/report.h MismatchClass.
constexpr const char* kVerdict[] = {
    "pass", "invalid input", "runtime error", "sentinel-overwritten", "padding-overwritten",
    "input-modified", "written-when-disabled", "unwritten", "nondeterministic", "graph-replay-differs",
    "expected-nan-got-number",
    "expected-number-got-nan", "nan-bits", "sign-of-zero", "row-power-of-two", "off-by-one", "wrong-value"};
static_assert(sizeof(kVerdict) / sizeof(kVerdict[0]) == 3 + kMismatchClassCount,
              "a verdict bin per mismatch class");
}  // namespace bin_names

#define QCHECK_BIN_GROUP(label, names) {label, names, static_cast<int>(sizeof(names) / sizeof(names[0]))}
constexpr BinGroupSpec kBinGroups[kBinGroupCount] = {
    QCHECK_BIN_GROUP("tokens", bin_names::kTokens),
    QCHECK_BIN_GROUP("T % 16", bin_names::kTokensMod16),
    QCHECK_BIN_GROUP("mqa heads", bin_names::kHeads),
    QCHECK_BIN_GROUP("indexer heads", bin_names::kIndexerHeads),
    QCHECK_BIN_GROUP("shape", bin_names::kShape),
    QCHECK_BIN_GROUP("model shape", bin_names::kModel),
    QCHECK_BIN_GROUP("query path", bin_names::kPath),
    QCHECK_BIN_GROUP("indexer", bin_names::kIndexer),
    QCHECK_BIN_GROUP("dtypes", bin_names::kDtypes),
    QCHECK_BIN_GROUP("layouts", bin_names::kLayouts),
    QCHECK_BIN_GROUP("alias", bin_names::kAlias),
    QCHECK_BIN_GROUP("value recipe", bin_names::kValues),
    QCHECK_BIN_GROUP("positions", bin_names::kPositions),
    QCHECK_BIN_GROUP("profile", bin_names::kProfile),
    QCHECK_BIN_GROUP("q_scale (fp8)", bin_names::kQScale),
    QCHECK_BIN_GROUP("row specials", bin_names::kSpecials),
    QCHECK_BIN_GROUP("weight specials", bin_names::kSpecials),
    QCHECK_BIN_GROUP("cache specials", bin_names::kSpecials),
    QCHECK_BIN_GROUP("ue8m0 exponent", bin_names::kScaleExponent),
    QCHECK_BIN_GROUP("verdict", bin_names::kVerdict),
};
#undef QCHECK_BIN_GROUP

constexpr int bin_offset(BinGroup group) {
  int offset = 0;
  for (int g = 0; g < static_cast<int>(group); ++g) offset += kBinGroups[g].count;
  return offset;
}
constexpr int kTotalBins = bin_offset(static_cast<BinGroup>(kBinGroupCount));
constexpr int bin_index(BinGroup group, int bin) { return bin_offset(group) + bin; }

// Sets one bin's counter (and remembers it for bins_report).
void mark_bin(BinGroup group, int bin);

}  // namespace qcheck::fuzzing
