// The C API's feedback for fuzz loops and minimizers: the semantic bins
// and the minimizer over a caller's evaluate callback.
#include "capi/capi_edge.h"
#include "capi/kept_buffers.h"

#include <cstddef>
#include <vector>

#include "core/op/any_bins.h"
#include "fuzz/buffers/tensors.h"
#include "fuzz/minimize/minimize_report.h"
#include "fuzz/mutator/semantic_bins.h"
#include "ops/fused_k/op.h"
#include "ops/fused_q/op.h"

using namespace qcheck::capi;

extern "C" {

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
    if (refuse_fused_k(c, "qcheck_case_bins", why)) return QCHECK_INVALID_INPUT;
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
    // The inputs are this thread's kept set (capi/kept_buffers.h): the run
    // buffers and the judge of the same case then start from it.
    qcheck::TensorSet scratch;
    qcheck::fuzzing::mark_input_bins(c->c, poison_a_set(c->c, scratch), p);
    std::memcpy(bins, qcheck::fuzzing::last_bins(), total);
    return QCHECK_OK;
  });
}

qcheck_status qcheck_case_bin_names(const qcheck_case* c, char* out, size_t capacity, size_t* needed) {
  if (c == nullptr) return QCHECK_INVALID_INPUT;
  const qcheck::AnyCase any = c->fused_k ? qcheck::fused_k::to_any_case(*c->fused_k) : qcheck::to_any_case(c->c);
  std::string lines;
  for (const std::string& name : qcheck::any_case_bins(any)) lines += (lines.empty() ? "" : "\n") + name;
  return copy_text(lines, out, capacity, needed);
}

qcheck_status qcheck_verdict_bins(const qcheck_verdict* v, uint8_t* bins, size_t capacity, size_t* count) {
  if (v == nullptr || count == nullptr || v->fused_k) return QCHECK_INVALID_INPUT;  // (no bins for fused_k yet)
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
    // Version 2's struct ends before domain.
    constexpr size_t kVersion2Size = offsetof(qcheck_minimize_options, domain);
    if (options != nullptr && options->struct_size < kVersion2Size) {
      why = "options->struct_size = " + std::to_string(options->struct_size) + ", this library needs at least " +
            std::to_string(kVersion2Size);
      return QCHECK_INVALID_INPUT;
    }
    const qcheck_domain* domain =
        options != nullptr && options->struct_size >= sizeof(qcheck_minimize_options) ? options->domain : nullptr;
    if (refuse_fused_k(c, "qcheck_minimize", why)) return QCHECK_INVALID_INPUT;
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
    if (domain != nullptr) {
      const qcheck::Domain supported = domain->domain;
      o.outside = [supported](const Case& candidate) { return qcheck::outside_domain(supported, candidate); };
      o.fit = [supported](Case& candidate) { qcheck::fit_to_domain(supported, candidate); };
    }
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

}  // extern "C"
