#include "fuzz/minimize/minimize_report.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "fuzz/case/case_binary.h"
#include "fuzz/case/case_json.h"
#include "fuzz/case/tensor_plan.h"
#include "fuzz/verdict/compare.h"
#include "fuzz/verdict/report.h"

namespace qcheck {
namespace {

std::string hex_bits(uint64_t bits, int digits) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%0*llX", digits, static_cast<unsigned long long>(bits));
  return text;
}

std::string range(int64_t first, int64_t count, const char* what) {
  if (count == -1 && first == 0) return std::string("every ") + what;
  const std::string last = count == -1 ? "end" : std::to_string(first + count - 1);
  return count == 1 ? std::string(what) + " " + std::to_string(first)
                    : std::string(what) + "s " + std::to_string(first) + ".." + last;
}

}  // namespace

std::string describe_edits(const Case& c) {
  const TensorPlan plan = plan_tensors(c);
  std::ostringstream s;
  for (const ValueEdit& e : c.edits) {
    const TensorGeometry* g = plan.find(e.tensor);
    if (g == nullptr) continue;
    const bool single = e.rows == 1 && e.head >= 0 && e.elements == 1;
    const bool position = g->type == ElementType::kInt64;
    const std::string value = position ? std::to_string(e.bits)
                                       : value_text(g->type, static_cast<uint32_t>(e.bits)) + " (" +
                                             hex_bits(e.bits, g->type == ElementType::kBf16 ? 4 : 8) + ")";
    s << "  " << name_of(e.tensor);
    if (single) {
      s << "[" << e.row << ", " << e.head << ", " << e.element << "] = " << value << "\n";
    } else if (e.row == 0 && e.rows == -1 && e.head == -1 && e.element == 0 && e.elements == -1) {
      s << ": every element " << value << "\n";
    } else {
      s << ": " << range(e.row, e.rows, "row") << ", " << (e.head == -1 ? "every head" : "head " + std::to_string(e.head))
        << ", " << range(e.element, e.elements, "element") << ": " << value << "\n";
    }
  }
  return s.str();
}

std::string rule_involved(const Signature& signature, ElementType type) {
  const bool quantized = signature.tensor == "index_q_fp8" || type == ElementType::kE4m3;
  switch (signature.mismatch) {
    case MismatchClass::kSentinelOverwritten:
      return "a write outside the tensor (no profile rule: a missing tail guard or a wrong index or stride)";
    case MismatchClass::kPaddingOverwritten:
      return "a write into a view's padding (no profile rule: a stride assumed contiguous)";
    case MismatchClass::kInputModified:
      return "a write into an input (no profile rule: an output pointer or the alias taken wrong)";
    case MismatchClass::kWrittenWhenDisabled:
      return "indexer outputs written without an indexer (no profile rule: has_indexer ignored)";
    case MismatchClass::kUnwritten:
      return "elements never written (no profile rule: grid coverage, a tail, a skipped copy)";
    case MismatchClass::kNondeterministic: return "two runs wrote different bits (a race; no profile rule)";
    case MismatchClass::kGraphReplayDiffers:
      return "the launch replayed from a CUDA graph wrote other bits than the eager launch (no profile rule: "
             "state kept across launches, a host value baked into the capture, a stream assumed)";
    case MismatchClass::kRowPowerOfTwo:
      return "the UE8M0 scale of the row (Profile::scale_ceiling: exact bit ceiling or log2f; "
             "Profile::scale_floor: 1e-4 on amax or on the scale)";
    case MismatchClass::kNanBits:
      return quantized ? "the e4m3 NaN code (Profile::e4m3_overflow)"
                       : "NaN bits (Profile::bf16_nan for bf16, Profile::f32_nan for f32)";
    case MismatchClass::kNanLost:
    case MismatchClass::kSpuriousNan:
      return quantized ? "e4m3 saturation (Profile::e4m3_overflow: satfinite or NaN) or a NaN lost in amax"
                       : "NaN propagation (amax ignoring NaN, Profile::f32_nan)";
    case MismatchClass::kSignOfZero: return "the sign of zero (FTZ of subnormals, or a contraction pattern)";
    case MismatchClass::kOffByOne:
      if (signature.tensor == "index_weights_out") {
        return "the weight's roundings (Profile::weights_order; bf16 round to nearest even)";
      }
      return quantized ? "one rounding: the RoPE contraction (Profile::indexer, mqa_fp8_r1/r2), the MQA division "
                         "(Profile::mqa_division) or e4m3 round to nearest even"
                       : "one rounding: bf16 round to nearest even or the RoPE contraction "
                         "(Profile::mqa_bf16_r1/r2)";
    case MismatchClass::kWrongValue:
      return "a wrong value (a wrong formula, a RoPE style or pair, a cache row, a weight order)";
  }
  return "?";
}

std::string what_differs(const Verdict& v) {
  std::ostringstream s;
  s << "verdict: backend " << v.backend << ", profile " << v.profile << "\n";
  if (v.outcome.is_ok()) {
    s << report_text(v.report);
    int64_t worst = 0;
    ElementType worst_type = ElementType::kE4m3;
    for (const Mismatch& m : v.report.first) {
      if (m.byte_offset >= 0) continue;
      const int64_t d = code_distance(m.type, m.expected_bits, m.got_bits);
      if (d > worst) {
        worst = d;
        worst_type = m.type;
      }
    }
    if (worst > 0) s << "worst distance among the listed elements: " << worst << " ULP (" << name_of(worst_type) << ")\n";
    const Signature primary = v.report.primary_signature();
    ElementType type = ElementType::kE4m3;
    for (const Mismatch& m : v.report.first) {
      if (m.signature == primary) {
        type = m.type;
        break;
      }
    }
    s << "rule involved: " << rule_involved(primary, type) << "\n";
  } else {
    s << name_of(v.outcome.kind) << ": " << v.outcome.reason << "\n";
  }
  return s.str();
}

std::string minimize_report(const MinimizeResult& r, const std::string& backend, const std::string& differs,
                            const std::string& replay_command) {
  std::ostringstream s;
  s << "qcheck-minimize: backend " << backend << "\n";
  s << "failure kept by every step: " << r.target.text();
  if (r.target != r.original_failure) s << " (moved from " << r.original_failure.failure << ")";
  s << "\n\n";
  s << "original:  " << describe(r.original) << "\n";
  s << "minimized: " << describe(r.minimized) << "\n";
  const std::string edits = describe_edits(r.minimized);
  if (!edits.empty()) s << "input values (edits over the generated values):\n" << edits;
  s << "\n== what differs\n" << differs;
  if (!r.explain.empty()) {
    s << "\n== which fields matter (each changed alone)\n";
    for (const FieldEffect& e : r.explain) {
      s << (e.matters ? "  matters:         " : "  does not matter: ") << e.change << " -> " << e.observed.text()
        << "\n";
    }
  }
  s << "\n== how\n";
  for (const std::string& step : r.steps) s << "  " << step << "\n";
  char stats[256];
  std::snprintf(stats, sizeof stats,
                "%zu steps kept of %d tried; %d verdicts (oracle calls); %.2f s%s\n"
                "elements %lld -> %lld (%.1fx smaller)\n",
                r.steps.size(), r.candidates, r.evaluations, r.seconds,
                r.budget_exhausted ? " (the budget ended before the fixpoint or before every field was explained)" : "",
                static_cast<long long>(r.elements_before), static_cast<long long>(r.elements_after),
                r.elements_after > 0 ? double(r.elements_before) / double(r.elements_after) : 0.0);
  s << stats;
  s << "\nreplay: " << replay_command << "\n";
  return s.str();
}

std::string regression_test_source(const MinimizeResult& r, const std::string& backend, const std::string& profile) {
  std::string name = "Case" + case_digest(r.minimized);
  std::ostringstream s;
  s << "// Regression test written by qcheck-minimize. The case failed on backend " << backend << " with\n"
    << "// " << r.target.text() << ";\n"
    << "// it must pass once the bug is fixed. Paste it into a test file linked with qcheck_harness\n"
    << "// and GTest::gtest_main.\n"
    << "//   " << describe(r.minimized) << "\n"
    << "#include <gtest/gtest.h>\n\n"
    << "#include \"fuzz/backends/backend.h\"\n#include \"fuzz/case/case_json.h\"\n#include \"fuzz/verdict/verdict.h\"\n\n"
    << "TEST(Regression, " << name << ") {\n"
    << "  const char* const kCase = R\"json(" << case_to_json(r.minimized) << ")json\";\n"
    << "  qcheck::Case c;\n"
    << "  ASSERT_EQ(qcheck::case_from_json(kCase, &c), \"\");\n"
    << "  const qcheck::Backend* backend = qcheck::find_backend(\"" << backend << "\");\n"
    << "  ASSERT_NE(backend, nullptr);\n"
    << "  const std::string unavailable = backend->domain(c);\n"
    << "  if (!unavailable.empty()) GTEST_SKIP() << unavailable;\n"
    << "  qcheck::VerdictOptions options;\n"
    << (profile.empty() ? "" : "  options.profile = \"" + profile + "\";\n")
    << "  const qcheck::Verdict v = qcheck::run_verdict(c, *backend, options);\n"
    << "  EXPECT_TRUE(v.passed()) << qcheck::verdict_text(v, c);\n"
    << "}\n";
  return s.str();
}

std::string regression_pytest_source(const MinimizeResult& r, const std::string& adapter, const std::string& profile,
                                     const std::string& device) {
  const size_t colon = adapter.find(':');
  const std::string module = adapter.substr(0, colon), function = colon == std::string::npos ? "" : adapter.substr(colon + 1);
  std::ostringstream s;
  s << "# Regression test written by qcheck.minimize. The case failed on " << adapter << " with\n"
    << "# " << r.target.text() << ";\n"
    << "# it must pass once the bug is fixed.\n"
    << "#   " << describe(r.minimized) << "\n"
    << "import qcheck\n"
    << "from " << module << " import " << function.substr(0, function.find('.')) << "\n\n"
    << "CASE = r'''" << case_to_json(r.minimized) << "'''\n\n\n"
    << "def test_regression_" << case_digest(r.minimized) << "():\n"
    << "    case = qcheck.Case.from_json(CASE)\n"
    << "    qcheck.assert_passes(case, " << function << (device.empty() ? "" : ", device=\"" + device + "\"")
    << (profile.empty() ? "" : ", profile=\"" + profile + "\"") << ")\n";
  return s.str();
}

}  // namespace qcheck
