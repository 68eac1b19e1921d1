// Compiled with the case room's include path only (CMakeLists.txt): the case
// room may include its own headers, the numerics' and fused_q's oracle's.
#include "fuzz/case/case.h"
#include "numerics/profile.h"
#include "ops/fused_q/oracle/fused_q_oracle.h"
