# liblockstep, the Python extension and every kernel module must share one
# C++ runtime: exceptions and iostreams cross between them. A compiler that
# links libstdc++ statically (a toolchain configured that way, seen on a GPU
# image's /opt/gcc) gives each its own copy, and the program crashes at the
# first exception or formatted number. Refuse such a compiler at configure
# time, by looking for the C++ runtime's name among a probe program's
# dynamic dependencies.
function(lockstep_require_shared_cxx_runtime)
  set(dir "${CMAKE_BINARY_DIR}/CMakeFiles/lockstep_cxx_runtime_probe")
  file(WRITE "${dir}/probe.cpp" "#include <string>\nint main(int argc, char**) { return static_cast<int>(std::to_string(argc).size()) - 1; }\n")
  try_compile(probe_built "${dir}/build" SOURCES "${dir}/probe.cpp" COPY_FILE "${dir}/probe")
  if(NOT probe_built)
    return()  # the compiler checks of project() will say what is wrong
  endif()
  file(STRINGS "${dir}/probe" runtime_names REGEX "lib(stdc|c)\\+\\+\\.so")
  if(NOT runtime_names)
    message(FATAL_ERROR "${CMAKE_CXX_COMPILER} links the C++ runtime statically, so liblockstep, the Python "
                        "extension and kernel modules would each carry their own copy and crash when an "
                        "exception crosses between them. Use a compiler that links libstdc++ dynamically, "
                        "e.g. CXX=/usr/bin/g++ CC=/usr/bin/gcc.")
  endif()
endfunction()
