// The C API (capi/qcheck.h) over the harness library: translation only. Each
// entry point catches every exception at the edge and turns it into a
// status and a message, so nothing escapes into a C or Python caller.
#include "capi/qcheck.h"

#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "fuzz/case_binary.h"
#include "fuzz/case_file.h"
#include "fuzz/case_json.h"
#include "fuzz/compare.h"
#include "fuzz/minimize.h"
#include "fuzz/minimize_report.h"
#include "fuzz/prng.h"
#include "fuzz/targets/case_mutator.h"
#include "fuzz/targets/semantic_bins.h"
#include "fuzz/tensors.h"
#include "fuzz/verdict.h"
#include "reference/fused_q_oracle.h"
#include "reference/row_ops.h"

struct qcheck_case {
  qcheck::Case c;
};

struct qcheck_verdict {
  qcheck::Verdict verdict;
  qcheck::Case c;
};

struct qcheck_minimized {
  qcheck::MinimizeResult result;
};

namespace {

using qcheck::Case;

qcheck_status fail(qcheck_status status, const std::string& why, char* message, size_t size) {
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
qcheck_status guarded(char* message, size_t size, Body&& body) {
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
qcheck_status copy_out(const void* bytes, size_t count, void* out, size_t capacity, size_t* needed) {
  if (needed != nullptr) *needed = count;
  if (out == nullptr || capacity < count) return QCHECK_INVALID_INPUT;
  std::memcpy(out, bytes, count);
  return QCHECK_OK;
}

qcheck_status copy_text(const std::string& text, char* out, size_t capacity, size_t* needed) {
  return copy_out(text.c_str(), text.size() + 1, out, capacity, needed);
}

const qcheck::fuzzing::SizeBudget* budget_of(const char* size, std::string& why) {
  const qcheck::fuzzing::SizeBudget* b = qcheck::fuzzing::case_size_budget(size == nullptr ? "default" : size);
  if (b == nullptr) why = std::string("size = \"") + size + "\" must be tiny, usual or default";
  return b;
}

// The seed of one mutator call, as the fuzz target keys its own.
qcheck::Xoshiro256 generator(uint64_t purpose, uint64_t seed) { return qcheck::Xoshiro256(qcheck::mix_keys({purpose, seed})); }

void copy_name(char (&to)[32], const std::string& name) {
  std::memset(to, 0, sizeof to);
  std::memcpy(to, name.data(), std::min(name.size(), sizeof to - 1));
}

int32_t dtype_of(qcheck::ElementType t) {
  switch (t) {
    case qcheck::ElementType::kInt64: return QCHECK_DTYPE_INT64;
    case qcheck::ElementType::kF32: return QCHECK_DTYPE_F32;
    case qcheck::ElementType::kBf16: return QCHECK_DTYPE_BF16;
    case qcheck::ElementType::kE4m3: return QCHECK_DTYPE_E4M3;
  }
  return -1;
}

// A tensor set of the case whose buffers hold the caller's bytes.
qcheck_status set_from(const Case& c, const uint8_t* const* buffers, size_t count, qcheck::TensorSet* set,
                       std::string& why) {
  if (buffers == nullptr) {
    why = "buffers is NULL";
    return QCHECK_INVALID_INPUT;
  }
  *set = qcheck::TensorSet{};
  set->plan = qcheck::plan_tensors(c);
  if (count != set->plan.buffers.size()) {
    why = "buffer_count = " + std::to_string(count) + ", the case's plan has " +
          std::to_string(set->plan.buffers.size()) + " buffers";
    return QCHECK_INVALID_INPUT;
  }
  for (size_t i = 0; i < count; ++i) {
    if (buffers[i] == nullptr) {
      why = "buffers[" + std::to_string(i) + "] is NULL";
      return QCHECK_INVALID_INPUT;
    }
    qcheck::GuardedBuffer b(static_cast<size_t>(set->plan.buffers[i].payload_bytes));
    std::memcpy(b.data(), buffers[i], b.size());
    set->buffers.push_back(std::move(b));
  }
  return QCHECK_OK;
}

void write_set(const qcheck::TensorSet& set, uint8_t* const* buffers) {
  for (size_t i = 0; i < set.buffers.size(); ++i) std::memcpy(buffers[i], set.buffers[i].data(), set.buffers[i].size());
}

// Checks what every function that takes a case and buffers needs.
qcheck_status valid_case_and_buffers(const qcheck_case* c, const void* buffers, size_t count, std::string& why) {
  if (c == nullptr) {
    why = "case is NULL";
    return QCHECK_INVALID_INPUT;
  }
  why = qcheck::validate_case(c->c);
  if (!why.empty()) return QCHECK_INVALID_INPUT;
  if (buffers == nullptr) {
    why = "buffers is NULL";
    return QCHECK_INVALID_INPUT;
  }
  const size_t planned = qcheck::plan_tensors(c->c).buffers.size();
  if (count != planned) {
    why = "buffer_count = " + std::to_string(count) + ", the case's plan has " + std::to_string(planned) + " buffers";
    return QCHECK_INVALID_INPUT;
  }
  return QCHECK_OK;
}

// The frame of the two plan calls: a valid case, *count set (all a caller
// asking with capacity 0 gets), then each entry checked for its struct_size
// and filled by fill(plan, i, entry).
template <typename Info, typename Size, typename Fill>
qcheck_status plan_entries(const qcheck_case* c, Info* out, size_t capacity, size_t* count, std::string& why,
                           Size entries, Fill fill) {
  if (c == nullptr || count == nullptr) {
    why = "case or count is NULL";
    return QCHECK_INVALID_INPUT;
  }
  why = qcheck::validate_case(c->c);
  if (!why.empty()) return QCHECK_INVALID_INPUT;
  const qcheck::TensorPlan plan = qcheck::plan_tensors(c->c);
  const size_t n = entries(plan);
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
    fill(plan, i, out[i]);
  }
  return QCHECK_OK;
}

std::string profile_name(const Case& c, const char* profile) {
  return profile == nullptr || profile[0] == '\0' ? c.profile : std::string(profile);
}

}  // namespace

extern "C" {

uint32_t qcheck_api_version(void) { return QCHECK_API_VERSION; }

qcheck_status qcheck_case_decode(const uint8_t* bytes, size_t size, qcheck_case** out, char* message,
                                 size_t message_size) {
  return guarded(message, message_size, [&](std::string& why) {
    if (out == nullptr || (bytes == nullptr && size > 0)) {
      why = "bytes or out is NULL";
      return QCHECK_INVALID_INPUT;
    }
    Case c;
    why = qcheck::parse_case_bytes(std::vector<uint8_t>(bytes, bytes + size), &c);
    if (!why.empty()) return QCHECK_INVALID_INPUT;
    *out = new qcheck_case{c};
    return QCHECK_OK;
  });
}

qcheck_status qcheck_case_from_seed(uint64_t seed, const char* size, qcheck_case** out, char* message,
                                    size_t message_size) {
  return guarded(message, message_size, [&](std::string& why) {
    const qcheck::fuzzing::SizeBudget* budget = budget_of(size, why);
    if (budget == nullptr) return QCHECK_INVALID_INPUT;
    if (out == nullptr) {
      why = "out is NULL";
      return QCHECK_INVALID_INPUT;
    }
    qcheck::Xoshiro256 rng = generator(0x73656564ull, seed);
    *out = new qcheck_case{qcheck::fuzzing::seed_case(rng, *budget)};
    return QCHECK_OK;
  });
}

qcheck_status qcheck_case_mutate(const qcheck_case* c, uint64_t seed, const char* size, qcheck_case** out,
                                 char* message, size_t message_size) {
  return guarded(message, message_size, [&](std::string& why) {
    const qcheck::fuzzing::SizeBudget* budget = budget_of(size, why);
    if (budget == nullptr) return QCHECK_INVALID_INPUT;
    if (c == nullptr || out == nullptr) {
      why = "case or out is NULL";
      return QCHECK_INVALID_INPUT;
    }
    qcheck::Xoshiro256 rng = generator(0x6D757461746F72ull, seed);
    Case mutated = c->c;
    qcheck::fuzzing::mutate_case(mutated, rng, *budget);
    *out = new qcheck_case{mutated};
    return QCHECK_OK;
  });
}

qcheck_status qcheck_case_cross_over(const qcheck_case* a, const qcheck_case* b, uint64_t seed, const char* size,
                                     qcheck_case** out, char* message, size_t message_size) {
  return guarded(message, message_size, [&](std::string& why) {
    const qcheck::fuzzing::SizeBudget* budget = budget_of(size, why);
    if (budget == nullptr) return QCHECK_INVALID_INPUT;
    if (a == nullptr || b == nullptr || out == nullptr) {
      why = "a, b or out is NULL";
      return QCHECK_INVALID_INPUT;
    }
    qcheck::Xoshiro256 rng = generator(0x63726F7373ull, seed);
    *out = new qcheck_case{qcheck::fuzzing::cross_over(a->c, b->c, rng, *budget)};
    return QCHECK_OK;
  });
}

qcheck_status qcheck_case_validate(const qcheck_case* c, char* message, size_t message_size) {
  return guarded(message, message_size, [&](std::string& why) {
    if (c == nullptr) {
      why = "case is NULL";
      return QCHECK_INVALID_INPUT;
    }
    why = qcheck::validate_case(c->c);
    return why.empty() ? QCHECK_OK : QCHECK_INVALID_INPUT;
  });
}

void qcheck_case_free(qcheck_case* c) { delete c; }

qcheck_status qcheck_case_encode(const qcheck_case* c, int form, uint8_t* out, size_t capacity, size_t* needed,
                                 char* message, size_t message_size) {
  return guarded(message, message_size, [&](std::string& why) {
    if (c == nullptr || (form != QCHECK_FORM_BINARY && form != QCHECK_FORM_JSON)) {
      why = "case is NULL or form is not QCHECK_FORM_BINARY or QCHECK_FORM_JSON";
      return QCHECK_INVALID_INPUT;
    }
    if (form == QCHECK_FORM_BINARY) {
      const std::vector<uint8_t> bytes = qcheck::encode_case(c->c);
      const qcheck_status s = copy_out(bytes.data(), bytes.size(), out, capacity, needed);
      if (s != QCHECK_OK) why = "out holds " + std::to_string(capacity) + " bytes, the case needs " + std::to_string(bytes.size());
      return s;
    }
    const std::string json = qcheck::case_to_json(c->c);
    const qcheck_status s = copy_out(json.c_str(), json.size() + 1, out, capacity, needed);
    if (s != QCHECK_OK) why = "out holds " + std::to_string(capacity) + " bytes, the case needs " + std::to_string(json.size() + 1);
    return s;
  });
}

qcheck_status qcheck_case_describe(const qcheck_case* c, char* out, size_t capacity, size_t* needed) {
  if (c == nullptr) return QCHECK_INVALID_INPUT;
  return copy_text(qcheck::describe(c->c), out, capacity, needed);
}

qcheck_status qcheck_case_digest(const qcheck_case* c, char* out, size_t capacity, size_t* needed) {
  if (c == nullptr) return QCHECK_INVALID_INPUT;
  return copy_text(qcheck::case_digest(c->c), out, capacity, needed);
}

qcheck_status qcheck_plan_buffers(const qcheck_case* c, qcheck_buffer_info* out, size_t capacity, size_t* count,
                                  char* message, size_t message_size) {
  return guarded(message, message_size, [&](std::string& why) {
    return plan_entries(c, out, capacity, count, why, [](const qcheck::TensorPlan& p) { return p.buffers.size(); },
                        [](const qcheck::TensorPlan& plan, size_t i, qcheck_buffer_info& b) {
                          copy_name(b.name, plan.buffers[i].name);
                          b.bytes = static_cast<uint64_t>(plan.buffers[i].payload_bytes) +
                                    2 * qcheck::GuardedBuffer::kSentinelBytes;
                          b.is_output = plan.buffers[i].is_output ? 1 : 0;
                        });
  });
}

qcheck_status qcheck_plan_tensors(const qcheck_case* c, qcheck_tensor_info* out, size_t capacity, size_t* count,
                                  int32_t* aliased, char* message, size_t message_size) {
  return guarded(message, message_size, [&](std::string& why) {
    if (c != nullptr && aliased != nullptr) *aliased = c->c.alias == qcheck::AliasMode::kExactFront ? 1 : 0;
    return plan_entries(c, out, capacity, count, why, [](const qcheck::TensorPlan& p) { return p.tensors.size(); },
                        [](const qcheck::TensorPlan& plan, size_t i, qcheck_tensor_info& t) {
                          const qcheck::TensorGeometry& g = plan.tensors[i];
                          copy_name(t.name, qcheck::name_of(g.id));
                          t.role = g.role == qcheck::TensorRole::kInput    ? QCHECK_ROLE_INPUT
                                   : g.role == qcheck::TensorRole::kOutput ? QCHECK_ROLE_OUTPUT
                                                                           : QCHECK_ROLE_UNTOUCHED_OUTPUT;
                          t.dtype = dtype_of(g.type);
                          // Positions are [T], caches [P, R], the rest [T, heads, width].
                          const bool cache = g.id == qcheck::TensorId::kMqaCache || g.id == qcheck::TensorId::kIndexerCache;
                          const bool positions = g.id == qcheck::TensorId::kPositions;
                          t.ndim = positions ? 1 : cache ? 2 : 3;
                          const int64_t shape[3] = {g.rows, g.cols, g.width};
                          const int64_t strides[3] = {g.row_stride, g.col_stride, 1};
                          const int axes[3] = {0, cache ? 2 : 1, 2};
                          for (int d = 0; d < 3; ++d) {
                            t.shape[d] = d < t.ndim ? shape[axes[d]] : 0;
                            t.strides[d] = d < t.ndim ? strides[axes[d]] : 0;
                          }
                          t.buffer = g.buffer;
                          t.offset_bytes = qcheck::GuardedBuffer::kSentinelBytes +
                                           static_cast<uint64_t>(g.offset) *
                                               static_cast<uint64_t>(qcheck::element_bytes(g.type));
                        });
  });
}

qcheck_status qcheck_fill_buffers(const qcheck_case* c, int poison, uint8_t* const* buffers, size_t buffer_count,
                                  char* message, size_t message_size) {
  return guarded(message, message_size, [&](std::string& why) {
    const qcheck_status s = valid_case_and_buffers(c, buffers, buffer_count, why);
    if (s != QCHECK_OK) return s;
    if (poison != 0 && poison != 1) {
      why = "poison = " + std::to_string(poison) + " must be 0 (A) or 1 (B)";
      return QCHECK_INVALID_INPUT;
    }
    write_set(qcheck::build_tensor_set(c->c, poison == 0 ? qcheck::Poison::kA : qcheck::Poison::kB), buffers);
    return QCHECK_OK;
  });
}

qcheck_status qcheck_expected_buffers(const qcheck_case* c, const char* profile, uint8_t* const* buffers,
                                      size_t buffer_count, char* message, size_t message_size) {
  return guarded(message, message_size, [&](std::string& why) {
    const qcheck_status s = valid_case_and_buffers(c, buffers, buffer_count, why);
    if (s != QCHECK_OK) return s;
    qcheck::Profile p;
    const std::string name = profile_name(c->c, profile);
    if (!qcheck::find_profile(name, &p)) {
      why = "profile \"" + name + "\" is not a known profile";
      return QCHECK_INVALID_INPUT;
    }
    const qcheck::TensorSet set = qcheck::expected_tensors(c->c, p, qcheck::simd_row_ops(), qcheck::Poison::kA, &why);
    if (!why.empty()) return QCHECK_INVALID_INPUT;
    write_set(set, buffers);
    return QCHECK_OK;
  });
}

qcheck_status qcheck_judge(const qcheck_case* c, const qcheck_verdict_options* options, const uint8_t* const* run_a,
                           const uint8_t* const* run_b, size_t buffer_count, qcheck_verdict** out, char* message,
                           size_t message_size) {
  return guarded(message, message_size, [&](std::string& why) {
    if (out == nullptr) {
      why = "out is NULL";
      return QCHECK_INVALID_INPUT;
    }
    qcheck_status s = valid_case_and_buffers(c, run_a, buffer_count, why);
    if (s == QCHECK_OK && run_b != nullptr) s = valid_case_and_buffers(c, run_b, buffer_count, why);
    if (s != QCHECK_OK) return s;
    if (options != nullptr && options->struct_size < sizeof(qcheck_verdict_options)) {
      why = "options->struct_size = " + std::to_string(options->struct_size) + ", this library needs " +
            std::to_string(sizeof(qcheck_verdict_options));
      return QCHECK_INVALID_INPUT;
    }
    auto v = std::make_unique<qcheck_verdict>();
    v->c = c->c;
    v->verdict.backend = options != nullptr && options->kernel != nullptr ? options->kernel : "outside kernel";
    v->verdict.profile = profile_name(c->c, options != nullptr ? options->profile : nullptr);
    const size_t listed = options != nullptr && options->max_listed > 0 ? options->max_listed : 20;
    v->verdict.report.max_listed = listed;
    qcheck::Profile p;
    if (!qcheck::find_profile(v->verdict.profile, &p)) {
      why = "profile \"" + v->verdict.profile + "\" is not a known profile";
      return QCHECK_INVALID_INPUT;
    }
    qcheck::TensorSet got_a, got_b;
    if ((s = set_from(c->c, run_a, buffer_count, &got_a, why)) != QCHECK_OK) return s;
    got_a.poison = qcheck::Poison::kA;
    if (run_b != nullptr) {
      if ((s = set_from(c->c, run_b, buffer_count, &got_b, why)) != QCHECK_OK) return s;
      got_b.poison = qcheck::Poison::kB;
    }
    const qcheck::TensorSet expected =
        qcheck::expected_tensors(c->c, p, qcheck::simd_row_ops(), qcheck::Poison::kA, &why);
    if (!why.empty()) {
      v->verdict.outcome = qcheck::Outcome::invalid_input(why);
    } else {
      v->verdict.report = qcheck::compare_runs(c->c, expected, got_a, run_b != nullptr ? got_b : got_a, listed);
    }
    why.clear();
    *out = v.release();
    return QCHECK_OK;
  });
}

int qcheck_verdict_exit_code(const qcheck_verdict* v) { return v == nullptr ? QCHECK_INVALID_INPUT : v->verdict.exit_code(); }

qcheck_status qcheck_verdict_signature(const qcheck_verdict* v, char* out, size_t capacity, size_t* needed) {
  if (v == nullptr) return QCHECK_INVALID_INPUT;
  const std::string text = v->verdict.outcome.is_ok() && !v->verdict.report.passed()
                               ? v->verdict.report.primary_signature().text()
                               : "";
  return copy_text(text, out, capacity, needed);
}

qcheck_status qcheck_verdict_text(const qcheck_verdict* v, char* out, size_t capacity, size_t* needed) {
  if (v == nullptr) return QCHECK_INVALID_INPUT;
  return copy_text(qcheck::verdict_text(v->verdict, v->c), out, capacity, needed);
}

qcheck_status qcheck_verdict_json(const qcheck_verdict* v, char* out, size_t capacity, size_t* needed) {
  if (v == nullptr) return QCHECK_INVALID_INPUT;
  return copy_text(qcheck::verdict_json(v->verdict, v->c), out, capacity, needed);
}

void qcheck_verdict_free(qcheck_verdict* v) { delete v; }

qcheck_status qcheck_case_bins(const qcheck_case* c, const char* profile, uint8_t* bins, size_t capacity,
                               size_t* count, char* message, size_t message_size) {
  return guarded(message, message_size, [&](std::string& why) {
    if (c == nullptr || count == nullptr) {
      why = "case or count is NULL";
      return QCHECK_INVALID_INPUT;
    }
    const size_t total = static_cast<size_t>(qcheck::fuzzing::bin_count());
    *count = total;
    if (capacity == 0) return QCHECK_OK;
    if (bins == nullptr || capacity < total) {
      why = "bins holds " + std::to_string(capacity) + " entries, there are " + std::to_string(total) + " bins";
      return QCHECK_INVALID_INPUT;
    }
    why = qcheck::validate_case(c->c);
    if (!why.empty()) return QCHECK_INVALID_INPUT;
    qcheck::Profile p;
    const std::string name = profile_name(c->c, profile);
    if (!qcheck::find_profile(name, &p)) {
      why = "profile \"" + name + "\" is not a known profile";
      return QCHECK_INVALID_INPUT;
    }
    qcheck::fuzzing::clear_last_bins();
    qcheck::fuzzing::mark_case_bins(c->c);
    qcheck::fuzzing::mark_input_bins(c->c, qcheck::build_tensor_set(c->c, qcheck::Poison::kA), p);
    std::memcpy(bins, qcheck::fuzzing::last_bins(), total);
    return QCHECK_OK;
  });
}

qcheck_status qcheck_verdict_bins(const qcheck_verdict* v, uint8_t* bins, size_t capacity, size_t* count) {
  if (v == nullptr || count == nullptr) return QCHECK_INVALID_INPUT;
  const size_t total = static_cast<size_t>(qcheck::fuzzing::bin_count());
  *count = total;
  if (capacity == 0) return QCHECK_OK;
  if (bins == nullptr || capacity < total) return QCHECK_INVALID_INPUT;
  qcheck::fuzzing::clear_last_bins();
  qcheck::fuzzing::mark_verdict_bins(v->verdict);
  std::memcpy(bins, qcheck::fuzzing::last_bins(), total);
  return QCHECK_OK;
}

qcheck_status qcheck_bin_name(size_t index, char* out, size_t capacity, size_t* needed) {
  if (index >= static_cast<size_t>(qcheck::fuzzing::bin_count())) return QCHECK_INVALID_INPUT;
  return copy_text(qcheck::fuzzing::bin_name(static_cast<int>(index)), out, capacity, needed);
}

qcheck_status qcheck_minimize(const qcheck_case* c, qcheck_evaluate_fn evaluate, void* user,
                              const qcheck_minimize_options* options, qcheck_minimized** out, char* message,
                              size_t message_size) {
  return guarded(message, message_size, [&](std::string& why) {
    if (c == nullptr || evaluate == nullptr || out == nullptr) {
      why = "case, evaluate or out is NULL";
      return QCHECK_INVALID_INPUT;
    }
    if (options != nullptr && options->struct_size < sizeof(qcheck_minimize_options)) {
      why = "options->struct_size = " + std::to_string(options->struct_size) + ", this library needs " +
            std::to_string(sizeof(qcheck_minimize_options));
      return QCHECK_INVALID_INPUT;
    }
    why = qcheck::validate_case(c->c);
    if (!why.empty()) return QCHECK_INVALID_INPUT;
    // The caller's observation: exit code, then its failure lines.
    const qcheck::Evaluate judge = [evaluate, user](const Case& candidate) {
      qcheck_case handle{candidate};
      std::vector<char> failure(8192, '\0');
      qcheck::Observation o;
      o.exit_code = evaluate(&handle, user, failure.data(), failure.size());
      failure.back() = '\0';
      const std::string lines(failure.data());
      size_t at = lines.find('\n');
      o.failure = lines.substr(0, at);
      while (at != std::string::npos) {
        const size_t next = lines.find('\n', at + 1);
        const std::string line = lines.substr(at + 1, next == std::string::npos ? std::string::npos : next - at - 1);
        if (!line.empty()) o.signatures.push_back(line);
        at = next;
      }
      return o;
    };
    const qcheck::Observation target = judge(c->c);
    if (target.exit_code == 0) {
      why = "the case passes: nothing to minimize";
      return QCHECK_INVALID_INPUT;
    }
    qcheck::MinimizeOptions o;
    o.budget_seconds = options != nullptr && options->budget_seconds > 0 ? options->budget_seconds : 60;
    o.explain = options == nullptr || options->explain != 0;
    *out = new qcheck_minimized{qcheck::minimize(c->c, target, judge, o)};
    return QCHECK_OK;
  });
}

qcheck_status qcheck_minimized_case(const qcheck_minimized* m, qcheck_case** out) {
  if (m == nullptr || out == nullptr) return QCHECK_INVALID_INPUT;
  *out = new qcheck_case{m->result.minimized};
  return QCHECK_OK;
}

qcheck_status qcheck_minimized_report(const qcheck_minimized* m, const char* kernel, const char* differs,
                                      const char* replay_command, char* out, size_t capacity, size_t* needed) {
  if (m == nullptr) return QCHECK_INVALID_INPUT;
  return copy_text(qcheck::minimize_report(m->result, kernel != nullptr ? kernel : "outside kernel",
                                           differs != nullptr ? differs : "", replay_command != nullptr ? replay_command : ""),
                   out, capacity, needed);
}

qcheck_status qcheck_minimized_pytest(const qcheck_minimized* m, const char* adapter, const char* profile,
                                      const char* device, char* out, size_t capacity, size_t* needed) {
  if (m == nullptr || adapter == nullptr) return QCHECK_INVALID_INPUT;
  return copy_text(qcheck::regression_pytest_source(m->result, adapter, profile != nullptr ? profile : "",
                                                    device != nullptr ? device : ""),
                   out, capacity, needed);
}

void qcheck_minimized_free(qcheck_minimized* m) { delete m; }

qcheck_status qcheck_profile_names(char* out, size_t capacity, size_t* needed) {
  std::string names;
  for (const std::string& n : qcheck::profile_names()) names += (names.empty() ? "" : ",") + n;
  return copy_text(names, out, capacity, needed);
}

}  // extern "C"
