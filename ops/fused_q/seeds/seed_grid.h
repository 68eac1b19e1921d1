// The seed corpus, as a deterministic list: what qcheck-corpus-gen writes
// under corpus/. Every entry has a name (for the examples' file names and for
// reading this code) and its seed is a hash of that name, so adding an entry
// never changes the bytes of the others.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/case/case.h"

namespace qcheck::corpus {

struct NamedCase {
  std::string name;
  Case c;
};

struct NamedBytes {
  std::string name;
  std::vector<uint8_t> bytes;
};

// Seeds of the fused_q target: the real model shapes (DeepSeek-V3.2 and
// GLM-5 at TP 1..8, GLM-5's shared layers without an indexer) on every query
// path; tails (T 1, 15, 16, 17, 33); every layout, the alias, every dtype,
// every value and positions recipe, both profiles where valid, q_scale
// variants, odd and lopsided head counts. Small T throughout.
std::vector<NamedCase> fused_q_seeds();

// A few hand-readable cases (written as JSON under corpus/examples/).
std::vector<NamedCase> example_cases();

// Seeds of the numerics target: each row operation over special values at
// a few lengths and misalignments (layout: fuzz/targets/numerics_input.h).
std::vector<NamedBytes> numerics_seeds();

// Seeds of the case_decode target: binary and JSON cases, and near misses
// (truncated, wrong version, unknown field).
std::vector<NamedBytes> case_decode_seeds();

}  // namespace qcheck::corpus
