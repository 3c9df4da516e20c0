# lockstep_find_libclang(<var>): the libclang wheel (PyPI's `libclang`) that
# this build's Python has, or "" (its one home of the lookup:
# python/lockstep/_libclang.py). The region-loop compiler loads libclang only
# at run time (src/emulator/compile_time/region_loops/libclang.cpp); what this
# finds is said here, so that a build whose kernels would run on fibers says
# so, and the build records the path to try after LOCKSTEP_LIBCLANG (src/CMakeLists.txt).
function(lockstep_find_libclang out)
  set(wheel "")
  find_package(Python3 COMPONENTS Interpreter QUIET)
  if(Python3_Interpreter_FOUND)
    execute_process(COMMAND "${Python3_EXECUTABLE}" "${PROJECT_SOURCE_DIR}/python/lockstep/_libclang.py"
                    OUTPUT_VARIABLE wheel OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  endif()
  # Only to say whether a run here would find one: the order of the search
  # is the loader's.
  find_library(LOCKSTEP_SYSTEM_LIBCLANG NAMES libclang.so libclang.so.1 libclang-19.so.1 libclang-18.so.1 libclang-17.so.1 libclang-16.so.1
                                              libclang-15.so.1 libclang-14.so.1)
  if(wheel)
    message(STATUS "libclang for region loops: ${wheel} (the libclang wheel; LOCKSTEP_LIBCLANG overrides it at run time)")
  elseif(DEFINED ENV{LOCKSTEP_LIBCLANG})
    message(STATUS "libclang for region loops: LOCKSTEP_LIBCLANG=$ENV{LOCKSTEP_LIBCLANG}")
  elseif(LOCKSTEP_SYSTEM_LIBCLANG)
    message(STATUS "libclang for region loops: the system's, ${LOCKSTEP_SYSTEM_LIBCLANG}")
  else()
    message(WARNING "No libclang found (no libclang wheel for ${Python3_EXECUTABLE}, none in the system, LOCKSTEP_LIBCLANG unset): "
                    "kernels with barriers will run on fibers, many times slower than as region loops, until one is there at run time. "
                    "Fix: pip install libclang, or set LOCKSTEP_LIBCLANG to a libclang.so.")
  endif()
  set(${out} "${wheel}" PARENT_SCOPE)
endfunction()
