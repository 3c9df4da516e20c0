#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string>

#include "libclang.h"
#include "region_loops.h"

namespace lockstep::emu::region_loops {
namespace {
bool set(const char* variable) {
  const char* v = std::getenv(variable);
  return v && *v && std::string(v) != "0";
}
bool enabled() { return set("LOCKSTEP_REGION_LOOPS_LOG"); }
}  // namespace

bool refusal_is_error() { return set("LOCKSTEP_REGION_LOOPS_STRICT"); }

void log(const std::string& source_name, const split_result& result) {
  if (!enabled()) return;
  for (const auto& k : result.split)
    std::cerr << "lockstep region loops: " << source_name << ": kernel " << k << " runs as loops over threads"
              << (std::find(result.along_x.begin(), result.along_x.end(), k) != result.along_x.end() ? ", blocks along x several to a call" : "")
              << "\n";
  for (const auto& note : result.notes) std::cerr << "lockstep region loops: " << source_name << ": " << note << "\n";
}

void log_loaded(const libclang_api& clang) {
  if (!enabled()) return;
  std::cerr << "lockstep region loops: libclang " << clang.path << " (" << clang.string(clang.clang_getClangVersion()) << "), builtin headers "
            << (clang.builtin_header_arguments.empty() ? std::string("its own") : "from " + clang.builtin_header_arguments.back()) << "\n";
}

void log_failure(const std::string& source_name, const std::string& compiler_output) {
  if (!enabled()) return;
  std::cerr << "lockstep region loops: " << source_name << ": the host compiler refused the split kernels; they run on fibers:\n"
            << compiler_output << "\n";
}

}  // namespace lockstep::emu::region_loops
