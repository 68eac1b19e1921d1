// Compiled with the reference room's include path only: the oracle depends on
// nothing of ours but the launch arguments, so this include must not compile.
#include "fuzz/case/case.h"
