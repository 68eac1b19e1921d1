// The table of corrections measured on a Hopper GPU (sm_90) by
// `qcheck-rsqrt-table generate` (tools/rsqrt_table), embedded in the
// library as it is: 2^24 two-bit entries, 4 MiB (git and the wheel store it
// compressed, about 330 KB). Its counts, over [0.5, 2): -2 ulp 8, -1 ulp
// 2,344,391, 0 ulp 13,143,086, +1 ulp 1,289,731. `qcheck-rsqrt-table check`
// and the GPU gate's sweeps compare it with the hardware on every f32.
#include "numerics/embedded_file.h"
#include "numerics/rsqrt_approx.h"

// The table's bytes in read-only data (numerics/embedded_file.h).
QCHECK_EMBED_FILE(qcheck_rsqrt_approx_table_begin, qcheck_rsqrt_approx_table_end, QCHECK_RSQRT_APPROX_TABLE_FILE);

namespace qcheck::spec {

const uint8_t* rsqrt_approx_table() { return qcheck_rsqrt_approx_table_begin; }

size_t rsqrt_approx_table_bytes() {
  return static_cast<size_t>(qcheck_rsqrt_approx_table_end - qcheck_rsqrt_approx_table_begin);
}

float rsqrt_approx(float x, bool ftz) { return rsqrt_approx_with(rsqrt_approx_table(), x, ftz); }

}  // namespace qcheck::spec
