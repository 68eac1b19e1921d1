# Compiler flags shared by the rooms. Sanitizer and fuzzer flags are scoped to
# C++ sources: nvcc forwards unknown flags to the host compiler (TOOLCHAIN.md).
set(QCHECK_HAVE_FUZZ OFF)
if(QCHECK_FUZZ STREQUAL "ON" OR (QCHECK_FUZZ STREQUAL "AUTO" AND CMAKE_CXX_COMPILER_ID STREQUAL "Clang"))
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "QCHECK_FUZZ=ON needs clang (libFuzzer)")
  endif()
  set(QCHECK_HAVE_FUZZ ON)
endif()

add_library(qcheck_warnings INTERFACE)
target_compile_options(qcheck_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra>)

if(QCHECK_SANITIZE)
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-sanitize-recover=undefined>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-omit-frame-pointer>)
  add_link_options(-fsanitize=address,undefined)
endif()
