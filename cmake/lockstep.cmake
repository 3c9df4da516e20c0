# lockstep_host_sources(OUT_VAR a.cu b.cu ...)
# Generates, for each CUDA source, the file the host compiler builds for the
# emulator (see src/emulator/host_source.h) and returns their paths. Add the
# sources' own directory to the include path of the target that compiles them,
# since the generated files live in the build tree.
function(lockstep_host_sources out_var)
  set(generated)
  foreach(src IN LISTS ARGN)
    get_filename_component(abs "${src}" ABSOLUTE)
    file(RELATIVE_PATH rel "${PROJECT_SOURCE_DIR}" "${abs}")
    set(out "${PROJECT_BINARY_DIR}/host_sources/${rel}.cpp")
    add_custom_command(
      OUTPUT "${out}"
      COMMAND lockstep-hostify "${abs}" "${out}"
      DEPENDS "${abs}" lockstep-hostify
      COMMENT "lockstep-hostify ${rel}"
      VERBATIM)
    list(APPEND generated "${out}")
  endforeach()
  set(${out_var} ${generated} PARENT_SCOPE)
endfunction()
