// A kernel's domain: the cases it supports, field by field, as kernels of
// this family state them (a wrapper's asserts, a Triton kernel's constexpr
// shapes, an input stride it assumes is 1). Every tool asks the same model:
// contains() gives the first reason a case is outside (a case outside is
// exit 2, never a finding); fit() moves a case inside with the smallest
// changes (the fuzz loop's repair). The minimizer proposes no candidate
// outside it. Plugins declare theirs in C (qcheck_plugin_domain), read into
// this model; the Python door builds one from qcheck.Domain(...) through its
// JSON form (domain_json.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/case/case.h"

namespace qcheck {

// The dimensions a domain can bound, in Case's names.
enum class Dim : uint8_t {
  kNumTokens,     // T
  kMqaHeads,      // H
  kIndexerHeads,  // NI
  kIndexDim,      // D
  kRopeDim,       // R
  kNopeDim,       // L
  kCacheRows,     // P
};
constexpr int kDimCount = 7;

// The tensors a layout rule can name: every one but positions.
constexpr TensorId kLaidOutTensors[] = {TensorId::kQPe,          TensorId::kQlNope,    TensorId::kIndexQ,
                                        TensorId::kIndexWeights, TensorId::kMqaCache,  TensorId::kIndexerCache,
                                        TensorId::kQueryOut,     TensorId::kIndexQFp8, TensorId::kIndexWeightsOut};

const char* name_of(Dim dim);  // "num_tokens", ...
// Case's name or the short one (T, H, NI, D, R, L, P); false when neither.
bool parse_name(const std::string& name, Dim* out);
int64_t dim_value(const Case& c, Dim dim);
int64_t& dim_field(Case& c, Dim dim);

// The values one dimension may take: every rule that is set must hold.
struct DimRule {
  int64_t min = 0;               // 0: no lower bound beyond the case's own
  int64_t max = 0;               // 0: no upper bound
  std::vector<int64_t> values;   // empty: any value
  bool power_of_two = false;
  int64_t multiple_of = 0;       // 0 or 1: any

  bool any() const { return min == 0 && max == 0 && values.empty() && !power_of_two && multiple_of <= 1; }
  bool allows(int64_t v) const;
  // The allowed value nearest to v (the smaller on a tie); v itself when
  // nothing in [1, 2^24] is allowed.
  int64_t nearest(int64_t v) const;
  // The largest allowed value <= v, or the smallest >= v (0 when none).
  int64_t at_most(int64_t v) const;
  int64_t at_least(int64_t v) const;
  std::string text() const;  // "64 or 128", "1..65535", "a power of two"
  bool operator==(const DimRule& o) const;
};

// LEFT OP FACTOR * RIGHT (e.g. mqa_heads <= 4 * indexer_heads), or with
// op kDivides: LEFT % RIGHT == 0 (factor 1).
struct Relation {
  enum class Op : uint8_t { kLess, kLessEqual, kEqual, kGreaterEqual, kGreater, kDivides };
  Dim left = Dim::kMqaHeads;
  Op op = Op::kLessEqual;
  int64_t factor = 1;
  Dim right = Dim::kIndexerHeads;

  bool holds(const Case& c) const;
  std::string text() const;  // as parse_relation reads it
  bool operator==(const Relation& o) const;
};

// "" and *out set, or why the text is not a relation.
std::string parse_relation(const std::string& text, Relation* out);

struct Domain {
  // Masks: bit (1 << value) set for each supported value of the enum
  // (Case's enums); 0 never appears: a default domain allows every value.
  uint32_t query_paths = 0b111;
  uint32_t indexer = 0b11;         // bit 0: without the indexer, bit 1: with it
  uint32_t alias = 0b11;           // bit 0: ql_nope apart, bit 1: aliased into query_out
  uint32_t indexer_ropes = 0b11;
  uint32_t mqa_cache_dtypes = 0b11;
  uint32_t indexer_cache_dtypes = 0b11;
  uint32_t weights_dtypes = 0b11;
  uint32_t weights_out_dtypes = 0b11;
  // Tensors (bit 1 << TensorId) that must be contiguous (layout
  // contiguous; index_weights also with column stride 1), and those whose
  // innermost stride must be 1: of qcheck's layouts only index_weights'
  // column stride can be other than 1.
  uint32_t contiguous = 0;
  uint32_t unit_inner_stride = 0;
  DimRule dims[kDimCount];
  std::vector<Relation> relations;

  const DimRule& dim(Dim d) const { return dims[static_cast<int>(d)]; }
  DimRule& dim(Dim d) { return dims[static_cast<int>(d)]; }
  bool any() const;  // every case is inside
  bool operator==(const Domain& o) const;
};

// "" when the case is inside, else the first field outside it, in one line:
// "FIELD VALUE (the domain allows ...)". The indexer's fields count only
// with the indexer.
std::string outside_domain(const Domain& domain, const Case& c);

// Moves the case inside with the smallest changes: each field outside to
// the nearest value inside, then the relations (their left side moves),
// then what validation needs (R <= D, the alias only where it can be). New
// dims take the default scales of the new D and NI and drop the value
// edits (they name elements of the old shape). The result may still be
// outside (rules that contradict) or invalid: callers check both.
void fit_to_domain(const Domain& domain, Case& c);

}  // namespace qcheck
