// Compiled with fused_q's oracle room's include path only: the oracle depends
// on nothing of ours but the numerics and its launch arguments, so this
// include must not compile.
#include "fuzz/case/case.h"
