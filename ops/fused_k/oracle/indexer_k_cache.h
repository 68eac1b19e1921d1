// The paged indexer-K cache (SEMANTICS-K.md 1.5 step 7): where a token's
// codes and scale go. A block holds block_size tokens: first their codes
// (block_size * dim bytes) in one of two layouts, then one 4-byte scale word
// per token:
//   flat:      token t, element d at byte t * dim + d
//   shuffled:  tiles of 16 tokens x 16 bytes (ROCm's layout): byte
//              (t / 16) * 16 * dim + (d / 16) * 256 + (t % 16) * 16 + d % 16
//   scale:     bytes block_size * dim + 4 t .. + 3, little-endian: the f32
//              scale, or its ue8m0 byte in all four bytes (the SM100 "MX"
//              form: a 128-wide row as four blocks of 32 sharing one exponent;
//              a +Inf scale gives 0xFFFFFFFF)
// A slot s >= 0 is token s % block_size of block s / block_size; a slot < 0
// writes nothing (kernels that write it anyway have a bug: before the cache,
// or over another token).
#pragma once

#include <cstdint>
#include <string>

#include "ops/fused_k/args/fused_k_args.h"

namespace qcheck::fused_k {

// "" when a block of block_size tokens of dim codes can have the layout,
// else one line naming the field and the limit.
std::string indexer_k_layout_problem(IndexerKLayout layout, int64_t block_size, int64_t dim);

// Byte offsets inside a block (token < block_size, element < dim).
int64_t indexer_k_code_byte(IndexerKLayout layout, int64_t block_size, int64_t dim, int64_t token, int64_t element);
int64_t indexer_k_scale_byte(int64_t block_size, int64_t dim, int64_t token);

// The 4-byte word the scale is stored as.
uint32_t indexer_k_scale_word(float scale, IndexerKScale store);

// Writes one token's dim codes and its scale word into the cache: `cache`
// is the first byte of block 0, blocks `block_stride` bytes apart (at least
// block_size * (dim + 4); padded strides leave the padding alone). Nothing
// for a slot < 0.
void write_indexer_k_entry(uint8_t* cache, int64_t block_stride, IndexerKLayout layout, int64_t block_size,
                           int64_t dim, int64_t slot, const uint8_t* codes, float scale, IndexerKScale store);

}  // namespace qcheck::fused_k
