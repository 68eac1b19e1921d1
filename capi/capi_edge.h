// The edge of the C API (include/qcheck/qcheck.h): the handles behind its opaque
// types and the frame every entry point uses, so that no exception and no
// unterminated message ever reaches a C or Python caller. Internal to capi/.
#pragma once

#include <algorithm>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include <qcheck/qcheck.h>
#include "fuzz/case/case.h"
#include "fuzz/case/tensor_plan.h"
#include "fuzz/domain/domain.h"
#include "fuzz/minimize/minimize.h"
#include "fuzz/verdict/known.h"
#include "fuzz/verdict/verdict.h"
#include "ops/fused_k/door/door.h"

// A case of one op of the registry: fused_q's in `c`, or fused_k's when
// `fused_k` is set (then `c` is unused). The entry points that know only
// fused_q's cases so far refuse a fused_k case by name (refuse_fused_k).
struct qcheck_case {
  explicit qcheck_case(qcheck::Case fused_q) : c(std::move(fused_q)) {}
  explicit qcheck_case(qcheck::fused_k::FusedKCase k) : fused_k(std::move(k)) {}
  qcheck::Case c;
  std::optional<qcheck::fused_k::FusedKCase> fused_k;
};

struct qcheck_verdict {
  qcheck::Verdict verdict;
  qcheck::Case c;
  std::optional<qcheck::fused_k::DoorVerdict> fused_k;  // set: the verdict on a fused_k case
};

struct qcheck_domain {
  qcheck::Domain domain;
};

struct qcheck_known {
  std::vector<qcheck::KnownBug> bugs;
};

struct qcheck_minimized {
  qcheck::MinimizeResult result;
};

namespace qcheck::capi {

using qcheck::Case;

inline qcheck_status fail(qcheck_status status, const std::string& why, char* message, size_t size) {
  if (message != nullptr && size > 0) {
    const size_t n = std::min(why.size(), size - 1);
    std::memcpy(message, why.data(), n);
    message[n] = '\0';
  }
  return status;
}

// Runs `body`, which returns a status and may set `why`; an exception
// becomes a runtime error with its what().
template <typename Body>
inline qcheck_status guarded(char* message, size_t size, Body&& body) {
  std::string why;
  qcheck_status status;
  try {
    status = body(why);
  } catch (const std::exception& e) {
    return fail(QCHECK_RUNTIME_ERROR, std::string("internal error: ") + e.what(), message, size);
  } catch (...) {
    return fail(QCHECK_RUNTIME_ERROR, "internal error", message, size);
  }
  if (status != QCHECK_OK) return fail(status, why, message, size);
  if (message != nullptr && size > 0) message[0] = '\0';
  return QCHECK_OK;
}

// Copies `bytes` into out[capacity]; *needed gets their count.
inline qcheck_status copy_out(const void* bytes, size_t count, void* out, size_t capacity, size_t* needed) {
  if (needed != nullptr) *needed = count;
  if (out == nullptr || capacity < count) return QCHECK_INVALID_INPUT;
  std::memcpy(out, bytes, count);
  return QCHECK_OK;
}

inline qcheck_status copy_text(const std::string& text, char* out, size_t capacity, size_t* needed) {
  return copy_out(text.c_str(), text.size() + 1, out, capacity, needed);
}

// A name into a fixed char[32] of a plan entry, cut and NUL-terminated.
inline void copy_name(char (&to)[32], const std::string& name) {
  std::memset(to, 0, sizeof to);
  std::memcpy(to, name.data(), std::min(name.size(), sizeof to - 1));
}

// The frame of the plan calls once the case is known valid: *count = n (all
// a caller asking with capacity 0 gets), then room for n entries in
// out[capacity], each entry's struct_size checked before fill(i, entry).
template <typename Info, typename Fill>
qcheck_status fill_entries(Info* out, size_t capacity, size_t* count, size_t n, std::string& why, Fill fill) {
  *count = n;
  if (capacity == 0) return QCHECK_OK;
  if (out == nullptr || capacity < n) {
    why = "out holds " + std::to_string(capacity) + " entries, the plan has " + std::to_string(n);
    return QCHECK_INVALID_INPUT;
  }
  for (size_t i = 0; i < n; ++i) {
    if (out[i].struct_size < sizeof(Info)) {
      why = "out[" + std::to_string(i) + "].struct_size = " + std::to_string(out[i].struct_size) +
            ", this library needs " + std::to_string(sizeof(Info));
      return QCHECK_INVALID_INPUT;
    }
    fill(i, out[i]);
  }
  return QCHECK_OK;
}

// True, with the reason in `why`, when `c` is a fused_k case and `function`
// takes only fused_q's so far.
inline bool refuse_fused_k(const qcheck_case* c, const char* function, std::string& why) {
  if (c == nullptr || !c->fused_k) return false;
  why = std::string(function) + " does not take fused_k cases yet (only fused_q's)";
  return true;
}

// Checks what every function that takes a case and buffers needs.
inline qcheck_status valid_case_and_buffers(const qcheck_case* c, const void* buffers, size_t count, std::string& why) {
  if (c == nullptr) {
    why = "case is NULL";
    return QCHECK_INVALID_INPUT;
  }
  why = c->fused_k ? qcheck::fused_k::validate_fused_k_case(*c->fused_k) : qcheck::validate_case(c->c);
  if (!why.empty()) return QCHECK_INVALID_INPUT;
  if (buffers == nullptr) {
    why = "buffers is NULL";
    return QCHECK_INVALID_INPUT;
  }
  const size_t planned = c->fused_k ? 1 : qcheck::plan_tensors(c->c).buffers.size();  // fused_k: its arena
  if (count != planned) {
    why = "buffer_count = " + std::to_string(count) + ", the case's plan has " + std::to_string(planned) + " buffers";
    return QCHECK_INVALID_INPUT;
  }
  return QCHECK_OK;
}

inline std::string profile_name(const Case& c, const char* profile) {
  return profile == nullptr || profile[0] == '\0' ? c.profile : std::string(profile);
}


}  // namespace qcheck::capi
