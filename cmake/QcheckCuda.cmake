# Decides QCHECK_HAVE_CUDA from QCHECK_CUDA (ON/OFF/AUTO) and sets up nvcc.
# Traps (TOOLCHAIN.md): CUDA 17 is required by CCCL headers, and the default
# architecture (75) is wrong for the H200: build sm_90 code plus PTX.
include(CheckLanguage)
set(QCHECK_HAVE_CUDA OFF)
if(NOT QCHECK_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES "90-real;90-virtual")
    endif()
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(QCHECK_HAVE_CUDA ON)
  elseif(QCHECK_CUDA STREQUAL "ON")
    message(FATAL_ERROR "QCHECK_CUDA=ON but no CUDA compiler was found")
  endif()
endif()

# The CUDA headers alone (cuda_bf16.h, cuda_fp8.h) serve the host-side
# cross-check of the oracle even when no kernel is built.
find_path(QCHECK_CUDA_INCLUDE_DIR cuda_fp8.h HINTS /usr/local/cuda/include ${CUDAToolkit_INCLUDE_DIRS})
