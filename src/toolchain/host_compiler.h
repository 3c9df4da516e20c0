// Running the host C++ compiler: it builds the emulator's kernel modules (the
// JIT) and check-mode programs (lockstep-check).
#pragma once
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace lockstep::toolchain {

// Flags of every host build of kernels (the JIT, lockstep nvcc; CMake's
// LOCKSTEP_KERNEL_COMPILE_OPTIONS in cmake/lockstep.cmake are the same):
// - a dereference of a null pointer is code that runs and faults, which the
//   emulator reports, not undefined behaviour GCC may delete with the code
//   around it (a region loop whose threads all read *nullptr compiled to ret);
// - a * b + c is two roundings, as written, never contracted into an FMA: the
//   fiber engine and the region loops then give the same bits whatever shape
//   the host compiler gives each, and __fmul_rn and __fadd_rn, which CUDA
//   promises never fuse, are plain operations it may vectorise (the macro
//   tells lockstep/emu/rounding_intrinsics.h so).
inline constexpr const char* kernel_code_flags[] = {"-fno-delete-null-pointer-checks", "-ffp-contract=off", "-DLOCKSTEP_FP_CONTRACT_OFF"};

struct host_compiler {
  std::string path;      // what to run, as found on PATH (clang++ and clang behave differently, so not resolved)
  std::string identity;  // the resolved path and the first line of `--version`, for cache keys
};

// There is no working compiler; what() says which was tried and what to do.
class compiler_not_found : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The compiler rejected the source: summary() names the file, log() holds the
// compiler's messages; what() is both.
class compile_failure : public std::runtime_error {
 public:
  compile_failure(const std::string& summary, std::string log) : std::runtime_error(summary + "\n" + log), summary_(summary), log_(std::move(log)) {}
  const std::string& summary() const noexcept { return summary_; }
  const std::string& log() const noexcept { return log_; }

 private:
  std::string summary_, log_;
};

// $CXX (a program path or name, no arguments) if set, else the first of c++,
// g++, clang++ found on PATH. Looked up once. Throws compiler_not_found when
// there is none, or $CXX names no working compiler.
const host_compiler& find_host_compiler();

// Building for the CPU this process runs on: -march=native and 512-bit
// vectors preferred, where the host compiler takes them (else no flag), and
// what names that CPU in cache keys (its model and features), since code
// built for one CPU may not run on another that shares the cache.
struct native_target {
  std::vector<std::string> flags;
  std::string cpu;
};
const native_target& find_native_target();

// Compiles source_text as C++ with `<compiler> <flags...> -x c++ <file> -o output`.
// source_name (e.g. "kernel.cu") names the file in the compiler's messages;
// throws compile_failure with the compiler's log when it fails.
void compile_shared_object(const std::string& source_text, const std::string& source_name, const std::vector<std::string>& flags,
                           const std::filesystem::path& output);

}  // namespace lockstep::toolchain
