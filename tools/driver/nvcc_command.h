// An nvcc command line, read as nvcc reads it, sorted into what the emulator's
// build needs: CUDA sources (rewritten and compiled by the host compiler), host
// sources, preprocessor, compiler and linker flags, and the GPU-only options
// that have nothing to do on the emulator (ignored, with a note).
#pragma once
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace lockstep::driver {

// A command line nvcc would refuse too; what() says which argument and why.
class usage_error : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct source_file {
  std::filesystem::path path;
  bool cuda;  // .cu, or any file after `-x cu`
};

struct nvcc_command {
  std::vector<source_file> sources;
  std::vector<std::string> link_inputs;         // objects and archives, in order
  std::vector<std::string> preprocessor_flags;  // -I, -isystem, -D, -U, -include, -M* for dependency files
  std::vector<std::string> compiler_flags;      // -O, -g, -f..., -W..., -Xcompiler's
  std::vector<std::string> linker_flags;        // -L, -l, -Xlinker's, in order
  std::string language_standard;                // "c++17" from -std=c++17; empty: nvcc's default
  std::string host_compiler;                    // -ccbin; empty: the default
  std::filesystem::path output;                 // -o; empty: nvcc's default
  bool compile_only = false;                    // -c, -dc
  bool preprocess_only = false;                 // -E
  bool shared_library = false;                  // -shared, and the module options
  // -fatbin, -cubin, -ptx: ".fatbin", ".cubin", ".ptx". On the emulator each
  // builds a shared object of the kernels that the driver API's cuModuleLoad
  // and cuModuleLoadData load (src/emulator/cuda_api/driver_modules.cpp).
  std::string module_extension;
  bool run_after_build = false;            // --run (nvcc's own option)
  std::vector<std::string> run_arguments;  // --run-args a,b
  std::vector<std::string> ignored;        // GPU-only options, for the note
};

// Reads nvcc's options (both spellings, `-o x` and `-o=x`, comma lists after
// -Xcompiler and friends). Throws usage_error for an unknown option or a
// missing value. With `program_arguments_follow` (lockstep run and check:
// `prog.cu 1024 -v`), the first argument that is neither an option, an
// option's value nor an input file, or whatever follows `--`, starts the
// program's arguments (run_arguments).
nvcc_command parse_nvcc_command(const std::vector<std::string>& arguments, bool program_arguments_follow = false);

// Whether `argument` names an input nvcc would compile or link (by extension).
bool is_input_file(const std::string& argument);

}  // namespace lockstep::driver
