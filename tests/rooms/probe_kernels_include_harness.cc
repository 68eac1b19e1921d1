// Compiled with fused_q's kernels room's include path only: the kernels never
// include the harness, so this include must not compile.
#include "fuzz/buffers/tensors.h"
