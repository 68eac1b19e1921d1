# What the wheel carries (pyproject.toml builds with QCHECK_WHEEL=ON through
# scikit-build-core): libqcheck next to the package's modules, where
# qcheck/model/_capi.py looks first, and the command-line tools in qcheck/bin,
# which the console scripts of qcheck/_tools.py run. auditwheel then grafts
# the shared libraries they need beyond the base system (libhwy) into the
# wheel and points their RPATH at them.
option(QCHECK_WHEEL "install libqcheck and the tools as the wheel lays them out" OFF)
if(NOT QCHECK_WHEEL)
  return()
endif()
install(TARGETS qcheck LIBRARY DESTINATION qcheck COMPONENT wheel)
install(TARGETS qcheck-replay qcheck-minimize qcheck-case qcheck-check RUNTIME DESTINATION qcheck/bin COMPONENT wheel)
