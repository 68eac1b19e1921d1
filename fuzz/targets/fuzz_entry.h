// The libFuzzer entry points every target defines or may call. The same
// target source links either with libFuzzer (-fsanitize=fuzzer, clang only)
// or with replay_main.cc, a plain main() that runs the files it is given, so
// corpus files replay in the ordinary g++ build too.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {
// Returns 0, or -1 to tell libFuzzer not to keep the input in the corpus.
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int LLVMFuzzerInitialize(int* argc, char*** argv);
// libFuzzer's own byte mutator (dictionary, comparison traces); absent
// outside libFuzzer, hence weak.
__attribute__((weak)) size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);
}
