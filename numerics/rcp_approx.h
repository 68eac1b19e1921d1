// Triton's `/` by a row's width, bit for bit: an f32 `/` compiles to PTX
// div.full.f32, which on sm_90 gives RN(x * rcp.approx.ftz.f32(n)). Measured
// on an H100 (scratch probes, 2026-12-06): x / W for W = 576, 1024, 1536,
// 7168 equals RN(x * the device's rcp.approx(W)) on 262,144 inputs each (x
// from 2^-30 to 2^30; the IEEE quotient differs on 33 % of them for 1536),
// and rcp.approx(n) for every integer n from 1 to 65,536 is kept here as
// two-bit corrections to RN(1 / n): -1 ulp 2,271, 0 ulp 56,735, +1 ulp
// 6,530. Quotients that are subnormal or overflow were not measured.
#pragma once

#include <cstddef>
#include <cstdint>

namespace qcheck::spec {

constexpr int64_t kRcpApproxWidths = 65536;

// The device's rcp.approx.ftz.f32(n) for 1 <= n <= kRcpApproxWidths (else NaN).
float rcp_approx_of_width(int64_t n);

// Triton's x / n (div.full.f32) for such an n: RN(x * rcp_approx_of_width(n)).
float divide_full_by_width(float x, int64_t n);

// The embedded corrections (numerics/rcp_approx_widths.bin): entry n - 1
// is the 2 bits at byte (n - 1) / 4, bits 2 * ((n - 1) % 4) and up, the
// device's bits minus RN(1 / n)'s, plus 1.
const uint8_t* rcp_approx_width_table();
size_t rcp_approx_width_table_bytes();

}  // namespace qcheck::spec
