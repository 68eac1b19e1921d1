#include "numerics/rcp_approx.h"

#include <cmath>

#include "numerics/embedded_file.h"
#include "numerics/float_bits.h"

// The table's bytes in read-only data (numerics/embedded_file.h).
QCHECK_EMBED_FILE(qcheck_rcp_approx_widths_begin, qcheck_rcp_approx_widths_end, QCHECK_RCP_APPROX_WIDTHS_FILE);

namespace qcheck::spec {

const uint8_t* rcp_approx_width_table() { return qcheck_rcp_approx_widths_begin; }

size_t rcp_approx_width_table_bytes() {
  return static_cast<size_t>(qcheck_rcp_approx_widths_end - qcheck_rcp_approx_widths_begin);
}

float rcp_approx_of_width(int64_t n) {
  if (n < 1 || n > kRcpApproxWidths) return NAN;
  const size_t i = static_cast<size_t>(n - 1);
  const int correction = ((rcp_approx_width_table()[i / 4] >> (2 * (i % 4))) & 3) - 1;
  // The corrections are relative to this value, 1 / n in double rounded to
  // f32, the way the table was made (and RN(1 / n) at every n: the test
  // checks it against an integer computation).
  const float nearest = static_cast<float>(1.0 / static_cast<double>(n));
  return float_from_bits(bits_of(nearest) + static_cast<uint32_t>(correction));
}

float divide_full_by_width(float x, int64_t n) { return x * rcp_approx_of_width(n); }

}  // namespace qcheck::spec
