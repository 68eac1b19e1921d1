// Sanitizer settings the project needs, compiled into every fuzz target so
// a user (or ClusterFuzz) does not have to know them (TOOLCHAIN.md,
// "Sanitizers and CUDA"). Environment variables still override them.
// Harmless in a build without sanitizers: nothing calls these then.

extern "C" {

// protect_shadow_gap=0: otherwise every cudaMalloc fails under ASan (the
// CUDA driver maps memory in the shadow gap). The rest keeps reports short
// and makes an out-of-memory a clean error rather than a crash in the
// allocator.
const char* __asan_default_options() {
  return "protect_shadow_gap=0:allocator_may_return_null=1:detect_leaks=1:"
         "print_summary=1:strict_string_checks=1";
}

const char* __ubsan_default_options() { return "print_stacktrace=1:halt_on_error=1"; }

// The CUDA driver and runtime keep allocations until process exit; they are
// not the code under test.
const char* __lsan_default_suppressions() {
  return "leak:libcuda\n"
         "leak:libnvidia\n"
         "leak:libcudart\n";
}

}  // extern "C"
