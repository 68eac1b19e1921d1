#include "fuzz/exchange/npy.h"

#include <cctype>
#include <cstring>
#include <limits>

namespace qcheck {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicBytes = 6;
// Larger arrays than a case can hold (8 GiB) are refused before any
// multiplication can overflow.
constexpr uint64_t kMaxBytes = uint64_t(1) << 34;

// A small parser of the header's Python dict literal:
// {'descr': '<u2', 'fortran_order': False, 'shape': (3, 4), }
class HeaderParser {
 public:
  explicit HeaderParser(const std::string& text) : s_(text) {}

  std::string parse(NpyArray* out) {
    bool have_descr = false, have_order = false, have_shape = false;
    skip();
    if (!eat('{')) return "header: not a dict";
    for (;;) {
      skip();
      if (eat('}')) break;
      std::string key;
      if (!quoted(&key)) return "header: a key is not a quoted string";
      skip();
      if (!eat(':')) return "header: no ':' after '" + key + "'";
      skip();
      if (key == "descr") {
        if (!quoted(&out->descr)) return "descr: not a quoted string";
        have_descr = true;
      } else if (key == "fortran_order") {
        if (word("False")) {
        } else if (word("True")) {
          return "fortran_order: True (only C order is read)";
        } else {
          return "fortran_order: not False or True";
        }
        have_order = true;
      } else if (key == "shape") {
        const std::string error = shape(&out->shape);
        if (!error.empty()) return error;
        have_shape = true;
      } else {
        return "header: unknown key '" + key + "'";
      }
      skip();
      if (eat(',')) continue;
      skip();
      if (eat('}')) break;
      return "header: expected ',' or '}' after '" + key + "'";
    }
    skip();
    if (pos_ != s_.size()) return "header: text after the dict";
    if (!have_descr) return "descr: missing";
    if (!have_order) return "fortran_order: missing";
    if (!have_shape) return "shape: missing";
    return "";
  }

 private:
  void skip() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n')) ++pos_;
  }
  bool eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool word(const char* w) {
    const size_t n = std::strlen(w);
    if (s_.compare(pos_, n, w) != 0) return false;
    pos_ += n;
    return true;
  }
  bool quoted(std::string* out) {
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) return false;
    const char q = s_[pos_++];
    const size_t end = s_.find(q, pos_);
    if (end == std::string::npos || end - pos_ > 64) return false;
    *out = s_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return true;
  }
  std::string shape(std::vector<int64_t>* out) {
    if (!eat('(')) return "shape: not a tuple";
    out->clear();
    for (;;) {
      skip();
      if (eat(')')) return "";
      if (pos_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
        return "shape: not a tuple of non-negative integers";
      }
      uint64_t value = 0;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
        value = value * 10 + uint64_t(s_[pos_++] - '0');
        if (value > kMaxBytes) return "shape: a dimension above 2^34";
      }
      out->push_back(int64_t(value));
      if (out->size() > 8) return "shape: more than 8 dimensions";
      skip();
      if (eat(',')) continue;
      skip();
      if (eat(')')) return "";
      return "shape: expected ',' or ')'";
    }
  }

  const std::string& s_;
  size_t pos_ = 0;
};

}  // namespace

int npy_itemsize(const std::string& descr) {
  if (descr == "<i8") return 8;
  if (descr == "<f4") return 4;
  if (descr == "<u2") return 2;
  if (descr == "|u1" || descr == "<u1") return 1;
  return 0;
}

std::vector<uint8_t> encode_npy(const NpyArray& a) {
  std::string header = "{'descr': '" + a.descr + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < a.shape.size(); ++i) header += std::to_string(a.shape[i]) + (a.shape.size() == 1 ? "," : i + 1 < a.shape.size() ? ", " : "");
  header += "), }";
  // Pad with spaces and a newline so that the data starts at a multiple of 64.
  const size_t unpadded = kMagicBytes + 2 + 2 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::vector<uint8_t> out(kMagic, kMagic + kMagicBytes);
  out.push_back(1);
  out.push_back(0);
  out.push_back(uint8_t(header.size() & 0xFF));
  out.push_back(uint8_t(header.size() >> 8));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), a.data.begin(), a.data.end());
  return out;
}

std::string decode_npy(const uint8_t* bytes, size_t size, NpyArray* out) {
  if (size < kMagicBytes + 4 || std::memcmp(bytes, kMagic, kMagicBytes) != 0) return "magic: not a .npy file";
  const uint8_t major = bytes[6];
  size_t header_bytes = 0, start = 0;
  if (major == 1) {
    header_bytes = size_t(bytes[8]) | size_t(bytes[9]) << 8;
    start = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) return "header: truncated";
    header_bytes = size_t(bytes[8]) | size_t(bytes[9]) << 8 | size_t(bytes[10]) << 16 | size_t(bytes[11]) << 24;
    start = 12;
  } else {
    return "version: " + std::to_string(major) + "." + std::to_string(bytes[7]) + " (1.0, 2.0 and 3.0 are read)";
  }
  if (header_bytes > size - start) return "header: truncated (" + std::to_string(header_bytes) + " bytes announced)";
  const std::string header(reinterpret_cast<const char*>(bytes + start), header_bytes);
  NpyArray a;
  const std::string error = HeaderParser(header).parse(&a);
  if (!error.empty()) return error;
  const int itemsize = npy_itemsize(a.descr);
  if (itemsize == 0) return "descr: '" + a.descr + "' (read: <i8, <f4, <u2, |u1)";
  uint64_t elements = 1;
  for (int64_t d : a.shape) {
    if (d != 0 && elements > kMaxBytes / uint64_t(d)) return "shape: more than 2^34 elements";
    elements *= uint64_t(d);
  }
  if (elements > kMaxBytes / uint64_t(itemsize)) return "shape: more than 2^34 bytes";
  const uint64_t need = elements * uint64_t(itemsize);
  const size_t data_start = start + header_bytes;
  if (size - data_start != need) {
    return "data: " + std::to_string(size - data_start) + " bytes, the shape needs " + std::to_string(need);
  }
  a.data.assign(bytes + data_start, bytes + size);
  *out = std::move(a);
  return "";
}

}  // namespace qcheck
