// The .npy file format (NumPy's format 1.0/2.0/3.0, little-endian, C order)
// for the dtypes a fused_q launch uses: '<i8' (positions), '<f4', '<u2'
// (bf16 as 16-bit words), '|u1' (e4m3 as bytes). Writing gives what
// numpy.save gives (format 1.0, the header padded to 64 bytes); reading
// accepts what numpy.save writes for those dtypes and refuses the rest with
// one line naming the field.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace qcheck {

struct NpyArray {
  std::string descr;           // "<i8", "<f4", "<u2" or "|u1"
  std::vector<int64_t> shape;  // C order
  std::vector<uint8_t> data;   // prod(shape) * itemsize bytes
};

// Bytes per element of a descr this module knows, 0 for any other.
int npy_itemsize(const std::string& descr);

// The file's bytes. `array.data` must hold prod(shape) * itemsize bytes.
std::vector<uint8_t> encode_npy(const NpyArray& array);

// "" on success, else the reason ("magic", "version", "header", "descr",
// "fortran_order", "shape" or "data" and what is wrong with it).
std::string decode_npy(const uint8_t* bytes, size_t size, NpyArray* out);

}  // namespace qcheck
