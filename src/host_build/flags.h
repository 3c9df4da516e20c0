// The host compiler's flags for CUDA code built for the emulator, which the
// JIT's CPU path (src/jit/compile.cpp) and lockstep nvcc
// (tools/driver/program_build.cpp) both use. Each caller adds what is its own:
// the JIT its compile_options, the driver nvcc's command line.
#pragma once
#include <string>
#include <vector>

namespace lockstep::host_build {

// lockstep's headers need C++20, so an older dialect asked for is raised.
// The two callers have raised it differently since their beginnings, kept:
enum class older_dialect {
  // c++17 -> c++20, gnu++14 -> gnu++20 (the JIT: compile_options::std names
  // a dialect family the user chose, GNU extensions included).
  same_family_cxx20,
  // anything but c++2x / gnu++2x (none given too) -> c++20 (lockstep nvcc:
  // nvcc's -std takes only c++NN, and a program that names no standard gets
  // the one lockstep's headers need).
  plain_cxx20,
};
std::string cxx20_dialect(const std::string& requested, older_dialect how);

// Whether any of `flags` begins with `prefix`.
bool has_flag_starting(const std::vector<std::string>& flags, const std::string& prefix);

// The optimisation and debug defaults of kernel code: -O3 unless the user
// chose an -O, -g1 (line tables only, so that a fault's report names the
// kernel's line) unless the user chose a -g, and -fPIC for a shared object.
// -O3, as CMake's Release builds of the library's kernels: at -O2 GCC
// vectorises only loops whose trip count it knows to be a multiple of the
// vector width, which a loop over a block's threads never is (same compile
// time, measured with jit_bench --cold).
std::vector<std::string> optimisation_defaults(const std::vector<std::string>& user_flags, bool position_independent);

// Whether the user's flags name a CPU to build for (-march, -mcpu).
bool names_a_target(const std::vector<std::string>& user_flags);

// For this machine's CPU, as PoCL builds OpenCL kernels: the region loops
// vectorise across threads with its widest vectors (the CUDA samples'
// matrixMul ran 2x faster so). Nothing where the user names a target of their
// own. Cache keys name the CPU (host_key).
std::vector<std::string> native_target_flags(bool user_names_a_target);

// Check mode's instrumentation flags (src/emulator/check): cmake/lockstep.cmake's
// LOCKSTEP_CHECK_COMPILE_OPTIONS, which the library's checked kernels are built with too.
// The instrumentation's hooks are liblockstep's, so the sanitizer's own runtime
// must not be linked.
std::vector<std::string> check_flags();

// What the region-loop compiler's parse sees of a compile's flags: -I, -D, -U, -std=.
std::vector<std::string> parse_flags_of(const std::vector<std::string>& compile_flags);

// The host compiler and CPU a build is for, for cache keys:
// "compiler <identity>\nprocessor <cpu>" (code built for one CPU may not run
// on another that shares the cache).
std::string host_key();

}  // namespace lockstep::host_build
