// The JSON form of a domain: what qcheck.Domain(...) sends, what
// `--domain FILE` reads and what replay commands carry. Every key is
// optional (absent: any value); an unknown key or value is an error that
// names it:
//   {"query_paths": ["bf16-packed", "fp8-packed"],       names of the case's enums
//    "indexer": [true],                                  with the indexer only
//    "alias": ["none"],                                  ql_nope apart only ("exact-front": aliased)
//    "indexer_ropes": ["neox"], "mqa_cache_dtypes": ["f32"], "indexer_cache_dtypes": [...],
//    "weights_dtypes": [...], "weights_out_dtypes": ["bf16"],
//    "contiguous": ["q_pe", "index_weights"],            tensors that must be contiguous
//    "unit_inner_stride": ["index_weights"],             tensors whose innermost stride must be 1
//    "dims": {"num_tokens": {"min": 1, "max": 65535},
//             "rope_dim": {"values": [64]},
//             "index_dim": {"power_of_two": true, "multiple_of": 16}},
//    "relations": ["mqa_heads <= 4 * indexer_heads"]}
#pragma once

#include <string>

#include "fuzz/domain/domain.h"

namespace qcheck {

// "" and *out set, or one line naming the key and what it accepts.
std::string domain_from_json(const std::string& text, Domain* out);

// The canonical form: only the keys that are not "any", in the order above.
std::string domain_to_json(const Domain& domain);

// "" and *out set from a file of the JSON form, or why not (the path named).
std::string load_domain_file(const std::string& path, Domain* out);

}  // namespace qcheck
