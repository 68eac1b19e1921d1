// Fuzz target `case_decode`: arbitrary bytes through the binary decoder and
// the JSON parser (fuzz/case/case_binary.h, case_json.h, case_file.h). They must
// never crash, leak or hang (the sanitizers and libFuzzer's timeouts watch
// that); and each property below aborts when it fails:
//   - a case the binary decoder accepts re-encodes to exactly the same bytes
//     (versions 1 and 2 by fused_q's encoder, version 3 by the generic one);
//   - a version-3 case the generic decoder (core/op/any_case.h) accepts
//     re-encodes to the same bytes, and where fused_q's decoder accepts it
//     too, both read the same case (the generic one knows no roles: an edit
//     of an output is its to accept and fused_q's to refuse);
//   - a decoded case survives JSON: case_from_json(case_to_json(c)) == c;
//   - a case the JSON parser accepts survives a second JSON round trip;
//   - the generic JSON form (core/op/any_case_json.h) takes and refuses the
//     texts fused_q's takes and refuses, with the same line, and reads and
//     writes the same cases;
//   - the file-form detection (parse_case_bytes) agrees with both decoders;
//   - validation and describe() run on every decoded case without crashing,
//     and validate_case answers the same twice (no hidden state);
//   - the .npy reader (fuzz/exchange/npy.h) never crashes, and an array it accepts
//     re-encodes to bytes it decodes to the same array.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/op/any_case.h"
#include "core/op/any_case_json.h"
#include "fuzz/case/case_binary.h"
#include "fuzz/case/case_file.h"
#include "fuzz/case/case_json.h"
#include "fuzz/exchange/npy.h"
#include "fuzz/targets/fuzz_entry.h"
#include "fuzz/targets/status_file.h"
#include "ops/fused_q/op.h"
#include "ops/registry/registry.h"

namespace {

using qcheck::Case;

[[noreturn]] void fail(const char* property, const std::string& detail) {
  std::fprintf(stderr, "\n==== qcheck case_decode finding ====\n%s\n%s\n==== end of finding ====\n", property,
               detail.c_str());
  std::fflush(stderr);
  std::abort();
}

void check_case(const Case& c) {
  const std::string first = qcheck::validate_case(c);
  if (qcheck::validate_case(c) != first) fail("validate_case answered differently twice", qcheck::describe(c));
  (void)qcheck::describe(c);
  Case back;
  const std::string json = qcheck::case_to_json(c);
  const std::string error = qcheck::case_from_json(json, &back);
  if (!error.empty()) fail("case_to_json wrote JSON that case_from_json refuses", error + "\n" + json);
  if (back != c) fail("JSON round trip changed the case", json);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) { return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  qcheck::fuzzing::count_execution();
  const std::vector<uint8_t> bytes(data, data + size);
  Case binary;
  const bool binary_ok = qcheck::decode_case(data, size, &binary).empty();
  const bool version_3 = size >= 6 && data[4] == qcheck::kCaseBinaryVersionAnyOp && data[5] == 0;
  if (binary_ok) {
    const std::vector<uint8_t> again =
        version_3 ? qcheck::encode_any_case(qcheck::to_any_case(binary)) : qcheck::encode_case(binary);
    if (again != bytes) fail("decode then encode changed the bytes", qcheck::describe(binary));
    check_case(binary);
  }
  qcheck::AnyCase any;
  if (qcheck::decode_any_case(data, size, qcheck::all_ops(), &any).empty()) {
    if (qcheck::encode_any_case(any) != bytes) fail("generic decode then encode changed the bytes", "");
    Case typed;
    if (binary_ok && (!qcheck::from_any_case(any, &typed).empty() || typed != binary)) {
      fail("the generic decoder and fused_q's read different cases", qcheck::describe(binary));
    }
  } else if (binary_ok && version_3) {
    fail("fused_q's decoder accepts a version-3 case the generic one refuses", qcheck::describe(binary));
  }
  Case json;
  const std::string text(bytes.begin(), bytes.end());
  const std::string json_error = qcheck::case_from_json(text, &json);
  const bool json_ok = json_error.empty();
  if (json_ok) check_case(json);
  // The generic JSON reader takes and refuses what fused_q's does, with the
  // same line, and reads the same case.
  qcheck::AnyCase any_json;
  // (as fused_q's own reader: fused_q the one op it names)
  const std::string any_error =
      qcheck::any_case_from_json(text, {&qcheck::fused_q_op()}, qcheck::fused_q_op(), &any_json);
  if (any_error != json_error) {
    fail("the generic JSON reader and fused_q's disagree", "fused_q: " + json_error + "\ngeneric: " + any_error);
  }
  Case typed_json;
  if (json_ok && (!qcheck::from_any_case(any_json, &typed_json).empty() || typed_json != json)) {
    fail("the generic JSON reader and fused_q's read different cases", qcheck::describe(json));
  }
  if (json_ok && qcheck::any_case_to_json(any_json, false) != qcheck::case_to_json(json)) {
    fail("the generic JSON writer and fused_q's write different texts", qcheck::describe(json));
  }

  qcheck::NpyArray array;
  if (qcheck::decode_npy(data, size, &array).empty()) {
    const std::vector<uint8_t> again = qcheck::encode_npy(array);
    qcheck::NpyArray back;
    const std::string error = qcheck::decode_npy(again.data(), again.size(), &back);
    if (!error.empty() || back.descr != array.descr || back.shape != array.shape || back.data != array.data) {
      fail("an accepted .npy array does not survive encode and decode", error);
    }
  }

  // Either form through the file-level entry: it must pick the same decoder.
  Case detected;
  qcheck::CaseForm form;
  if (qcheck::parse_case_bytes(bytes, &detected, &form).empty()) {
    const Case& expected = form == qcheck::CaseForm::kBinary ? binary : json;
    const bool expected_ok = form == qcheck::CaseForm::kBinary ? binary_ok : json_ok;
    if (!expected_ok || detected != expected) fail("parse_case_bytes disagrees with the decoder of its form", "");
  }
  return 0;
}
