// The C API's cases: version, decode, generation, mutation, encodings.
#include "capi/capi_edge.h"

#include <cstring>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/op/any_case.h"
#include "core/op/any_case_json.h"
#include "core/random/prng.h"
#include "fuzz/case/case_binary.h"
#include "fuzz/case/case_file.h"
#include "fuzz/case/case_json.h"
#include "fuzz/mutator/case_mutator.h"
#include "fuzz/mutator/compile_key.h"
#include "numerics/profile.h"
#include "ops/fused_k/op.h"
#include "ops/registry/registry.h"

using namespace qcheck::capi;

namespace {

const qcheck::fuzzing::SizeBudget* budget_of(const char* size, std::string& why) {
  const qcheck::fuzzing::SizeBudget* b = qcheck::fuzzing::case_size_budget(size == nullptr ? "default" : size);
  if (b == nullptr) why = std::string("size = \"") + size + "\" must be tiny, usual, default or limit";
  return b;
}

// The seed of one mutator call, as the fuzz target keys its own.
qcheck::Xoshiro256 generator(uint64_t purpose, uint64_t seed) { return qcheck::Xoshiro256(qcheck::mix_keys({purpose, seed})); }

// JSON starts with '{' after blanks (fuzz/case/case_file.h); anything else is binary.
bool is_json(const uint8_t* bytes, size_t size) {
  size_t first = 0;
  while (first < size && std::strchr(" \t\r\n", bytes[first]) != nullptr) ++first;
  return first < size && bytes[first] == '{';
}

// The op a case file names: a version-3 binary case's header, a JSON
// object's "op"; "" when it names none (fused_q's files) or cannot be read
// that far (fused_q's decoder then says why).
std::string named_op(const uint8_t* bytes, size_t size) {
  std::string op;
  if (is_json(bytes, size)) {
    const nlohmann::json j = nlohmann::json::parse(bytes, bytes + size, nullptr, false);
    if (j.is_object() && j.contains("op") && j["op"].is_string()) op = j["op"].get<std::string>();
  } else if (!qcheck::any_case_op_name(bytes, size, &op).empty()) {
    op.clear();
  }
  return op;
}

// A fused_k case from a file that names the op: "" and *out set, or why not.
std::string decode_fused_k(const uint8_t* bytes, size_t size, qcheck::fused_k::FusedKCase* out) {
  qcheck::AnyCase any;
  const std::string why = is_json(bytes, size) ? qcheck::any_case_from_json(std::string(bytes, bytes + size),
                                                                           qcheck::all_ops(),
                                                                           qcheck::fused_k::fused_k_op(), &any)
                                               : qcheck::decode_any_case(bytes, size, qcheck::all_ops(), &any);
  return why.empty() ? qcheck::fused_k::from_any_case(any, out) : why;
}

// A new fused_k case in *out from make(budget, &case) (a door function of
// ops/fused_k/door returning "" or why not), under the arena budget of the
// door size `size`.
template <typename Make>
qcheck_status new_fused_k_case(const char* size, qcheck_case** out, std::string& why, Make make) {
  const std::string name = size == nullptr ? "default" : size;
  const int64_t budget = qcheck::fused_k::door_arena_budget(name);
  if (budget == 0) {
    why = "size = \"" + name + "\" must be tiny, usual, default or limit";
    return QCHECK_INVALID_INPUT;
  }
  if (out == nullptr) {
    why = "out is NULL";
    return QCHECK_INVALID_INPUT;
  }
  qcheck::fused_k::FusedKCase made;
  why = make(budget, &made);
  if (!why.empty()) return QCHECK_INVALID_INPUT;
  *out = new qcheck_case{made};
  return QCHECK_OK;
}

// qcheck_case_mutate and qcheck_case_mutate_warm on a fused_q case: a copy of `c` changed by
// `change` (with its own generator purpose) under the size's budget.
template <typename Change>
qcheck_status mutated_copy(const qcheck_case* c, uint64_t purpose, uint64_t seed, const char* size, qcheck_case** out,
                           char* message, size_t message_size, Change change) {
  return guarded(message, message_size, [&](std::string& why) {
    const qcheck::fuzzing::SizeBudget* budget = budget_of(size, why);
    if (budget == nullptr) return QCHECK_INVALID_INPUT;
    if (c == nullptr || out == nullptr) {
      why = "case or out is NULL";
      return QCHECK_INVALID_INPUT;
    }
    qcheck::Xoshiro256 rng = generator(purpose, seed);
    Case mutated = c->c;
    why = change(mutated, rng, *budget);
    if (!why.empty()) return QCHECK_INVALID_INPUT;
    *out = new qcheck_case{mutated};
    return QCHECK_OK;
  });
}

}  // namespace

extern "C" {

uint32_t qcheck_api_version(void) { return QCHECK_API_VERSION; }

const char* qcheck_version(void) { return QCHECK_VERSION; }

qcheck_status qcheck_case_decode(const uint8_t* bytes, size_t size, qcheck_case** out, char* message,
                                 size_t message_size) {
  return guarded(message, message_size, [&](std::string& why) {
    if (out == nullptr || (bytes == nullptr && size > 0)) {
      why = "bytes or out is NULL";
      return QCHECK_INVALID_INPUT;
    }
    if (named_op(bytes, size) == "fused_k") {
      qcheck::fused_k::FusedKCase k;
      why = decode_fused_k(bytes, size, &k);
      if (!why.empty()) return QCHECK_INVALID_INPUT;
      *out = new qcheck_case{k};
      return QCHECK_OK;
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

qcheck_status qcheck_case_from_seed_op(const char* op, uint64_t seed, const char* size, qcheck_case** out,
                                       char* message, size_t message_size) {
  const std::string name = op == nullptr ? "" : op;
  if (name == "fused_q") return qcheck_case_from_seed(seed, size, out, message, message_size);
  return guarded(message, message_size, [&](std::string& why) {
    if (name != "fused_k") {
      why = "op = \"" + name + "\" is not one of " + qcheck::op_names();
      return QCHECK_INVALID_INPUT;
    }
    return new_fused_k_case(size, out, why, [&](int64_t budget, qcheck::fused_k::FusedKCase* made) {
      return qcheck::fused_k::door_case_from_seed(seed, budget, made);
    });
  });
}

const char* qcheck_case_op(const qcheck_case* c) {
  if (c == nullptr) return "";
  return c->fused_k ? "fused_k" : "fused_q";
}

qcheck_status qcheck_case_mutate(const qcheck_case* c, uint64_t seed, const char* size, qcheck_case** out,
                                 char* message, size_t message_size) {
  if (c != nullptr && c->fused_k) {
    return guarded(message, message_size, [&](std::string& why) {
      return new_fused_k_case(size, out, why, [&](int64_t budget, qcheck::fused_k::FusedKCase* made) {
        return qcheck::fused_k::door_mutate(*c->fused_k, seed, budget, made);
      });
    });
  }
  return mutated_copy(c, 0x6D757461746F72ull, seed, size, out, message, message_size,
                      [](Case& m, qcheck::Xoshiro256& rng, const qcheck::fuzzing::SizeBudget& budget) {
                        qcheck::fuzzing::mutate_case(m, rng, budget);
                        return std::string();
                      });
}

qcheck_status qcheck_case_limit(uint64_t seed, int64_t execution, int64_t index, const char* size, qcheck_case** out,
                                char* message, size_t message_size) {
  return guarded(message, message_size, [&](std::string& why) {
    const qcheck::fuzzing::SizeBudget* budget = budget_of(size, why);
    if (budget == nullptr) return QCHECK_INVALID_INPUT;
    if (out == nullptr || execution < 0 || index < 0) {
      why = "out is NULL, or execution or index is negative";
      return QCHECK_INVALID_INPUT;
    }
    qcheck::Xoshiro256 rng = generator(0x6C696D6974ull /* "limit" */, seed);
    Case c;
    *out = qcheck::fuzzing::next_limit_case(*budget, execution, rng, &index, &c) ? new qcheck_case{c} : nullptr;
    return QCHECK_OK;
  });
}

qcheck_status qcheck_case_mutate_warm(const qcheck_case* c, uint64_t seed, const char* size, qcheck_case** out,
                                      char* message, size_t message_size) {
  if (c != nullptr && c->fused_k) {  // (fused_k has no compile key yet)
    return guarded(message, message_size, [&](std::string& why) {
      refuse_fused_k(c, "qcheck_case_mutate_warm", why);
      return QCHECK_INVALID_INPUT;
    });
  }
  // (compile_key needs a valid case: an invalid one is refused with the reason)
  return mutated_copy(c, 0x7761726Dull, seed, size, out, message, message_size,
                      [](Case& m, qcheck::Xoshiro256& rng, const qcheck::fuzzing::SizeBudget& budget) {
                        std::string why = qcheck::validate_case(m);
                        if (why.empty()) qcheck::fuzzing::mutate_case_warm(m, rng, budget);
                        return why;
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
    if (refuse_fused_k(a, "qcheck_case_cross_over", why) || refuse_fused_k(b, "qcheck_case_cross_over", why)) {
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
    why = c->fused_k ? qcheck::fused_k::validate_fused_k_case(*c->fused_k) : qcheck::validate_case(c->c);
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
      const std::vector<uint8_t> bytes =
          c->fused_k ? qcheck::encode_any_case(qcheck::fused_k::to_any_case(*c->fused_k)) : qcheck::encode_case(c->c);
      const qcheck_status s = copy_out(bytes.data(), bytes.size(), out, capacity, needed);
      if (s != QCHECK_OK) why = "out holds " + std::to_string(capacity) + " bytes, the case needs " + std::to_string(bytes.size());
      return s;
    }
    const std::string json = c->fused_k ? qcheck::any_case_to_json(qcheck::fused_k::to_any_case(*c->fused_k), true)
                                        : qcheck::case_to_json(c->c);
    const qcheck_status s = copy_out(json.c_str(), json.size() + 1, out, capacity, needed);
    if (s != QCHECK_OK) why = "out holds " + std::to_string(capacity) + " bytes, the case needs " + std::to_string(json.size() + 1);
    return s;
  });
}

qcheck_status qcheck_case_describe(const qcheck_case* c, char* out, size_t capacity, size_t* needed) {
  if (c == nullptr) return QCHECK_INVALID_INPUT;
  return copy_text(c->fused_k ? qcheck::fused_k::describe(*c->fused_k) : qcheck::describe(c->c), out, capacity,
                   needed);
}

qcheck_status qcheck_case_compile_key(const qcheck_case* c, char* out, size_t capacity, size_t* needed) {
  if (c == nullptr || c->fused_k || !qcheck::validate_case(c->c).empty()) return QCHECK_INVALID_INPUT;
  return copy_text(qcheck::fuzzing::compile_key(c->c), out, capacity, needed);
}

qcheck_status qcheck_case_digest(const qcheck_case* c, char* out, size_t capacity, size_t* needed) {
  if (c == nullptr) return QCHECK_INVALID_INPUT;
  return copy_text(c->fused_k ? qcheck::any_case_digest(qcheck::fused_k::to_any_case(*c->fused_k))
                              : qcheck::case_digest(c->c),
                   out, capacity, needed);
}

qcheck_status qcheck_profile_names(char* out, size_t capacity, size_t* needed) {
  std::string names;
  for (const std::string& n : qcheck::profile_names()) names += (names.empty() ? "" : ",") + n;
  return copy_text(names, out, capacity, needed);
}

qcheck_status qcheck_ops_json(char* out, size_t capacity, size_t* needed) {
  std::string list = "[";
  for (const qcheck::Op* op : qcheck::all_ops()) list += (list.size() > 1 ? "," : "") + qcheck::vocabulary_json(*op);
  return copy_text(list + "]", out, capacity, needed);
}

}  // extern "C"
