#include "ops/fused_k/oracle/indexer_k_cache.h"

#include <cstring>

#include "numerics/float_bits.h"

namespace qcheck::fused_k {

std::string indexer_k_layout_problem(IndexerKLayout layout, int64_t block_size, int64_t dim) {
  if (block_size < 1) return "block_size = " + std::to_string(block_size) + " is not at least 1";
  if (dim < 1) return "dim = " + std::to_string(dim) + " is not at least 1";
  if (layout == IndexerKLayout::kShuffled) {
    if (block_size % 16 != 0) {
      return "block_size = " + std::to_string(block_size) + " is not a multiple of 16, the shuffled layout's tile";
    }
    if (dim % 16 != 0) return "dim = " + std::to_string(dim) + " is not a multiple of 16, the shuffled layout's tile";
  }
  return "";
}

int64_t indexer_k_code_byte(IndexerKLayout layout, int64_t block_size, int64_t dim, int64_t token, int64_t element) {
  (void)block_size;  // the codes of a block come first whatever its size
  if (layout == IndexerKLayout::kFlat) return token * dim + element;
  return (token / 16) * 16 * dim + (element / 16) * 256 + (token % 16) * 16 + element % 16;
}

int64_t indexer_k_scale_byte(int64_t block_size, int64_t dim, int64_t token) { return block_size * dim + 4 * token; }

uint32_t indexer_k_scale_word(float scale, IndexerKScale store) {
  if (store == IndexerKScale::kF32) return bits_of(scale);
  return ((bits_of(scale) >> 23) & 0xFFu) * 0x01010101u;
}

void write_indexer_k_entry(uint8_t* cache, int64_t block_stride, IndexerKLayout layout, int64_t block_size,
                           int64_t dim, int64_t slot, const uint8_t* codes, float scale, IndexerKScale store) {
  if (slot < 0) return;
  uint8_t* block = cache + (slot / block_size) * block_stride;
  const int64_t token = slot % block_size;
  for (int64_t d = 0; d < dim; ++d) block[indexer_k_code_byte(layout, block_size, dim, token, d)] = codes[d];
  const uint32_t word = indexer_k_scale_word(scale, store);
  uint8_t bytes[4] = {static_cast<uint8_t>(word), static_cast<uint8_t>(word >> 8), static_cast<uint8_t>(word >> 16),
                      static_cast<uint8_t>(word >> 24)};
  std::memcpy(block + indexer_k_scale_byte(block_size, dim, token), bytes, 4);
}

}  // namespace qcheck::fused_k
