#include "core/op/any_case.h"

#include <cstdio>
#include <cstring>
#include <sstream>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace qcheck {
namespace {

constexpr char kMagic[4] = {'Q', 'C', 'K', 'C'};
constexpr size_t kHeaderBytes = sizeof(kMagic) + 2;

bool is_op_char(uint8_t ch) { return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_'; }
bool is_text_char(uint8_t ch) { return is_op_char(ch) || ch == '-' || ch == '.'; }

void put(std::vector<uint8_t>& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size), at_(kHeaderBytes) {}

  bool get(const std::string& name, int bytes, uint64_t* v) {
    if (!error_.empty()) return false;
    if (size_ - at_ < static_cast<size_t>(bytes)) {
      fail("truncated: " + name + " needs " + std::to_string(bytes) + " bytes at offset " + std::to_string(at_) +
           ", " + std::to_string(size_ - at_) + " left");
      return false;
    }
    uint64_t value = 0;
    for (int i = 0; i < bytes; ++i) value |= static_cast<uint64_t>(data_[at_ + i]) << (8 * i);
    at_ += static_cast<size_t>(bytes);
    *v = value;
    return true;
  }

  // A length byte and that many bytes, each passing `ok`; at most `limit`.
  bool name(const std::string& what, size_t min, size_t limit, bool (*ok)(uint8_t), const char* chars,
            std::string* out) {
    uint64_t length;
    if (!get(what + " length", 1, &length)) return false;
    if (length < min || length > limit) {
      fail(what + " length = " + std::to_string(length) + " is outside [" + std::to_string(min) + ", " +
           std::to_string(limit) + "]");
      return false;
    }
    if (size_ - at_ < length) {
      fail("truncated: " + what + " needs " + std::to_string(length) + " bytes at offset " + std::to_string(at_));
      return false;
    }
    for (size_t i = 0; i < length; ++i) {
      if (!ok(data_[at_ + i])) {
        std::ostringstream s;
        s << what << " byte " << i << " = 0x" << std::hex << unsigned(data_[at_ + i]) << " is not one of " << chars;
        fail(s.str());
        return false;
      }
    }
    out->assign(reinterpret_cast<const char*>(data_ + at_), length);
    at_ += length;
    return true;
  }

  void fail(const std::string& message) {
    if (error_.empty()) error_ = message;
  }
  const std::string& error() const { return error_; }
  size_t offset() const { return at_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_;
  std::string error_;
};

std::string check_header(const uint8_t* data, size_t size) {
  if (size < kHeaderBytes) {
    return "truncated: " + std::to_string(size) + " bytes, a case has at least " + std::to_string(kHeaderBytes) +
           " (magic and version)";
  }
  if (std::memcmp(data, kMagic, sizeof(kMagic)) != 0) return "bad magic: a binary case starts with \"QCKC\"";
  const unsigned version = data[4] | (unsigned(data[5]) << 8);
  if (version != kCaseBinaryVersionAnyOp) {
    return "version = " + std::to_string(version) + " is not " + std::to_string(kCaseBinaryVersionAnyOp) +
           " (the version that names its op)";
  }
  return "";
}

}  // namespace

std::vector<uint8_t> encode_any_case(const AnyCase& c) {
  std::vector<uint8_t> out(kMagic, kMagic + sizeof(kMagic));
  put(out, kCaseBinaryVersionAnyOp, 2);
  const std::string name = c.op->name();
  put(out, name.size(), 1);
  out.insert(out.end(), name.begin(), name.end());
  put(out, c.op->schema_version(), 2);
  const std::vector<FieldMeta>& meta = c.op->vocabulary().fields;
  for (size_t i = 0; i < meta.size(); ++i) {
    const FieldValue& v = c.fields[i];
    switch (meta[i].kind) {
      case FieldKind::kInteger:
      case FieldKind::kU64: put(out, v.number, 8); break;
      case FieldKind::kEnumeration:
      case FieldKind::kBoolean: put(out, v.number, 1); break;
      case FieldKind::kBits32: put(out, v.number, 4); break;
      case FieldKind::kText: {
        // Encoding never fails: a longer text is cut here and refused by decoding.
        const size_t n = v.text.size() < 255 ? v.text.size() : 255;
        put(out, n, 1);
        out.insert(out.end(), v.text.begin(), v.text.begin() + static_cast<std::ptrdiff_t>(n));
        break;
      }
      case FieldKind::kEdits:
        put(out, v.edits.size(), 2);
        for (const AnyEdit& e : v.edits) {
          put(out, e.tensor, 1);
          for (int64_t x : {e.row, e.rows, e.head, e.element, e.elements}) put(out, static_cast<uint64_t>(x), 8);
          put(out, e.bits, 8);
        }
        break;
    }
  }
  return out;
}

std::string any_case_op_name(const uint8_t* data, size_t size, std::string* name) {
  const std::string header = check_header(data, size);
  if (!header.empty()) return header;
  Reader reader(data, size);
  reader.name("op name", 1, kMaxOpNameLength, is_op_char, "[a-z0-9_]", name);
  return reader.error();
}

std::string decode_any_case(const uint8_t* data, size_t size, const std::vector<const Op*>& ops, AnyCase* out) {
  const std::string header = check_header(data, size);
  if (!header.empty()) return header;
  Reader reader(data, size);
  std::string name;
  if (!reader.name("op name", 1, kMaxOpNameLength, is_op_char, "[a-z0-9_]", &name)) return reader.error();
  const Op* op = nullptr;
  std::string known;
  for (const Op* candidate : ops) {
    if (candidate->name() == name) op = candidate;
    known += (known.empty() ? "" : ", ") + std::string(candidate->name());
  }
  if (op == nullptr) return "op = \"" + name + "\" is not an op of this build (" + known + ")";
  uint64_t schema;
  if (!reader.get("schema", 2, &schema)) return reader.error();
  if (schema != op->schema_version()) {
    return "schema = " + std::to_string(schema) + " of op " + name + " is not supported (this build reads schema " +
           std::to_string(op->schema_version()) + ")";
  }
  AnyCase c;
  c.op = op;
  const std::vector<FieldMeta>& meta = op->vocabulary().fields;
  const size_t tensors = op->vocabulary().tensors.size();
  c.fields.resize(meta.size());
  for (size_t i = 0; i < meta.size() && reader.error().empty(); ++i) {
    const FieldMeta& f = meta[i];
    FieldValue& v = c.fields[i];
    switch (f.kind) {
      case FieldKind::kInteger:
      case FieldKind::kU64: reader.get(f.name, 8, &v.number); break;
      case FieldKind::kBits32: reader.get(f.name, 4, &v.number); break;
      case FieldKind::kBoolean:
        if (reader.get(f.name, 1, &v.number) && v.number > 1) {
          reader.fail(f.name + " = " + std::to_string(v.number) + " is not a boolean (0 or 1)");
        }
        break;
      case FieldKind::kEnumeration:
        if (reader.get(f.name, 1, &v.number) && v.number >= f.choices.size()) {
          reader.fail(f.name + " = " + std::to_string(v.number) + " is outside [0, " +
                      std::to_string(f.choices.size() - 1) + "]");
        }
        break;
      case FieldKind::kText: reader.name(f.name, 0, kMaxTextFieldLength, is_text_char, "[a-z0-9._-]", &v.text); break;
      case FieldKind::kEdits: {
        uint64_t count;
        if (!reader.get(f.name + " count", 2, &count)) break;
        if (count > kMaxAnyEdits) {
          reader.fail(f.name + " count = " + std::to_string(count) + " is outside [0, " +
                      std::to_string(kMaxAnyEdits) + "]");
          break;
        }
        for (uint64_t e = 0; e < count && reader.error().empty(); ++e) {
          const std::string at = f.name + "[" + std::to_string(e) + "]";
          uint64_t tensor, raw[6];
          if (!reader.get(at + ".tensor", 1, &tensor)) break;
          for (uint64_t& r : raw) reader.get(at, 8, &r);
          if (!reader.error().empty()) break;
          if (tensor >= tensors) {
            reader.fail(at + ".tensor = " + std::to_string(tensor) + " is outside the op's tensor table [0, " +
                        std::to_string(tensors - 1) + "]");
            break;
          }
          AnyEdit edit;
          edit.tensor = static_cast<uint8_t>(tensor);
          edit.row = static_cast<int64_t>(raw[0]), edit.rows = static_cast<int64_t>(raw[1]);
          edit.head = static_cast<int64_t>(raw[2]), edit.element = static_cast<int64_t>(raw[3]);
          edit.elements = static_cast<int64_t>(raw[4]), edit.bits = raw[5];
          v.edits.push_back(edit);
        }
        break;
      }
    }
  }
  if (!reader.error().empty()) return reader.error();
  if (reader.offset() != size) {
    return std::to_string(size - reader.offset()) + " trailing bytes after the last field (offset " +
           std::to_string(reader.offset()) + ")";
  }
  *out = std::move(c);
  return "";
}

std::string any_case_digest(const AnyCase& c) {
  const std::vector<uint8_t> bytes = encode_any_case(c);
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(XXH64(bytes.data(), bytes.size(), 0)));
  return text;
}

}  // namespace qcheck
