// Case files: a corpus entry, a crash artifact or a hand-written case. The
// form is detected from the content: JSON starts with '{' (after blanks);
// anything else is the binary form (libFuzzer artifacts are binary).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/case/case.h"

namespace qcheck {

enum class CaseForm { kBinary, kJson };

// Decodes bytes in either form. "" and *out (and *form if given) set on
// success, else one line (out untouched).
std::string parse_case_bytes(const std::vector<uint8_t>& bytes, Case* out,
                             CaseForm* form = nullptr);

// Reads and decodes a file. The message names the file on failure.
std::string load_case_file(const std::string& path, Case* out, CaseForm* form = nullptr);

// Writes a case in the given form, all or nothing: the bytes go to a
// temporary file beside `path`, renamed over it once complete (a full disk
// leaves no half-written case). "" or a message naming the file.
std::string save_case_file(const std::string& path, const Case& c, CaseForm form);

// Reads the whole file into *out. "" or a message naming the file.
std::string read_file_whole(const std::string& path, std::string* out);

// Writes `bytes` to `path` all or nothing (a temporary file beside it,
// renamed over it once complete). "" or a message naming the file.
std::string write_file_whole(const std::string& path, const std::string& bytes);

// Appends the case files `path` names: the file itself, or every regular
// file under a directory, recursively, in sorted order, README* and *.md
// files left out. "" or a message naming the path.
std::string list_case_files(const std::string& path, std::vector<std::string>* files);

}  // namespace qcheck
