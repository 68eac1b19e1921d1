// fused_q's vocabulary (ops/fused_q/op.h) against the code it describes: every
// tensor a plan has is listed with its role and element type, every part the
// reports name is listed, the fields are the case's in order with defaults
// that decode back to the default case, and the registry finds the ops.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "fuzz/case/case_json.h"
#include "fuzz/case/tensor_plan.h"
#include "fuzz/domain/domain_json.h"
#include "fuzz/verdict/known.h"
#include "fuzz/verdict/compare.h"
#include "ops/fused_q/op.h"
#include "ops/registry/registry.h"
#include "tests/harness/case_samples.h"

namespace qcheck {
namespace {

const TensorMeta* listed(const Vocabulary& v, const std::string& name) {
  for (const TensorMeta& t : v.tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

bool contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

TEST(OpVocabulary, EveryPlannedTensorAndEveryReportedPartIsListed) {
  const Vocabulary& v = fused_q_op().vocabulary();
  std::set<std::string> tensors_seen, parts_seen;
  std::vector<Case> cases;
  for (const test::NamedCase& n : test::covering_grid()) cases.push_back(n.c);
  for (uint64_t i = 0; i < 300; ++i) cases.push_back(test::sample_case(i));
  for (const Case& c : cases) {
    for (const TensorGeometry& g : plan_tensors(c).tensors) {
      const std::string name = name_of(g.id);
      const TensorMeta* t = listed(v, name);
      ASSERT_NE(t, nullptr) << name;
      EXPECT_EQ(t->role, g.role == TensorRole::kInput ? "input" : "output") << name;
      EXPECT_TRUE(contains(t->dtypes, name_of(g.type))) << name << " " << name_of(g.type);
      tensors_seen.insert(name);
      if (g.role == TensorRole::kInput) continue;
      for (int64_t d = 0; d < g.width; ++d) {
        const std::string part = part_of(c, g.id, d);
        EXPECT_TRUE(contains(v.parts, part)) << name << " dim " << d << ": " << part;
        parts_seen.insert(part);
      }
    }
  }
  // Nothing listed that no plan has, and the parts that outputs have all met.
  EXPECT_EQ(tensors_seen.size(), v.tensors.size());
  for (const char* part : {"nope front", "rope tail", "rope", "rope part", "pass-through part", "weights"}) {
    EXPECT_EQ(parts_seen.count(part), 1u) << part;
  }
}

TEST(OpVocabulary, TheFieldsAreTheCasesWithDefaultsThatDecodeToTheDefaultCase) {
  const Vocabulary& v = fused_q_op().vocabulary();
  const nlohmann::ordered_json written = nlohmann::ordered_json::parse(case_to_json(Case{}));
  std::vector<std::string> names;
  nlohmann::ordered_json defaults = nlohmann::ordered_json::object();
  for (const FieldMeta& f : v.fields) {
    names.push_back(f.name);
    if (f.kind != FieldKind::kEdits) defaults[f.name] = nlohmann::ordered_json::parse(f.default_json);
    if (f.kind == FieldKind::kEnumeration) {
      EXPECT_TRUE(contains(f.choices, defaults[f.name].get<std::string>())) << f.name;
    }
  }
  std::vector<std::string> json_names;
  for (auto it = written.begin(); it != written.end(); ++it) json_names.push_back(it.key());
  json_names.push_back("edits");  // (left out of the JSON form when empty)
  EXPECT_EQ(names, json_names);
  Case decoded;
  ASSERT_EQ(case_from_json(defaults.dump(), &decoded), "");
  EXPECT_EQ(case_to_json(decoded), case_to_json(Case{}));
}

TEST(OpVocabulary, TheRegistryFindsFusedQThenFusedKAndNothingElse) {
  ASSERT_EQ(all_ops().size(), 2u);
  EXPECT_EQ(find_op("fused_q"), &fused_q_op());
  EXPECT_EQ(find_op("fused_k"), all_ops()[1]);
  EXPECT_EQ(find_op("index_k"), nullptr);
  EXPECT_EQ(op_names(), "fused_q, fused_k");
  const nlohmann::json j = nlohmann::json::parse(vocabulary_json(fused_q_op()));
  EXPECT_EQ(j["op"], "fused_q");
  EXPECT_EQ(j["schema"], 1);
  EXPECT_EQ(j["fields"].size(), fused_q_op().vocabulary().fields.size());
  EXPECT_EQ(j["fields"][6]["choices"], nlohmann::json::array({"fp8-packed", "bf16-packed", "bf16-separate"}));
}

TEST(OpVocabulary, AJsonCaseMayNameItsOpAndSchema) {
  Case plain, named;
  const std::string base = case_to_json(test::small_case());
  ASSERT_EQ(case_from_json(base, &plain), "");
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(base);
  j["op"] = "fused_q";
  j["schema"] = 1;
  ASSERT_EQ(case_from_json(j.dump(), &named), "");
  EXPECT_EQ(case_to_json(named), case_to_json(plain));
  j["op"] = "index_k";
  EXPECT_NE(case_from_json(j.dump(), &named).find("field op = \"index_k\" is not \"fused_q\""), std::string::npos);
  j["op"] = "fused_q";
  j["schema"] = 2;
  EXPECT_NE(case_from_json(j.dump(), &named).find("field schema = 2 is not 1"), std::string::npos);
}

TEST(OpVocabulary, ADomainAndAKnownEntryMayNameTheirOp) {
  Domain domain;
  ASSERT_EQ(domain_from_json(R"({"op": "fused_q", "query_paths": ["fp8-packed"]})", &domain), "");
  EXPECT_EQ(domain_to_json(domain), R"({"query_paths":["fp8-packed"]})");
  EXPECT_EQ(domain_from_json(R"({"op": "index_k"})", &domain),
            "domain: op = \"index_k\" is not \"fused_q\", the op this build's cases hold (python -m qcheck ops "
            "lists the ops)");
  std::vector<KnownBug> known;
  ASSERT_EQ(known_bugs_from_json(R"({"known": [{"signature": "query_out/*", "op": "fused_q"}]})", &known), "");
  ASSERT_EQ(known.size(), 1u);
  EXPECT_EQ(known[0].signature, "query_out/*");
  EXPECT_NE(known_bugs_from_json(R"({"known": [{"signature": "query_out/*", "op": 3}]})", &known)
                .find("known bugs: known[0].op = 3 is not \"fused_q\""),
            std::string::npos);
}

}  // namespace
}  // namespace qcheck
