// The C API's tensors and verdicts: the plan, the buffers a run starts
// from, the oracle's outputs, the judge over a caller's runs.
#include "capi/capi_edge.h"
#include "capi/fused_k_entries.h"
#include "capi/kept_buffers.h"

#include <memory>
#include <vector>

#include "fuzz/buffers/tensors.h"
#include "fuzz/verdict/compare.h"
#include "fuzz/verdict/judge.h"
#include "fuzz/verdict/verdict.h"
#include "numerics/row_ops.h"
#include "ops/fused_q/oracle/fused_q_oracle.h"

using namespace qcheck::capi;

namespace {

int32_t dtype_of(qcheck::ElementType t) {
  switch (t) {
    case qcheck::ElementType::kInt64: return QCHECK_DTYPE_INT64;
    case qcheck::ElementType::kF32: return QCHECK_DTYPE_F32;
    case qcheck::ElementType::kBf16: return QCHECK_DTYPE_BF16;
    case qcheck::ElementType::kE4m3: return QCHECK_DTYPE_E4M3;
    default: return -1;  // no fused_q tensor has another type; C API v5 names no other dtype yet
  }
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

// The two plan calls on a fused_q case: a valid case, then fill_entries
// with fill(plan, i, entry).
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
  return fill_entries(out, capacity, count, entries(plan), why, [&](size_t i, Info& entry) { fill(plan, i, entry); });
}

}  // namespace

extern "C" {

qcheck_status qcheck_plan_buffers(const qcheck_case* c, qcheck_buffer_info* out, size_t capacity, size_t* count,
                                  char* message, size_t message_size) {
  return guarded(message, message_size, [&](std::string& why) {
    if (c != nullptr && c->fused_k) return fused_k_plan_buffers(*c->fused_k, out, capacity, count, why);
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
    if (c != nullptr && aliased != nullptr) *aliased = !c->fused_k && c->c.alias == qcheck::AliasMode::kExactFront;
    if (c != nullptr && c->fused_k) return fused_k_plan_tensors(*c->fused_k, out, capacity, count, why);
    return plan_entries(c, out, capacity, count, why, [](const qcheck::TensorPlan& p) { return p.tensors.size(); },
                        [](const qcheck::TensorPlan& plan, size_t i, qcheck_tensor_info& t) {
                          const qcheck::TensorGeometry& g = plan.tensors[i];
                          copy_name(t.name, qcheck::name_of(g.id));
                          t.role = g.role == qcheck::TensorRole::kInput    ? QCHECK_ROLE_INPUT
                                   : g.role == qcheck::TensorRole::kOutput ? QCHECK_ROLE_OUTPUT
                                                                           : QCHECK_ROLE_UNTOUCHED_OUTPUT;
                          t.dtype = dtype_of(g.type);
                          const qcheck::OutsideShape o = qcheck::outside_shape(g);
                          t.ndim = o.ndim;
                          for (int d = 0; d < 3; ++d) {
                            t.shape[d] = o.shape[d];
                            t.strides[d] = o.strides[d];
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
    if (c->fused_k) {
      fused_k_fill(*c->fused_k, poison, buffers);
      return QCHECK_OK;
    }
    write_run_buffers(c->c, poison, buffers);
    return QCHECK_OK;
  });
}

qcheck_status qcheck_expected_buffers(const qcheck_case* c, const char* profile, uint8_t* const* buffers,
                                      size_t buffer_count, char* message, size_t message_size) {
  return guarded(message, message_size, [&](std::string& why) {
    const qcheck_status s = valid_case_and_buffers(c, buffers, buffer_count, why);
    if (s != QCHECK_OK) return s;
    if (c->fused_k) return fused_k_expected(*c->fused_k, profile, buffers, why);
    qcheck::Profile p;
    const std::string name = profile_name(c->c, profile);
    if (!qcheck::find_profile(name, &p)) {
      why = "profile \"" + name + "\" is not a known profile";
      return QCHECK_INVALID_INPUT;
    }
    std::unique_ptr<qcheck::TensorSet> kept = kept_poison_a(c->c);
    const qcheck::TensorSet set =
        kept != nullptr ? qcheck::expected_tensors(c->c, p, qcheck::simd_row_ops(), std::move(*kept), &why)
                        : qcheck::expected_tensors(c->c, p, qcheck::simd_row_ops(), qcheck::Poison::kA, &why);
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
    // Version 1's struct ends before run_graph.
    constexpr size_t kVersion1Size = offsetof(qcheck_verdict_options, run_graph);
    if (options != nullptr && options->struct_size < kVersion1Size) {
      why = "options->struct_size = " + std::to_string(options->struct_size) + ", this library needs at least " +
            std::to_string(kVersion1Size);
      return QCHECK_INVALID_INPUT;
    }
    const uint8_t* const* run_graph =
        options != nullptr && options->struct_size >= sizeof(qcheck_verdict_options) ? options->run_graph : nullptr;
    if (run_graph != nullptr && (s = valid_case_and_buffers(c, run_graph, buffer_count, why)) != QCHECK_OK) return s;
    if (c->fused_k) return fused_k_judge(*c->fused_k, options, run_a, run_b, out, why);
    auto v = std::make_unique<qcheck_verdict>();
    v->c = c->c;
    v->verdict.backend = options != nullptr && options->kernel != nullptr ? options->kernel : "outside kernel";
    v->verdict.profile = profile_name(c->c, options != nullptr ? options->profile : nullptr);
    const size_t listed = options != nullptr && options->max_listed > 0 ? options->max_listed : 20;
    v->verdict.report.max_listed = listed;
    qcheck::Profile p;
    if (v->verdict.profile != qcheck::kAutoProfile && !qcheck::find_profile(v->verdict.profile, &p)) {
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
    qcheck::Judgement judgement;
    const std::unique_ptr<qcheck::TensorSet> prepared = kept_poison_a(c->c);  // (null: the judge builds it)
    why = qcheck::judge_runs(c->c, v->verdict.profile, qcheck::simd_row_ops(), got_a, run_b != nullptr ? got_b : got_a,
                             listed, prepared.get(), nullptr, &judgement);
    if (!why.empty()) {
      v->verdict.outcome = qcheck::Outcome::invalid_input(why);
    } else {
      qcheck::take_judgement(std::move(judgement), &v->verdict);
      if (run_graph != nullptr) {
        qcheck::TensorSet graph;
        if ((s = set_from(c->c, run_graph, buffer_count, &graph, why)) != QCHECK_OK) return s;
        qcheck::add_graph_replay(c->c, got_a, graph, &v->verdict);
      }
    }
    why.clear();
    *out = v.release();
    return QCHECK_OK;
  });
}

qcheck_status qcheck_differ(const qcheck_case* c, const char* first_name, const uint8_t* const* first,
                            const char* second_name, const uint8_t* const* second, size_t buffer_count,
                            uint32_t max_listed, qcheck_verdict** out, char* message, size_t message_size) {
  return guarded(message, message_size, [&](std::string& why) {
    if (out == nullptr) {
      why = "out is NULL";
      return QCHECK_INVALID_INPUT;
    }
    if (refuse_fused_k(c, "qcheck_differ", why)) return QCHECK_INVALID_INPUT;
    qcheck_status s = valid_case_and_buffers(c, first, buffer_count, why);
    if (s == QCHECK_OK) s = valid_case_and_buffers(c, second, buffer_count, why);
    if (s != QCHECK_OK) return s;
    qcheck::TensorSet a, b;
    if ((s = set_from(c->c, first, buffer_count, &a, why)) != QCHECK_OK) return s;
    if ((s = set_from(c->c, second, buffer_count, &b, why)) != QCHECK_OK) return s;
    auto v = std::make_unique<qcheck_verdict>();
    v->c = c->c;
    const std::string named_first = first_name != nullptr ? first_name : "first kernel";
    v->verdict.backend = second_name != nullptr ? second_name : "second kernel";
    v->verdict.profile = named_first + " in the oracle's place";
    v->verdict.report = qcheck::compare_runs(c->c, a, b, b, max_listed > 0 ? max_listed : 20);
    *out = v.release();
    return QCHECK_OK;
  });
}

int qcheck_verdict_exit_code(const qcheck_verdict* v) {
  if (v == nullptr) return QCHECK_INVALID_INPUT;
  return v->fused_k ? v->fused_k->exit_code : v->verdict.exit_code();
}

qcheck_status qcheck_verdict_signature(const qcheck_verdict* v, char* out, size_t capacity, size_t* needed) {
  if (v == nullptr) return QCHECK_INVALID_INPUT;
  if (v->fused_k) {
    return copy_text(v->fused_k->signatures.empty() ? "" : v->fused_k->signatures.front(), out, capacity, needed);
  }
  const std::string text = v->verdict.outcome.is_ok() && !v->verdict.report.passed()
                               ? v->verdict.report.primary_signature().text()
                               : "";
  return copy_text(text, out, capacity, needed);
}

qcheck_status qcheck_verdict_profiles(const qcheck_verdict* v, char* out, size_t capacity, size_t* needed) {
  if (v == nullptr) return QCHECK_INVALID_INPUT;
  if (v->fused_k) return copy_text("", out, capacity, needed);  // (no "auto" for fused_k: one profile)
  std::string list;
  for (const std::string& name : v->verdict.explaining) list += (list.empty() ? "" : ",") + name;
  return copy_text(list, out, capacity, needed);
}

qcheck_status qcheck_verdict_text(const qcheck_verdict* v, char* out, size_t capacity, size_t* needed) {
  if (v == nullptr) return QCHECK_INVALID_INPUT;
  if (v->fused_k) return copy_text(v->fused_k->text, out, capacity, needed);
  return copy_text(qcheck::verdict_text(v->verdict, v->c), out, capacity, needed);
}

qcheck_status qcheck_verdict_json(const qcheck_verdict* v, char* out, size_t capacity, size_t* needed) {
  if (v == nullptr) return QCHECK_INVALID_INPUT;
  if (v->fused_k) return copy_text(v->fused_k->json, out, capacity, needed);
  return copy_text(qcheck::verdict_json(v->verdict, v->c), out, capacity, needed);
}

void qcheck_verdict_free(qcheck_verdict* v) { delete v; }

}  // extern "C"
