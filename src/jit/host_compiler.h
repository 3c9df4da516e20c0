// Running the host C++ compiler, which builds the emulator's kernel modules.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "emulator/process.h"

namespace lockstep::jit {

struct host_compiler {
  std::string path;      // what to run, as found on PATH (clang++ and clang behave differently, so not resolved)
  std::string identity;  // the resolved path and the first line of `--version`, for cache keys
};

// $CXX (a program path or name, no arguments) if set, else the first of c++,
// g++, clang++ found on PATH. Looked up once. Throws device_unavailable when
// there is none, or $CXX names no working compiler.
const host_compiler& find_host_compiler();

// Running programs lives in the emulator room (check mode uses it too).
using emu::process_result;
using emu::run_process;

// Compiles source_text as C++ with `<compiler> <flags...> -x c++ <file> -o output`.
// source_name (e.g. "kernel.cu") names the file in the compiler's messages;
// throws compile_error with the compiler's log on failure.
void compile_shared_object(const std::string& source_text, const std::string& source_name,
                           const std::vector<std::string>& flags, const std::filesystem::path& output);

}  // namespace lockstep::jit
