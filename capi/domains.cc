// The C API's domains (fuzz/domain: a kernel's supported cases from their
// JSON form, the check of a case and its repair) and known bugs
// (fuzz/verdict/known.h: how a finding is counted and grouped).
#include "capi/capi_edge.h"

#include <algorithm>

#include "fuzz/domain/domain_json.h"

using namespace qcheck::capi;

extern "C" {

qcheck_status qcheck_domain_parse(const char* json, qcheck_domain** out, char* message, size_t message_size) {
  return guarded(message, message_size, [&](std::string& why) {
    if (json == nullptr || out == nullptr) {
      why = "json or out is NULL";
      return QCHECK_INVALID_INPUT;
    }
    qcheck::Domain domain;
    why = qcheck::domain_from_json(json, &domain);
    if (!why.empty()) return QCHECK_INVALID_INPUT;
    *out = new qcheck_domain{domain};
    return QCHECK_OK;
  });
}

qcheck_status qcheck_domain_json(const qcheck_domain* d, char* out, size_t capacity, size_t* needed) {
  if (d == nullptr) return QCHECK_INVALID_INPUT;
  return copy_text(qcheck::domain_to_json(d->domain), out, capacity, needed);
}

qcheck_status qcheck_domain_check_case(const qcheck_domain* d, const qcheck_case* c, char* message,
                                       size_t message_size) {
  return guarded(message, message_size, [&](std::string& why) {
    if (d == nullptr || c == nullptr) {
      why = "domain or case is NULL";
      return QCHECK_INVALID_INPUT;
    }
    if (refuse_fused_k(c, "qcheck_domain_check_case", why)) return QCHECK_INVALID_INPUT;
    why = qcheck::outside_domain(d->domain, c->c);
    if (why.empty()) return QCHECK_OK;
    why = "outside the domain: " + why;
    return QCHECK_INVALID_INPUT;
  });
}

qcheck_status qcheck_domain_fit_case(const qcheck_domain* d, const qcheck_case* c, qcheck_case** out, char* message,
                                     size_t message_size) {
  return guarded(message, message_size, [&](std::string& why) {
    if (d == nullptr || c == nullptr || out == nullptr) {
      why = "domain, case or out is NULL";
      return QCHECK_INVALID_INPUT;
    }
    if (refuse_fused_k(c, "qcheck_domain_fit_case", why)) return QCHECK_INVALID_INPUT;
    Case fitted = c->c;
    qcheck::fit_to_domain(d->domain, fitted);
    *out = new qcheck_case{fitted};
    return QCHECK_OK;
  });
}

void qcheck_domain_free(qcheck_domain* d) { delete d; }

}  // extern "C"

extern "C" {

qcheck_status qcheck_known_parse(const char* json, qcheck_known** out, char* message, size_t message_size) {
  return guarded(message, message_size, [&](std::string& why) {
    if (json == nullptr || out == nullptr) {
      why = "json or out is NULL";
      return QCHECK_INVALID_INPUT;
    }
    std::vector<qcheck::KnownBug> bugs;
    why = qcheck::known_bugs_from_json(json, &bugs);
    if (!why.empty()) return QCHECK_INVALID_INPUT;
    *out = new qcheck_known{bugs};
    return QCHECK_OK;
  });
}

qcheck_status qcheck_finding_classify(const qcheck_known* known, const qcheck_case* c, const char* signatures,
                                      int32_t* known_entry, char* group, size_t capacity, size_t* needed) {
  if (c == nullptr || signatures == nullptr || known_entry == nullptr) return QCHECK_INVALID_INPUT;
  std::vector<std::string> lines;
  std::string text(signatures);
  for (size_t at = 0; at <= text.size();) {
    const size_t end = std::min(text.find('\n', at), text.size());
    if (end > at) lines.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  // Known entries hold fused_q domains: none covers a fused_k finding yet (its group is where it differs).
  const qcheck::FindingClass f = qcheck::classify_finding(
      known != nullptr && !c->fused_k ? known->bugs : std::vector<qcheck::KnownBug>{}, c->c, lines);
  *known_entry = f.known;
  return copy_text(f.group, group, capacity, needed);
}

void qcheck_known_free(qcheck_known* k) { delete k; }

}  // extern "C"
