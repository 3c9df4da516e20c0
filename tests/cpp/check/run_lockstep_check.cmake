# cmake -DTOOL=lockstep-nvcc -DFILE=planted_main.cu -DVARIANT=bug|fixed -P run_lockstep_check.cmake
# The planted off-by-one guard: with the bug, lockstep check must exit non-zero
# naming memcheck and the marked line; fixed, it must exit 0 with no findings.
if(VARIANT STREQUAL "bug")
  execute_process(COMMAND "${TOOL}" check "${FILE}" off_by_one_guard RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(status EQUAL 0)
    message(FATAL_ERROR "lockstep check passed a planted bug:\n${out}")
  endif()
  if(NOT out MATCHES "memcheck at [^\n]*planted_kernels.cuh:[0-9]+")
    message(FATAL_ERROR "lockstep check did not name memcheck and the line:\n${out}")
  endif()
else()
  execute_process(COMMAND "${TOOL}" check "${FILE}" off_by_one_guard fixed RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT status EQUAL 0 OR NOT out MATCHES "no findings")
    message(FATAL_ERROR "lockstep check failed the correct twin (status ${status}):\n${out}")
  endif()
endif()
