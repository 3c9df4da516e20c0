// Building a CUDA program for the emulator from an nvcc command line: each
// CUDA source is preprocessed by the host compiler with lockstep's CUDA headers
// first on the include path, rewritten (src/emulator/compile_time/host_source: launches,
// dynamic shared memory, keywords), and compiled from that preprocessed text,
// whose line markers keep every message and debug line on the user's files;
// host sources compile as they are; the link adds liblockstep (and
// liblockstep_cublas for -lcublas / -lcublasLt).
#pragma once
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "nvcc_command.h"

namespace lockstep::driver {

// Where lockstep's headers and libraries are.
struct installation {
  std::filesystem::path include_dir;  // holds lockstep/cuda.h and lockstep/cuda_include/
  std::filesystem::path library_dir;  // holds liblockstep.so
};

// LOCKSTEP_INCLUDE_DIR / LOCKSTEP_LIBRARY_DIR when set, else the layout beside
// the running program (an installed package: include/ and the libraries next
// to it), else the build tree this tool was built in.
installation find_installation();

struct build_options {
  bool checked = false;            // compile for check mode (lockstep check)
  std::filesystem::path work_dir;  // for intermediate files (a private folder)
};

// One source of the command, ready for the compiler proper: a CUDA source
// preprocessed and rewritten (`text`, written to `compiled_file`), a host
// source as it is (`text` empty, `compiled_file` the source).
struct prepared_source {
  source_file source;
  std::filesystem::path compiled_file;
  std::string text;
  // The same with its kernels split at their barriers into region loops
  // (src/emulator/compile_time/region_loops): compiled instead where it exists, the text
  // above where the host compiler refuses it. Empty: nothing was split.
  std::filesystem::path split_file;
  // The text as written with a record that puts every kernel on fibers
  // (host_build::record_of_refused_split): compiled where the host compiler
  // refuses the split. Set with split_file.
  std::filesystem::path refused_file;
};

// Preprocesses and rewrites every CUDA source of `command` into
// options.work_dir. Throws build_failure with the compiler's output when the
// preprocessor fails. With -E, the rewritten text is the result.
std::vector<prepared_source> prepare_sources(const nvcc_command& command, const installation& where, const build_options& options);

// Compiles the prepared sources and, unless -c, links them with the
// command's objects and libraries into `output`.
void compile_and_link(const nvcc_command& command, const std::vector<prepared_source>& sources, const installation& where,
                      const build_options& options, const std::filesystem::path& output);

// What a command's output is called when -o does not say: a.out, or with -c
// the source's name with .o.
std::filesystem::path default_output(const nvcc_command& command);

// A build step failed: what() names the step and holds the compiler's output.
class build_failure : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace lockstep::driver
