// Where lockstep's headers are and how a host build of CUDA code sees them:
// the facts the JIT (src/jit/compile.cpp) and lockstep nvcc
// (tools/driver/program_build.cpp) share about include paths.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace lockstep::host_build {

// The environment variable that names the folder holding lockstep/cuda.h.
inline constexpr const char* include_dir_variable = "LOCKSTEP_INCLUDE_DIR";

// Whether `dir` is such a folder (an include/ of lockstep's).
bool holds_lockstep_headers(const std::filesystem::path& dir);

// The first of `candidates` that holds lockstep's headers, or "" if none does.
std::filesystem::path first_with_lockstep_headers(const std::vector<std::filesystem::path>& candidates);

// lockstep's own CUDA headers (<cuda_runtime.h>, <cooperative_groups.h>,
// <cuda_fp16.h>, ...) under an include folder of lockstep's.
std::filesystem::path cuda_include_directory(const std::filesystem::path& include_dir);

// The flag that puts them first on the include path, so that they win over
// an installed CUDA toolkit's in the compiler's default paths: every CUDA
// source of either caller is compiled (or preprocessed) with it, before the
// user's own -I.
std::string cuda_headers_first(const std::filesystem::path& include_dir);

// Every file under include_dir/lockstep, sorted by path.
std::vector<std::filesystem::path> header_files(const std::filesystem::path& include_dir);

// A fingerprint of those files' names and bytes: part of every JIT cache
// key, so that kernels compiled against older headers are not reused.
std::string headers_fingerprint(const std::filesystem::path& include_dir);

// A hash of their modification times: Clang refuses a precompiled prelude
// whose headers were written after it (the same bytes installed again too),
// so the prelude's cache key names them.
std::string headers_written(const std::filesystem::path& include_dir);

}  // namespace lockstep::host_build
