#include "fuzz/case/case_file.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "fuzz/case/case_binary.h"
#include "fuzz/case/case_json.h"

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

std::string read_file_whole(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "cannot open " + path + ": " + std::strerror(errno);
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return in.bad() ? "cannot read " + path : "";
}

std::string write_file_whole(const std::string& path, const std::string& bytes) {
  const std::string temporary = path + ".partial";
  std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
  if (!file) return "cannot write " + path + ": " + std::strerror(errno);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  file.close();
  if (!file || std::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(temporary.c_str());
    return "cannot write " + path + ": " + why;
  }
  return "";
}

std::string save_case_file(const std::string& path, const Case& c, CaseForm form) {
  std::string bytes;
  if (form == CaseForm::kJson) {
    bytes = case_to_json(c);
  } else {
    const std::vector<uint8_t> binary = encode_case(c);
    bytes.assign(binary.begin(), binary.end());
  }
  const std::string error = write_file_whole(path, bytes);
  return error.empty() ? "" : "case file: " + error;
}

std::string list_case_files(const std::string& path, std::vector<std::string>* files) {
  namespace fs = std::filesystem;
  const auto is_documentation = [](const fs::path& p) {
    return p.filename().string().rfind("README", 0) == 0 || p.extension() == ".md";
  };
  std::error_code error;
  if (fs::is_directory(path, error)) {
    std::vector<std::string> found;
    for (const auto& entry : fs::recursive_directory_iterator(path, error)) {
      if (entry.is_regular_file() && !is_documentation(entry.path())) found.push_back(entry.path().string());
    }
    if (error) return path + ": " + error.message();
    std::sort(found.begin(), found.end());
    files->insert(files->end(), found.begin(), found.end());
    return "";
  }
  if (!fs::is_regular_file(path, error)) return path + ": not a file or directory";
  files->push_back(path);
  return "";
}

}  // namespace qcheck
