# ctest rooms.build_refuses_forbidden_includes: cmake -DBUILD_DIR=... -P build_probes.cmake
# The allowed probe must build and each forbidden one must fail on its include
# (so a probe that fails for another reason does not pass the test).
function(build_probe target out_result out_output)
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${target}
                  RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  set(${out_result} ${result} PARENT_SCOPE)
  set(${out_output} "${output}" PARENT_SCOPE)
endfunction()

build_probe(qcheck_room_probe_allowed result output)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "the allowed probe did not build:\n${output}")
endif()
message(STATUS "allowed: fuzz/case/case.h, numerics/profile.h and ops/fused_q/oracle/fused_q_oracle.h "
               "from the case room build")

foreach(entry case_includes_verdict:fuzz/verdict/verdict.h oracle_includes_harness:fuzz/case/case.h
              kernels_include_harness:fuzz/buffers/tensors.h numerics_include_fused_q:ops/fused_q/args/fused_q_args.h)
  string(REPLACE ":" ";" parts ${entry})
  list(GET parts 0 probe)
  list(GET parts 1 header)
  build_probe(qcheck_room_probe_${probe} result output)
  if(result EQUAL 0)
    message(FATAL_ERROR "${probe}: the forbidden include of ${header} built")
  endif()
  # g++: "fuzz/verdict/verdict.h: No such file or directory"; clang: "'fuzz/verdict/verdict.h' file not found".
  string(REPLACE "." "\\." pattern ${header})
  if(NOT output MATCHES "${pattern}: No such file or directory" AND NOT output MATCHES "'${pattern}' file not found")
    message(FATAL_ERROR "${probe}: the build failed, but not on ${header}:\n${output}")
  endif()
  message(STATUS "refused: ${probe} (${header} not found)")
endforeach()
