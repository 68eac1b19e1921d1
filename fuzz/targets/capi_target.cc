// Fuzz target `capi`: the C API (include/qcheck/qcheck.h) as a caller uses it, on
// arbitrary bytes. The bytes are a case file (binary or JSON); when they
// decode to a valid case of at most 4 MiB, its buffers are filled, a "run"
// is made from the oracle's outputs with bytes changed at places drawn from
// the input's hash (outputs, inputs, sentinels: what a broken kernel
// leaves), and the verdict, the reports, both encodings, the mutator and
// cross-over run over it, with text buffers first too small, then right.
//
// What aborts: an entry point that refuses what it must accept (a valid
// case, the plan's own buffers), a round trip that changes the case, a
// mutated case that is invalid, a correct "run" that does not pass, a run
// with a changed output byte that passes; and, under ASan and UBSan, any
// memory or undefined-behaviour error in the library.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <qcheck/qcheck.h>
#include "core/random/prng.h"
#include "fuzz/targets/fuzz_entry.h"
#include "fuzz/targets/status_file.h"

namespace {

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "\n==== qcheck capi finding ====\n%s\n==== end of finding ====\n", what.c_str());
  qcheck::fuzzing::write_status_now();
  std::abort();
}

void expect_ok(qcheck_status s, const char* call, const char* message) {
  if (s != QCHECK_OK) finding(std::string(call) + " returned " + std::to_string(s) + ": " + message);
}

// A text output asked for with no room, then with exactly the room needed.
std::string text_of(qcheck_status (*f)(const qcheck_verdict*, char*, size_t, size_t*), const qcheck_verdict* v) {
  size_t needed = 0;
  if (f(v, nullptr, 0, &needed) != QCHECK_INVALID_INPUT || needed == 0) finding("a text call accepted no room");
  std::string out(needed, '\0');
  if (f(v, out.data(), out.size(), &needed) != QCHECK_OK || out.back() != '\0') finding("a text call with room failed");
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) { return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  qcheck::fuzzing::count_execution();
  char message[256];
  qcheck_case* c = nullptr;
  if (qcheck_case_decode(data, size, &c, message, sizeof message) != QCHECK_OK) {
    if (std::memchr(message, '\0', sizeof message) == nullptr) finding("decode message not terminated");
    return 0;
  }
  const uint64_t hash = XXH64(data, size, 0);
  size_t count = 0;
  if (qcheck_case_validate(c, message, sizeof message) != QCHECK_OK) {
    if (qcheck_plan_buffers(c, nullptr, 0, &count, message, sizeof message) != QCHECK_INVALID_INPUT) {
      finding("an invalid case got a plan");
    }
    qcheck_case_free(c);
    return 0;
  }
  // Both encodings round trip.
  for (int form : {QCHECK_FORM_BINARY, QCHECK_FORM_JSON}) {
    size_t needed = 0;
    qcheck_case_encode(c, form, nullptr, 0, &needed, message, sizeof message);
    std::vector<uint8_t> bytes(needed);
    expect_ok(qcheck_case_encode(c, form, bytes.data(), bytes.size(), &needed, message, sizeof message), "encode",
              message);
    if (form == QCHECK_FORM_JSON) bytes.pop_back();  // the NUL
    qcheck_case* again = nullptr;
    expect_ok(qcheck_case_decode(bytes.data(), bytes.size(), &again, message, sizeof message), "decode", message);
    size_t n1 = 0, n2 = 0;
    char d1[32], d2[32];
    qcheck_case_digest(c, d1, sizeof d1, &n1);
    qcheck_case_digest(again, d2, sizeof d2, &n2);
    if (std::strcmp(d1, d2) != 0) finding("a round trip changed the case");
    qcheck_case_free(again);
  }
  expect_ok(qcheck_plan_buffers(c, nullptr, 0, &count, message, sizeof message), "plan_buffers", message);
  std::vector<qcheck_buffer_info> infos(count);
  for (qcheck_buffer_info& b : infos) b.struct_size = sizeof b;
  expect_ok(qcheck_plan_buffers(c, infos.data(), infos.size(), &count, message, sizeof message), "plan_buffers",
            message);
  uint64_t total = 0;
  for (const qcheck_buffer_info& b : infos) total += b.bytes;
  if (total <= (uint64_t(4) << 20)) {
    std::vector<std::vector<uint8_t>> a(count), b(count);
    std::vector<uint8_t*> pa, pb;
    for (size_t i = 0; i < count; ++i) {
      a[i].resize(infos[i].bytes);
      b[i].resize(infos[i].bytes);
      pa.push_back(a[i].data());
      pb.push_back(b[i].data());
    }
    expect_ok(qcheck_expected_buffers(c, nullptr, pa.data(), count, message, sizeof message), "expected", message);
    expect_ok(qcheck_fill_buffers(c, 1, pb.data(), count, message, sizeof message), "fill", message);
    // Run B: its outputs are the oracle's too; its untouched outputs (no
    // indexer) keep poison B; inputs and guards are the same in both runs.
    size_t tensor_count = 0;
    int32_t aliased = 0;
    expect_ok(qcheck_plan_tensors(c, nullptr, 0, &tensor_count, &aliased, message, sizeof message), "plan_tensors",
              message);
    std::vector<qcheck_tensor_info> tensors(tensor_count);
    for (qcheck_tensor_info& t : tensors) t.struct_size = sizeof t;
    expect_ok(qcheck_plan_tensors(c, tensors.data(), tensors.size(), &tensor_count, &aliased, message, sizeof message),
              "plan_tensors", message);
    // A fused_k case's one buffer is its whole arena, whose gaps hold each
    // run's poison: the oracle's bytes for run B are not A's, so run A alone.
    const bool fused_k = std::strcmp(qcheck_case_op(c), "fused_k") == 0;
    for (size_t i = 0; i < tensor_count; ++i) {
      if (tensors[i].role == QCHECK_ROLE_OUTPUT) b[tensors[i].buffer] = a[tensors[i].buffer];
    }
    const std::vector<const uint8_t*> ca(pa.begin(), pa.end()), cb(pb.begin(), pb.end());
    qcheck_verdict_options options{sizeof(qcheck_verdict_options), nullptr, "capi-target", 5, nullptr};
    qcheck_verdict* v = nullptr;
    expect_ok(qcheck_judge(c, &options, ca.data(), fused_k ? nullptr : cb.data(), count, &v, message, sizeof message),
              "judge", message);
    if (qcheck_verdict_exit_code(v) != 0) finding("the oracle's own outputs fail:\n" + text_of(qcheck_verdict_text, v));
    qcheck_verdict_free(v);
    // A broken run: bytes changed where the hash says. Every byte of every
    // buffer is checked, so no change can pass.
    qcheck::Xoshiro256 rng(hash);
    const int changes = 1 + static_cast<int>(rng.below(4));
    for (int k = 0; k < changes; ++k) {
      const size_t i = rng.below(count);
      a[i][rng.below(a[i].size())] ^= static_cast<uint8_t>(1 + rng.below(255));
    }
    for (const uint8_t* const* run_b : {fused_k ? nullptr : cb.data(), static_cast<const uint8_t* const*>(nullptr)}) {
      expect_ok(qcheck_judge(c, &options, ca.data(), run_b, count, &v, message, sizeof message), "judge", message);
      const std::string text = text_of(qcheck_verdict_text, v), json = text_of(qcheck_verdict_json, v);
      if (qcheck_verdict_exit_code(v) == 0) finding("a changed byte passed:\n" + text);
      if (text_of(qcheck_verdict_signature, v).size() <= 1 || json.find("\"mismatch\"") == std::string::npos) {
        finding("a failing verdict without a signature:\n" + text);
      }
      qcheck_verdict_free(v);
    }
  }
  const char* sizes[] = {"tiny", "usual", "default"};
  qcheck_case *m = nullptr, *x = nullptr;
  expect_ok(qcheck_case_mutate(c, hash, sizes[hash % 3], &m, message, sizeof message), "mutate", message);
  expect_ok(qcheck_case_validate(m, message, sizeof message), "validate of a mutated case", message);
  if (std::strcmp(qcheck_case_op(c), "fused_k") == 0) {  // (no cross-over for fused_k yet: refused by name)
    if (qcheck_case_cross_over(c, m, hash >> 7, "tiny", &x, message, sizeof message) != QCHECK_INVALID_INPUT ||
        std::strstr(message, "qcheck_case_cross_over") == nullptr) {
      finding(std::string("cross_over of a fused_k case not refused by name: ") + message);
    }
    qcheck_case_free(m);
    qcheck_case_free(c);
    return 0;
  }
  expect_ok(qcheck_case_cross_over(c, m, hash >> 7, sizes[(hash >> 3) % 3], &x, message, sizeof message), "cross_over",
            message);
  expect_ok(qcheck_case_validate(x, message, sizeof message), "validate of a crossed case", message);
  qcheck_case_free(m);
  qcheck_case_free(x);
  qcheck_case_free(c);
  return 0;
}
