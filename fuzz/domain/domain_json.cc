#include "fuzz/domain/domain_json.h"

#include <nlohmann/json.hpp>

#include "fuzz/case/case_file.h"
#include "fuzz/case/case_names.h"
#include "fuzz/case/tensor_plan.h"

namespace qcheck {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kKeys[] = {"query_paths",    "indexer",          "alias",
                                 "indexer_ropes",  "mqa_cache_dtypes", "indexer_cache_dtypes",
                                 "weights_dtypes", "weights_out_dtypes", "contiguous",
                                 "unit_inner_stride", "dims",          "relations"};

std::string tensor_names() {
  std::string all;
  for (TensorId id : kLaidOutTensors) all += (all.empty() ? "" : ", ") + std::string(name_of(id));
  return all;
}

class Reader {
 public:
  explicit Reader(const Json& j) : j_(j) {}
  std::string error;

  // A list of names of Enum into a mask (absent: the mask stays "any").
  template <typename Enum>
  void names(const char* key, uint32_t* mask, const char* what) {
    const Json* list = array(key);
    if (list == nullptr) return;
    uint32_t m = 0;
    for (size_t i = 0; i < list->size() && error.empty(); ++i) {
      Enum value;
      if (!(*list)[i].is_string() || !parse_name((*list)[i].get<std::string>(), &value)) {
        fail(std::string(key) + "[" + std::to_string(i) + "]: " + (*list)[i].dump() + " is not " + what +
             " (one of " + names_of_all<Enum>() + ")");
        return;
      }
      m |= 1u << static_cast<unsigned>(value);
    }
    *mask = m;
  }

  void booleans(const char* key, uint32_t* mask) {
    const Json* list = array(key);
    if (list == nullptr) return;
    uint32_t m = 0;
    for (size_t i = 0; i < list->size() && error.empty(); ++i) {
      if (!(*list)[i].is_boolean()) {
        fail(std::string(key) + "[" + std::to_string(i) + "]: " + (*list)[i].dump() + " is not true or false");
        return;
      }
      m |= (*list)[i].get<bool>() ? 2u : 1u;
    }
    *mask = m;
  }

  void tensors(const char* key, uint32_t* mask) {
    const Json* list = array(key);
    if (list == nullptr) return;
    for (size_t i = 0; i < list->size() && error.empty(); ++i) {
      bool found = false;
      for (TensorId id : kLaidOutTensors) {
        if ((*list)[i].is_string() && (*list)[i].get<std::string>() == name_of(id)) {
          *mask |= 1u << static_cast<unsigned>(id);
          found = true;
        }
      }
      if (!found) {
        fail(std::string(key) + "[" + std::to_string(i) + "]: " + (*list)[i].dump() + " is not a tensor (one of " +
             tensor_names() + ")");
      }
    }
  }

  void dims(Domain* d) {
    if (!j_.contains("dims")) return;
    const Json& dims = j_["dims"];
    if (!dims.is_object()) return fail("dims: expected an object of DIM: {min, max, values, power_of_two, multiple_of}");
    for (const auto& [name, rule] : dims.items()) {
      Dim dim;
      if (!parse_name(name, &dim)) {
        return fail("dims." + name + ": not a dimension (one of num_tokens, mqa_heads, indexer_heads, index_dim, "
                    "rope_dim, nope_dim, cache_rows)");
      }
      if (!rule.is_object()) return fail("dims." + name + ": expected an object {min, max, values, power_of_two, "
                                         "multiple_of}");
      DimRule& r = d->dim(dim);
      const std::string at = std::string("dims.") + name_of(dim);
      for (const auto& [key, value] : rule.items()) {
        if (key == "min" || key == "max" || key == "multiple_of") {
          if (!value.is_number_integer() || value.get<int64_t>() < 1 || value.get<int64_t>() > (int64_t(1) << 40)) {
            return fail(at + "." + key + ": " + value.dump() + " is not a whole number in 1..2^40");
          }
          (key == "min" ? r.min : key == "max" ? r.max : r.multiple_of) = value.get<int64_t>();
        } else if (key == "power_of_two") {
          if (!value.is_boolean()) return fail(at + ".power_of_two: " + value.dump() + " is not true or false");
          r.power_of_two = value.get<bool>();
        } else if (key == "values") {
          if (!value.is_array() || value.empty() || value.size() > 64) {
            return fail(at + ".values: expected a list of 1 to 64 whole numbers");
          }
          for (const Json& v : value) {
            if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > (int64_t(1) << 40)) {
              return fail(at + ".values: " + v.dump() + " is not a whole number in 1..2^40");
            }
            r.values.push_back(v.get<int64_t>());
          }
        } else {
          return fail(at + "." + key + ": unknown key (min, max, values, power_of_two, multiple_of)");
        }
      }
      if (r.min > 0 && r.max > 0 && r.min > r.max) {
        return fail(at + ": min " + std::to_string(r.min) + " is above max " + std::to_string(r.max));
      }
    }
  }

  void relations(Domain* d) {
    const Json* list = array("relations");
    if (list == nullptr) return;
    for (size_t i = 0; i < list->size() && error.empty(); ++i) {
      if (!(*list)[i].is_string()) return fail("relations[" + std::to_string(i) + "]: expected a string");
      Relation r;
      const std::string why = parse_relation((*list)[i].get<std::string>(), &r);
      if (!why.empty()) return fail("relations[" + std::to_string(i) + "]: " + why);
      d->relations.push_back(r);
    }
  }

 private:
  const Json& j_;

  const Json* array(const char* key) {
    if (!error.empty() || !j_.contains(key)) return nullptr;
    const Json& v = j_[key];
    if (!v.is_array() || v.empty()) {
      fail(std::string(key) + ": expected a non-empty list (leave the key out for any value)");
      return nullptr;
    }
    return &v;
  }
  void fail(const std::string& why) {
    if (error.empty()) error = "domain: " + why;
  }
};

template <typename Enum>
Json names_of_mask(uint32_t mask) {
  Json list = Json::array();
  for (unsigned v = 0; v < enum_count<Enum>(); ++v) {
    if (mask >> v & 1u) list.push_back(name_of(static_cast<Enum>(v)));
  }
  return list;
}

Json tensors_of_mask(uint32_t mask) {
  Json list = Json::array();
  for (TensorId id : kLaidOutTensors) {
    if (mask >> static_cast<unsigned>(id) & 1u) list.push_back(name_of(id));
  }
  return list;
}

}  // namespace

std::string domain_from_json(const std::string& text, Domain* out) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return std::string("domain: not JSON: ") + e.what();
  }
  if (!j.is_object()) return "domain: expected a JSON object";
  // "op": the op whose cases the domain speaks of (absent: fused_q's).
  if (const auto op = j.find("op"); op != j.end()) {
    if (!op->is_string() || op->get<std::string>() != kCaseOp) return not_this_op("domain: op", op->dump());
    j.erase("op");
  }
  for (const auto& [key, value] : j.items()) {
    bool known = false;
    for (const char* k : kKeys) known |= key == k;
    if (!known) {
      std::string all;
      for (const char* k : kKeys) all += (all.empty() ? "" : ", ") + std::string(k);
      return "domain: unknown key '" + key + "' (known: " + all + ")";
    }
  }
  Domain d;
  Reader r(j);
  r.names<QueryPath>("query_paths", &d.query_paths, "a query path");
  r.booleans("indexer", &d.indexer);
  r.names<AliasMode>("alias", &d.alias, "an alias mode");
  r.names<RopeStyle>("indexer_ropes", &d.indexer_ropes, "a RoPE style");
  r.names<FloatType>("mqa_cache_dtypes", &d.mqa_cache_dtypes, "a cache dtype");
  r.names<FloatType>("indexer_cache_dtypes", &d.indexer_cache_dtypes, "a cache dtype");
  r.names<FloatType>("weights_dtypes", &d.weights_dtypes, "a weights dtype");
  r.names<FloatType>("weights_out_dtypes", &d.weights_out_dtypes, "a weights dtype");
  r.tensors("contiguous", &d.contiguous);
  r.tensors("unit_inner_stride", &d.unit_inner_stride);
  r.dims(&d);
  r.relations(&d);
  if (!r.error.empty()) return r.error;
  *out = d;
  return "";
}

std::string domain_to_json(const Domain& d) {
  const Domain any;
  Json j = Json::object();
  if (d.query_paths != any.query_paths) j["query_paths"] = names_of_mask<QueryPath>(d.query_paths);
  if (d.indexer != any.indexer) {
    j["indexer"] = Json::array();
    if (d.indexer & 1u) j["indexer"].push_back(false);
    if (d.indexer & 2u) j["indexer"].push_back(true);
  }
  if (d.alias != any.alias) j["alias"] = names_of_mask<AliasMode>(d.alias);
  if (d.indexer_ropes != any.indexer_ropes) j["indexer_ropes"] = names_of_mask<RopeStyle>(d.indexer_ropes);
  if (d.mqa_cache_dtypes != any.mqa_cache_dtypes) j["mqa_cache_dtypes"] = names_of_mask<FloatType>(d.mqa_cache_dtypes);
  if (d.indexer_cache_dtypes != any.indexer_cache_dtypes) {
    j["indexer_cache_dtypes"] = names_of_mask<FloatType>(d.indexer_cache_dtypes);
  }
  if (d.weights_dtypes != any.weights_dtypes) j["weights_dtypes"] = names_of_mask<FloatType>(d.weights_dtypes);
  if (d.weights_out_dtypes != any.weights_out_dtypes) {
    j["weights_out_dtypes"] = names_of_mask<FloatType>(d.weights_out_dtypes);
  }
  if (d.contiguous != 0) j["contiguous"] = tensors_of_mask(d.contiguous);
  if (d.unit_inner_stride != 0) j["unit_inner_stride"] = tensors_of_mask(d.unit_inner_stride);
  Json dims = Json::object();
  for (int i = 0; i < kDimCount; ++i) {
    const DimRule& r = d.dims[i];
    if (r.any()) continue;
    Json rule = Json::object();
    if (r.min > 0) rule["min"] = r.min;
    if (r.max > 0) rule["max"] = r.max;
    if (!r.values.empty()) rule["values"] = r.values;
    if (r.power_of_two) rule["power_of_two"] = true;
    if (r.multiple_of > 1) rule["multiple_of"] = r.multiple_of;
    dims[name_of(static_cast<Dim>(i))] = rule;
  }
  if (!dims.empty()) j["dims"] = dims;
  if (!d.relations.empty()) {
    j["relations"] = Json::array();
    for (const Relation& r : d.relations) j["relations"].push_back(r.text());
  }
  return j.dump();
}

std::string load_domain_file(const std::string& path, Domain* out) {
  std::string text;
  std::string why = read_file_whole(path, &text);
  if (why.empty()) why = domain_from_json(text, out);
  return why.empty() ? "" : "domain file " + path + ": " + why;
}

}  // namespace qcheck
