# Checks the rows of tools/setup/packages.txt (the one list of dependencies)
# at configure time: a missing header, library or program stops the
# configure with one message naming the Debian package that provides it,
# instead of a compile error deep in the build.
#
#   qcheck_require_compiler(LANG)  before project(): the compiler a preset names
#   qcheck_check_dependencies()    after project(): every row this build needs
set(QCHECK_PACKAGE_LIST ${CMAKE_CURRENT_LIST_DIR}/../tools/setup/packages.txt)

# Rows of the list as "package;needed_for;check;name" strings.
function(qcheck_package_rows out)
  file(STRINGS ${QCHECK_PACKAGE_LIST} lines REGEX "^[^#]")
  set(rows)
  foreach(line ${lines})
    string(REGEX REPLACE "[ \t]+" ";" fields "${line}")
    list(LENGTH fields n)
    if(n EQUAL 4)
      list(JOIN fields "|" row)
      list(APPEND rows "${row}")
    elseif(n GREATER 0)
      message(FATAL_ERROR "qcheck: ${QCHECK_PACKAGE_LIST}: a row needs 4 columns: ${line}")
    endif()
  endforeach()
  set(${out} ${rows} PARENT_SCOPE)
endfunction()

# The four fields of one row of qcheck_package_rows.
macro(qcheck_row_fields row)
  string(REPLACE "|" ";" qcheck_fields "${row}")
  list(GET qcheck_fields 0 package)
  list(GET qcheck_fields 1 needed_for)
  list(GET qcheck_fields 2 check)
  list(GET qcheck_fields 3 name)
endmacro()

function(qcheck_missing what package)
  message(FATAL_ERROR "qcheck: ${what} not found: install the Debian package ${package} "
                      "(./qcheck setup installs every package of tools/setup/packages.txt)")
endfunction()

# The compiler a preset names (g++, clang++-14) must exist before project()
# looks for it, or CMake's own message names no package.
function(qcheck_require_compiler variable)
  if(NOT ${variable} OR IS_ABSOLUTE "${${variable}}")
    return()
  endif()
  find_program(found_compiler NAMES ${${variable}} NO_CACHE)
  if(found_compiler)
    return()
  endif()
  qcheck_package_rows(rows)
  foreach(row ${rows})
    qcheck_row_fields("${row}")
    # clang-14 provides clang++-14; g++ provides gcc too.
    if(check STREQUAL "program" AND ("${${variable}}" STREQUAL name OR
       ("${${variable}}" STREQUAL "gcc" AND name STREQUAL "g++") OR
       ("${${variable}}" STREQUAL "clang-14" AND name STREQUAL "clang++-14")))
      qcheck_missing("the compiler ${${variable}} (${variable})" ${package})
    endif()
  endforeach()
  message(FATAL_ERROR "qcheck: the compiler ${${variable}} (${variable}) was not found")
endfunction()

# The Python package's tests run with Debian's interpreter, where the
# python3-* packages install their modules (a python3 earlier on PATH, such
# as pyenv's, would not see them). Off in the sanitized and fuzz builds,
# which build no libqcheck.
if(QCHECK_SANITIZE OR QCHECK_FUZZ STREQUAL "ON")
  set(qcheck_python_default OFF)
else()
  set(qcheck_python_default ON)
endif()
option(QCHECK_PYTHON_TESTS "Run the Python package's tests (needs python3-numpy and python3-pytest)"
       ${qcheck_python_default})
set(QCHECK_PYTHON3 /usr/bin/python3 CACHE FILEPATH "The Python interpreter of the Python package's tests")

function(qcheck_check_dependencies)
  qcheck_package_rows(rows)
  foreach(row ${rows})
    qcheck_row_fields("${row}")
    if(needed_for STREQUAL "fuzz" AND NOT QCHECK_HAVE_FUZZ)
      continue()
    endif()
    if(needed_for STREQUAL "python" AND NOT QCHECK_PYTHON_TESTS)
      continue()
    endif()
    string(MAKE_C_IDENTIFIER "QCHECK_DEP_${name}" var)
    if(check STREQUAL "header")
      find_path(${var} NAMES ${name})
      if(NOT ${var})
        qcheck_missing("the header <${name}>" ${package})
      endif()
    elseif(check STREQUAL "program" AND name STREQUAL "python3")
      if(NOT EXISTS "${QCHECK_PYTHON3}")
        qcheck_missing("the program ${QCHECK_PYTHON3}" ${package})
      endif()
    elseif(check STREQUAL "program")
      find_program(${var} NAMES ${name})
      if(NOT ${var})
        qcheck_missing("the program ${name}" ${package})
      endif()
    elseif(check STREQUAL "python-module")
      execute_process(COMMAND ${QCHECK_PYTHON3} -c "import ${name}" RESULT_VARIABLE missing_module
                      OUTPUT_QUIET ERROR_QUIET)
      if(missing_module)
        qcheck_missing("the Python module ${name} (for ${QCHECK_PYTHON3})" ${package})
      endif()
    elseif(check STREQUAL "clang-runtime")
      # libFuzzer and the sanitizer runtimes live in clang's resource folder.
      execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-resource-dir
                      OUTPUT_VARIABLE resource_dir OUTPUT_STRIP_TRAILING_WHITESPACE)
      if(NOT EXISTS "${resource_dir}/lib/linux/${name}")
        qcheck_missing("${resource_dir}/lib/linux/${name}" ${package})
      endif()
    else()
      message(FATAL_ERROR "qcheck: ${QCHECK_PACKAGE_LIST}: unknown check '${check}' for ${package}")
    endif()
  endforeach()
endfunction()
