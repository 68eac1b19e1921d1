// Compiled with the case room's include path only: the verdict is above the
// case model (cmake/rooms.txt), so this include must not compile.
#include "fuzz/verdict/verdict.h"
