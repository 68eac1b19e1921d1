// Which Highway targets the reference's SIMD files (simd_rows.cc,
// simd_rows_stream.cc) are compiled for: every target Highway can attain on
// this architecture (the fallback EMU128 or SCALAR included) plus AVX3_DL,
// so tests can check each one the CPU supports. Include it first, before any
// Highway header: the choice is made when hwy/highway.h is first read.
#pragma once

#ifndef HWY_COMPILE_ALL_ATTAINABLE
#define HWY_COMPILE_ALL_ATTAINABLE
#endif
#ifndef HWY_WANT_AVX3_DL
#define HWY_WANT_AVX3_DL
#endif
