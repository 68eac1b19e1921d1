// e4m3fnuz (AMD's FP8) from an OCP e4m3 encoder, for a device that has an
// OCP conversion and no FNUZ one (Hopper's cvt.rn.satfinite.e4m3x2). The
// two formats share their bit layout, but FNUZ's exponent bias is 8, not 7:
// every FNUZ code is worth half the OCP code with the same bits, subnormals
// included. So the FNUZ code of x is the OCP code of 2|x| (the doubling is
// exact, and both round to nearest even on grids that the doubling maps onto
// each other) while that is an OCP finite: |x| <= 232, where the tie between
// 224 (0x7E) and 240 (0x7F) goes to the even 224, as OCP's saturation of 464
// to 448 (0x7E) also gives. Above: 0x7F, 240 (E4m3FnuzOverflow::kSatFinite:
// a finite overflow and +-Inf saturate). NaN: 0x80, FNUZ's one NaN. A result
// of zero has no sign (FNUZ has no -0).
//
// Plain C++ as well as CUDA, so the CPU checks the identity over every f32
// pattern against the scalar spec (tests/reference/e4m3fnuz_via_ocp_test)
// with the spec's OCP encoder standing in for the instruction, and the device
// sweep checks the kernel's use of it.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define QCHECK_HOST_DEVICE __host__ __device__
#else
#define QCHECK_HOST_DEVICE
#endif

namespace qcheck::device {

// `ocp` maps a non-negative f32 to its OCP e4m3 code under saturation
// (0x00 .. 0x7E for a finite input).
template <typename OcpEncoder>
QCHECK_HOST_DEVICE inline uint8_t e4m3fnuz_via_ocp(float x, const OcpEncoder& ocp) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  const uint32_t magnitude_bits = bits & 0x7FFFFFFFu;
  if (magnitude_bits > 0x7F800000u) return 0x80;  // NaN
  float magnitude;
  std::memcpy(&magnitude, &magnitude_bits, sizeof magnitude);
  const uint8_t code = magnitude > 232.0f ? uint8_t{0x7F} : static_cast<uint8_t>(ocp(2.0f * magnitude) & 0x7Fu);
  if (code == 0) return 0x00;
  return static_cast<uint8_t>(((bits >> 24) & 0x80u) | code);
}

}  // namespace qcheck::device
