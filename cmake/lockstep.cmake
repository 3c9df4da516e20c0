# Host builds of CUDA sources for the emulator.
#
# The host compiler needs what no macro can express rewritten (see src/emulator/compile_time/host_source/host_source.h),
# in every file a kernel comes from, included ones too. So each CUDA file is
# copied through lockstep-hostify into ${PROJECT_BINARY_DIR}/host_sources/,
# mirroring the source tree, and the mirrored directories come first on the
# include path.

# What every host build of kernels is compiled with (the JIT and lockstep nvcc
# take toolchain::kernel_code_flags, the same, and say why): null pointers
# dereferenced fault instead of being deleted by GCC with the code around
# them; a * b + c is never contracted into an FMA.
set(LOCKSTEP_KERNEL_COMPILE_OPTIONS -fno-delete-null-pointer-checks -ffp-contract=off -DLOCKSTEP_FP_CONTRACT_OFF)
# Kernels built for the CPU that builds them, as the JIT builds its modules
# (toolchain::find_native_target) and PoCL its kernels: the region loops
# vectorise across threads with that CPU's widest vectors. OFF for a build
# that is to run on other machines (a wheel).
option(LOCKSTEP_NATIVE_KERNELS "Build the emulator's kernels with -march=native" ON)
if(LOCKSTEP_NATIVE_KERNELS)
  include(CheckCXXCompilerFlag)
  check_cxx_compiler_flag(-march=native LOCKSTEP_COMPILER_TAKES_MARCH_NATIVE)
  if(LOCKSTEP_COMPILER_TAKES_MARCH_NATIVE)
    list(APPEND LOCKSTEP_KERNEL_COMPILE_OPTIONS -march=native)
  endif()
  # As toolchain::find_native_target: 512-bit vectors where the CPU has them.
  check_cxx_compiler_flag(-mprefer-vector-width=512 LOCKSTEP_COMPILER_TAKES_VECTOR_WIDTH)
  if(LOCKSTEP_COMPILER_TAKES_VECTOR_WIDTH)
    list(APPEND LOCKSTEP_KERNEL_COMPILE_OPTIONS -mprefer-vector-width=512)
  endif()
endif()

# Kernels with barriers are split into region loops (src/emulator/compile_time/region_loops)
# unless the file is built for check mode (CHECKED), which runs on fibers.
function(_lockstep_hostify src out)
  get_filename_component(abs "${src}" ABSOLUTE)
  get_filename_component(dir "${abs}" DIRECTORY)
  set(split --split-barriers -std=c++20 "-I${dir}" "-I${PROJECT_SOURCE_DIR}/include" "-I${PROJECT_SOURCE_DIR}/kernels" --)
  if(ARGV2 STREQUAL "CHECKED")
    set(split)
  endif()
  add_custom_command(
    OUTPUT "${out}"
    COMMAND lockstep-hostify ${split} "${abs}" "${out}"
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
    set_source_files_properties("${out}.cpp" PROPERTIES COMPILE_OPTIONS "${LOCKSTEP_KERNEL_COMPILE_OPTIONS}")
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
set(LOCKSTEP_CHECK_COMPILE_OPTIONS ${LOCKSTEP_KERNEL_COMPILE_OPTIONS} -g -fsanitize=thread -fsanitize=bounds -fsanitize=alignment --param=tsan-distinguish-volatile=1)

# lockstep_check_sources(OUT_VAR a.cu ...): as lockstep_host_sources, but
# compiled for check mode, for a target run with LOCKSTEP_CHECK=1 (or
# options::checks). The generated files (*.cu.check.cpp) are separate from
# lockstep_host_sources' own, so a source can be in both kinds of target.
function(lockstep_check_sources out_var)
  set(generated)
  foreach(src IN LISTS ARGN)
    _lockstep_mirror_path("${src}" out)
    _lockstep_hostify("${src}" "${out}.check.cpp" CHECKED)
    set_source_files_properties("${out}.check.cpp" PROPERTIES COMPILE_OPTIONS "${LOCKSTEP_CHECK_COMPILE_OPTIONS}")
    list(APPEND generated "${out}.check.cpp")
  endforeach()
  set(${out_var} ${generated} PARENT_SCOPE)
endfunction()

# Whole CUDA programs through lockstep's compiler driver (`lockstep nvcc`,
# tools/lockstep_nvcc.cpp): every .cu is preprocessed with lockstep's CUDA
# headers first, rewritten (launches, dynamic shared memory) and compiled for
# the emulator; files included from it need no listing, macros that expand to
# launches are seen, and the target needs no CUDA language (no nvcc).
#
# lockstep_cuda_sources(TARGET a.cu ...): adds the .cu files, compiled by the
# driver with TARGET's include directories, definitions and compile options
# (transitively, as for its C++ files), to TARGET, and links it to liblockstep.
function(lockstep_cuda_sources target)
  set(include_dirs "$<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>")
  set(definitions "$<TARGET_PROPERTY:${target},COMPILE_DEFINITIONS>")
  set(options "$<TARGET_PROPERTY:${target},COMPILE_OPTIONS>")
  foreach(src IN LISTS ARGN)
    get_filename_component(abs "${src}" ABSOLUTE)
    file(RELATIVE_PATH rel "${CMAKE_CURRENT_SOURCE_DIR}" "${abs}")
    string(REPLACE "../" "up/" rel "${rel}")
    set(object "${CMAKE_CURRENT_BINARY_DIR}/lockstep_cuda/${target}/${rel}.o")
    add_custom_command(
      OUTPUT "${object}"
      COMMAND lockstep-nvcc -c "${abs}" -o "${object}" -MD -MF "${object}.d" -MT "${object}"
              "$<$<BOOL:${include_dirs}>:-I$<JOIN:${include_dirs},;-I>>" "$<$<BOOL:${definitions}>:-D$<JOIN:${definitions},;-D>>"
              "$<$<BOOL:${options}>:-Xcompiler=$<JOIN:${options},,>>"
      DEPENDS "${abs}" lockstep-nvcc
      DEPFILE "${object}.d"
      COMMENT "lockstep nvcc ${rel}"
      COMMAND_EXPAND_LISTS VERBATIM)
    target_sources(${target} PRIVATE "${object}")
  endforeach()
  target_link_libraries(${target} PRIVATE lockstep::lockstep)
  set_property(TARGET ${target} PROPERTY LINKER_LANGUAGE CXX)  # also when it has no C++ file of its own
endfunction()

# lockstep_cuda_target(TARGET ...): builds each existing TARGET's .cu sources
# through the driver instead of nvcc (an existing project's targets, unchanged
# but for this call); link a target that uses cuBLAS to lockstep::cublas, one that uses NCCL to
# lockstep::nccl.
function(lockstep_cuda_target)
  foreach(target IN LISTS ARGN)
    get_target_property(sources ${target} SOURCES)
    get_target_property(source_dir ${target} SOURCE_DIR)
    set(cuda_sources)
    foreach(src IN LISTS sources)
      if(src MATCHES "\\.cu$")
        get_filename_component(abs "${src}" ABSOLUTE BASE_DIR "${source_dir}")
        set_source_files_properties("${src}" TARGET_DIRECTORY ${target} PROPERTIES HEADER_FILE_ONLY ON)
        list(APPEND cuda_sources "${abs}")
      endif()
    endforeach()
    lockstep_cuda_sources(${target} ${cuda_sources})
  endforeach()
endfunction()
