// The narrow-float conversions of numerics/ (e4m3fnuz.h, e2m1.h) over arrays,
// with C linkage, so that sweep.py (beside this file) can load them through
// ctypes and compare them with ml_dtypes. Test-only: nothing installs or
// ships this library. A rule is passed as its enum's integer; the names
// (name_of in numerics/types.h) let the script check that its integers mean
// what it thinks they mean.
#include <cstddef>
#include <cstdint>

#include "numerics/e2m1.h"
#include "numerics/e4m3fnuz.h"
#include "numerics/types.h"

extern "C" {

// Bumped when a signature below changes; sweep.py refuses another version.
int qcheck_narrow_abi_version() { return 1; }

// The name of rule `rule`, or nullptr past the last rule.
const char* qcheck_narrow_e4m3fnuz_rule_name(int rule) {
  if (rule < 0 || rule > static_cast<int>(qcheck::E4m3FnuzOverflow::kNan)) return nullptr;
  return qcheck::name_of(static_cast<qcheck::E4m3FnuzOverflow>(rule));
}
const char* qcheck_narrow_e2m1_rule_name(int rule) {
  if (rule < 0 || rule > static_cast<int>(qcheck::E2m1Rounding::kSglangThresholds)) return nullptr;
  return qcheck::name_of(static_cast<qcheck::E2m1Rounding>(rule));
}

void qcheck_narrow_e4m3fnuz_from_f32(const float* in, uint8_t* out, size_t count, int rule) {
  const auto overflow = static_cast<qcheck::E4m3FnuzOverflow>(rule);
  for (size_t i = 0; i < count; ++i) out[i] = qcheck::spec::e4m3fnuz_from_f32(in[i], overflow);
}

void qcheck_narrow_f32_from_e4m3fnuz(const uint8_t* in, float* out, size_t count) {
  for (size_t i = 0; i < count; ++i) out[i] = qcheck::spec::f32_from_e4m3fnuz(in[i]);
}

void qcheck_narrow_e2m1_from_f32(const float* in, uint8_t* out, size_t count, int rule) {
  const auto rounding = static_cast<qcheck::E2m1Rounding>(rule);
  for (size_t i = 0; i < count; ++i) out[i] = qcheck::spec::e2m1_from_f32(in[i], rounding);
}

void qcheck_narrow_f32_from_e2m1(const uint8_t* in, float* out, size_t count) {
  for (size_t i = 0; i < count; ++i) out[i] = qcheck::spec::f32_from_e2m1(in[i]);
}

// bytes[k] = codes[2k] in the low nibble, codes[2k + 1] in the high one.
void qcheck_narrow_pack_e2m1_pairs(const uint8_t* codes, uint8_t* bytes, size_t pairs) {
  for (size_t k = 0; k < pairs; ++k) bytes[k] = qcheck::spec::pack_e2m1_pair(codes[2 * k], codes[2 * k + 1]);
}

}  // extern "C"
