// Compiled with the case room's include path only (CMakeLists.txt): the case
// room may include its own headers and the reference room's.
#include "fuzz/case/case.h"
#include "reference/profile.h"
