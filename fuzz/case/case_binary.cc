#include "fuzz/case/case_binary.h"

#include <cstdio>
#include <cstring>
#include <sstream>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "core/op/any_case.h"
#include "fuzz/case/case_fields.h"
#include "fuzz/case/case_names.h"

namespace qcheck {
namespace {

bool is_profile_char(uint8_t ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' ||
         ch == '.';
}

class Writer {
 public:
  explicit Writer(std::vector<uint8_t>& out) : out_(out) {}
  void integer(const char*, int64_t& v, bool) { put(static_cast<uint64_t>(v), 8); }
  template <typename Enum>
  void enumeration(const char*, Enum& v, bool) {
    put(static_cast<uint8_t>(v), 1);
  }
  void boolean(const char*, bool& v) { put(v ? 1 : 0, 1); }
  void bits32(const char*, uint32_t& v) { put(v, 4); }
  void u64(const char*, uint64_t& v) { put(v, 8); }
  void text(const char*, std::string& v) {
    // Encoding never fails; a name longer than 255 bytes is cut here and
    // then refused by decode and by validate_case (limit 32).
    const size_t n = v.size() < 255 ? v.size() : 255;
    put(n, 1);
    out_.insert(out_.end(), v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n));
  }
  void edits(const char*, std::vector<ValueEdit>& edits) {
    if (edits.empty()) return;  // version 1
    put(edits.size(), 2);
    for (const ValueEdit& e : edits) {
      put(static_cast<uint8_t>(e.tensor), 1);
      for (int64_t v : {e.row, e.rows, e.head, e.element, e.elements}) put(static_cast<uint64_t>(v), 8);
      put(e.bits, 8);
    }
  }

 private:
  void put(uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  std::vector<uint8_t>& out_;
};

class Reader {
 public:
  Reader(const uint8_t* data, size_t size, size_t offset, unsigned version)
      : data_(data), size_(size), at_(offset), version_(version) {}

  void integer(const char* name, int64_t& v, bool) {
    uint64_t raw;
    if (get(name, 8, &raw)) v = static_cast<int64_t>(raw);
  }
  template <typename Enum>
  void enumeration(const char* name, Enum& v, bool) {
    uint64_t raw;
    if (!get(name, 1, &raw)) return;
    if (raw >= enum_count<Enum>()) {
      fail(std::string(name) + " = " + std::to_string(raw) + " (byte " + std::to_string(at_ - 1) +
           ") is not one of 0.." + std::to_string(enum_count<Enum>() - 1) + " (" +
           names_of_all<Enum>() + ")");
      return;
    }
    v = static_cast<Enum>(raw);
  }
  void boolean(const char* name, bool& v) {
    uint64_t raw;
    if (!get(name, 1, &raw)) return;
    if (raw > 1) {
      fail(std::string(name) + " = " + std::to_string(raw) + " (byte " + std::to_string(at_ - 1) +
           ") is not 0 or 1");
      return;
    }
    v = raw == 1;
  }
  void bits32(const char* name, uint32_t& v) {
    uint64_t raw;
    if (get(name, 4, &raw)) v = static_cast<uint32_t>(raw);
  }
  void u64(const char* name, uint64_t& v) {
    uint64_t raw;
    if (get(name, 8, &raw)) v = raw;
  }
  void text(const char* name, std::string& v) {
    uint64_t length;
    if (!get(name, 1, &length)) return;
    if (length > CaseLimits::kMaxProfileNameLength) {
      fail(std::string(name) + " length = " + std::to_string(length) + " is over " +
           std::to_string(CaseLimits::kMaxProfileNameLength));
      return;
    }
    if (!have(name, length)) return;
    for (size_t i = 0; i < length; ++i) {
      const uint8_t ch = data_[at_ + i];
      if (!is_profile_char(ch)) {
        std::ostringstream s;
        s << name << " byte " << i << " = 0x" << std::hex << unsigned(ch)
          << " is not one of [a-z0-9._-]";
        fail(s.str());
        return;
      }
    }
    v.assign(reinterpret_cast<const char*>(data_ + at_), length);
    at_ += length;
  }

  void edits(const char* name, std::vector<ValueEdit>& edits) {
    if (version_ < kCaseBinaryVersionWithEdits) return;
    uint64_t count;
    if (!get(name, 2, &count)) return;
    const uint64_t least = version_ == kCaseBinaryVersionAnyOp ? 0 : 1;  // v3 always writes the count
    if (count < least || count > CaseLimits::kMaxEdits) {
      fail(std::string(name) + " count = " + std::to_string(count) + " is outside [" + std::to_string(least) +
           ", " + std::to_string(CaseLimits::kMaxEdits) + "]" +
           (least == 1 ? " (a case without edits is version 1)" : ""));
      return;
    }
    for (uint64_t i = 0; i < count && error_.empty(); ++i) {
      ValueEdit e;
      uint64_t tensor, raw[6];
      if (!get(name, 1, &tensor)) return;
      for (uint64_t& r : raw) {
        if (!get(name, 8, &r)) return;
      }
      if (tensor > static_cast<uint64_t>(TensorId::kIndexerCache)) {
        fail(std::string(name) + "[" + std::to_string(i) + "].tensor = " + std::to_string(tensor) +
             " is not an input (0..6)");
        return;
      }
      e.tensor = static_cast<TensorId>(tensor);
      e.row = static_cast<int64_t>(raw[0]);
      e.rows = static_cast<int64_t>(raw[1]);
      e.head = static_cast<int64_t>(raw[2]);
      e.element = static_cast<int64_t>(raw[3]);
      e.elements = static_cast<int64_t>(raw[4]);
      e.bits = raw[5];
      edits.push_back(e);
    }
  }

  const std::string& error() const { return error_; }
  size_t offset() const { return at_; }

 private:
  bool have(const char* name, uint64_t bytes) {
    if (!error_.empty()) return false;
    if (size_ - at_ < bytes) {
      fail("truncated: field " + std::string(name) + " needs " + std::to_string(bytes) +
           " bytes at offset " + std::to_string(at_) + ", " + std::to_string(size_ - at_) +
           " left");
      return false;
    }
    return true;
  }
  bool get(const char* name, int bytes, uint64_t* v) {
    if (!have(name, static_cast<uint64_t>(bytes))) return false;
    uint64_t value = 0;
    for (int i = 0; i < bytes; ++i) value |= static_cast<uint64_t>(data_[at_ + i]) << (8 * i);
    at_ += static_cast<size_t>(bytes);
    *v = value;
    return true;
  }
  void fail(const std::string& message) {
    if (error_.empty()) error_ = message;
  }

  const uint8_t* data_;
  size_t size_;
  size_t at_;
  unsigned version_;
  std::string error_;
};

constexpr size_t kHeaderBytes = sizeof(kCaseBinaryMagic) + 2;

}  // namespace

std::vector<uint8_t> encode_case(const Case& c) {
  std::vector<uint8_t> out(kCaseBinaryMagic, kCaseBinaryMagic + sizeof(kCaseBinaryMagic));
  const uint16_t version = c.edits.empty() ? kCaseBinaryVersion : kCaseBinaryVersionWithEdits;
  out.push_back(static_cast<uint8_t>(version & 0xFF));
  out.push_back(static_cast<uint8_t>(version >> 8));
  Case copy = c;  // the visitor takes a mutable Case; writing does not change it
  Writer writer(out);
  visit_case_fields(copy, writer);
  return out;
}

std::string decode_case(const uint8_t* data, size_t size, Case* out) {
  if (size < kHeaderBytes) {
    return "truncated: " + std::to_string(size) + " bytes, a case has at least " +
           std::to_string(kHeaderBytes) + " (magic and version)";
  }
  if (std::memcmp(data, kCaseBinaryMagic, sizeof(kCaseBinaryMagic)) != 0) {
    return "bad magic: a binary case starts with \"QCKC\"";
  }
  const unsigned version = data[4] | (unsigned(data[5]) << 8);
  if (version != kCaseBinaryVersion && version != kCaseBinaryVersionWithEdits &&
      version != kCaseBinaryVersionAnyOp) {
    return "version = " + std::to_string(version) + " is not supported (this build reads versions " +
           std::to_string(kCaseBinaryVersion) + ", " + std::to_string(kCaseBinaryVersionWithEdits) + " and " +
           std::to_string(kCaseBinaryVersionAnyOp) + ")";
  }
  size_t fields_at = kHeaderBytes;
  if (version == kCaseBinaryVersionAnyOp) {
    // The op and its schema (core/op/any_case.h): this decoder reads fused_q's.
    std::string op;
    const std::string error = any_case_op_name(data, size, &op);
    if (!error.empty()) return error;
    if (op != kCaseOp) return "op = \"" + op + "\": this reads " + kCaseOp + " cases";
    fields_at += 1 + op.size();
    if (size - fields_at < 2) return "truncated: schema needs 2 bytes at offset " + std::to_string(fields_at);
    const unsigned schema = data[fields_at] | (unsigned(data[fields_at + 1]) << 8);
    if (schema != kCaseSchema) {
      return "schema = " + std::to_string(schema) + " of op " + kCaseOp + " is not supported (this build reads schema " +
             std::to_string(kCaseSchema) + ")";
    }
    fields_at += 2;
  }
  Case c;
  Reader reader(data, size, fields_at, version);
  visit_case_fields(c, reader);
  if (!reader.error().empty()) return reader.error();
  if (reader.offset() != size) {
    return std::to_string(size - reader.offset()) +
           " trailing bytes after the last field (offset " + std::to_string(reader.offset()) + ")";
  }
  *out = c;
  return "";
}

std::string case_digest(const Case& c) {
  const std::vector<uint8_t> bytes = encode_case(c);
  char text[17];
  std::snprintf(text, sizeof text, "%016llx",
                static_cast<unsigned long long>(XXH64(bytes.data(), bytes.size(), 0)));
  return text;
}

}  // namespace qcheck
