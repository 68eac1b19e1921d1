#include "fuzz/case_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "fuzz/case_binary.h"
#include "fuzz/case_json.h"

namespace qcheck {

std::string parse_case_bytes(const std::vector<uint8_t>& bytes, Case* out, CaseForm* form) {
  size_t first = 0;
  while (first < bytes.size() && (bytes[first] == ' ' || bytes[first] == '\t' ||
                                  bytes[first] == '\n' || bytes[first] == '\r')) {
    ++first;
  }
  const bool json = first < bytes.size() && bytes[first] == '{';
  const std::string error =
      json ? case_from_json(std::string(bytes.begin(), bytes.end()), out) : decode_case(bytes, out);
  if (error.empty() && form != nullptr) *form = json ? CaseForm::kJson : CaseForm::kBinary;
  return error.empty() ? "" : (json ? "JSON case: " : "binary case: ") + error;
}

std::string load_case_file(const std::string& path, Case* out, CaseForm* form) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "cannot open case file " + path + ": " + std::strerror(errno);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
  if (in.bad()) return "cannot read case file " + path;
  const std::string error = parse_case_bytes(bytes, out, form);
  return error.empty() ? "" : path + ": " + error;
}

std::string save_case_file(const std::string& path, const Case& c, CaseForm form) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return "cannot write case file " + path + ": " + std::strerror(errno);
  if (form == CaseForm::kJson) {
    file << case_to_json(c);
  } else {
    const std::vector<uint8_t> bytes = encode_case(c);
    file.write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
  }
  file.close();
  return file ? "" : "cannot write case file " + path;
}

}  // namespace qcheck
