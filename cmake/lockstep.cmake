# Host builds of CUDA sources for the emulator.
#
# The host compiler needs what no macro can express rewritten (see src/emulator/host_source/host_source.h),
# in every file a kernel comes from, included ones too. So each CUDA file is
# copied through lockstep-hostify into ${PROJECT_BINARY_DIR}/host_sources/,
# mirroring the source tree, and the mirrored directories come first on the
# include path.

function(_lockstep_hostify src out)
  get_filename_component(abs "${src}" ABSOLUTE)
  add_custom_command(
    OUTPUT "${out}"
    COMMAND lockstep-hostify "${abs}" "${out}"
    DEPENDS "${abs}" lockstep-hostify
    VERBATIM)
endfunction()

function(_lockstep_mirror_path src out_var)
  get_filename_component(abs "${src}" ABSOLUTE)
  file(RELATIVE_PATH rel "${PROJECT_SOURCE_DIR}" "${abs}")
  set(${out_var} "${PROJECT_BINARY_DIR}/host_sources/${rel}" PARENT_SCOPE)
endfunction()

# lockstep_host_sources(OUT_VAR a.cu b.cu ...): the translation units, as
# generated .cpp files to add to a target.
function(lockstep_host_sources out_var)
  set(generated)
  foreach(src IN LISTS ARGN)
    _lockstep_mirror_path("${src}" out)
    _lockstep_hostify("${src}" "${out}.cpp")
    list(APPEND generated "${out}.cpp")
  endforeach()
  set(${out_var} ${generated} PARENT_SCOPE)
endfunction()

# lockstep_host_include_directories(TARGET dir ...): lets TARGET's host sources
# #include the .cu/.cuh files of each dir, through their mirrored copies. Each
# dir is mirrored once, by a custom target that every user depends on.
function(lockstep_host_include_directories target)
  foreach(dir IN LISTS ARGN)
    get_filename_component(abs_dir "${dir}" ABSOLUTE)
    _lockstep_mirror_path("${abs_dir}" mirror_dir)
    string(MD5 dir_hash "${abs_dir}")
    set(mirror_target "lockstep_host_mirror_${dir_hash}")
    if(NOT TARGET ${mirror_target})
      file(GLOB cuda_files CONFIGURE_DEPENDS "${abs_dir}/*.cu" "${abs_dir}/*.cuh")
      set(mirrored)
      foreach(src IN LISTS cuda_files)
        _lockstep_mirror_path("${src}" out)
        _lockstep_hostify("${src}" "${out}")
        list(APPEND mirrored "${out}")
      endforeach()
      add_custom_target(${mirror_target} DEPENDS ${mirrored})
    endif()
    add_dependencies(${target} ${mirror_target})
    target_include_directories(${target} BEFORE PRIVATE "${mirror_dir}")
    target_include_directories(${target} PRIVATE "${abs_dir}")
  endforeach()
endfunction()

# Check mode (lockstep/emu/check.h): debug info for source lines, and the
# compiler's calls before every memory access (-fsanitize=thread), after
# every out-of-bounds array index (-fsanitize=bounds) and every access through
# a pointer misaligned for its type (-fsanitize=alignment: float4 loads GCC
# splits into aligned 4-byte loads), which liblockstep answers; volatile
# accesses get calls of their own (racecheck counts them as relaxed atomics). Compile flags only: no sanitizer runtime is linked.
set(LOCKSTEP_CHECK_COMPILE_OPTIONS -g -fsanitize=thread -fsanitize=bounds -fsanitize=alignment --param=tsan-distinguish-volatile=1)

# lockstep_check_sources(OUT_VAR a.cu ...): as lockstep_host_sources, but
# compiled for check mode, for a target run with LOCKSTEP_CHECK=1 (or
# options::checks). The generated files (*.cu.check.cpp) are separate from
# lockstep_host_sources' own, so a source can be in both kinds of target.
function(lockstep_check_sources out_var)
  set(generated)
  foreach(src IN LISTS ARGN)
    _lockstep_mirror_path("${src}" out)
    _lockstep_hostify("${src}" "${out}.check.cpp")
    set_source_files_properties("${out}.check.cpp" PROPERTIES COMPILE_OPTIONS "${LOCKSTEP_CHECK_COMPILE_OPTIONS}")
    list(APPEND generated "${out}.check.cpp")
  endforeach()
  set(${out_var} ${generated} PARENT_SCOPE)
endfunction()
