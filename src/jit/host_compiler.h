// Running the host C++ compiler, which builds the emulator's kernel modules.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace lockstep::jit {

struct host_compiler {
  std::string path;      // what to run, as found on PATH (clang++ and clang behave differently, so not resolved)
  std::string identity;  // the resolved path and the first line of `--version`, for cache keys
};

// $CXX (a program path or name, no arguments) if set, else the first of c++,
// g++, clang++ found on PATH. Looked up once. Throws device_unavailable when
// there is none, or $CXX names no working compiler.
const host_compiler& find_host_compiler();

struct process_result {
  int exit_code;  // 128 + the signal's number when killed by a signal, as shells report it
  std::string output;  // stdout and stderr, interleaved
};

// Runs argv[0] (searched on PATH when it has no '/') with these arguments,
// no shell involved, stdin from /dev/null, and waits for it. Throws
// std::system_error when it cannot be started (no such program).
process_result run_process(const std::vector<std::string>& argv);

// Compiles source_text as C++ with `<compiler> <flags...> -x c++ <file> -o output`.
// source_name (e.g. "kernel.cu") names the file in the compiler's messages;
// throws compile_error with the compiler's log on failure.
void compile_shared_object(const std::string& source_text, const std::string& source_name,
                           const std::vector<std::string>& flags, const std::filesystem::path& output);

}  // namespace lockstep::jit
