// Compiled with the numerics room's include path only: the family's numerics
// use nothing of any op, so this include of fused_q's launch arguments must
// not compile.
#include "ops/fused_q/args/fused_q_args.h"
