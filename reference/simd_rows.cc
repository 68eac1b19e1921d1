// Placeholder until the Highway rows land: the SIMD table is the scalar one.
#include "reference/row_ops.h"

namespace qcheck {
const RowOps& simd_row_ops() { return scalar_row_ops(); }
}  // namespace qcheck
