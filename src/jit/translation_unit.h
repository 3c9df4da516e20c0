// Builds the translation unit the JIT compiles from a user's kernel source:
// lockstep's headers first, the user's text under its own file name (so
// compiler messages carry the user's line numbers), and a kernel table that
// makes each named kernel findable and launchable with checked arguments
// (include/lockstep/jit/kernel_table.h).
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace lockstep::jit {

enum class compile_target {
  host,   // host compiler for the emulator: rewritten for the host, with launchers
  nvcc,   // nvcc, ahead of time: CUDA as written, with launchers (host side exists)
  nvrtc,  // NVRTC: signatures only, read back through the driver
};

// Names of the non-template __global__ functions defined in `source`,
// qualified with their enclosing named namespaces ("ns::k"). Template kernels
// must be named explicitly ("k<16>"), as no instance exists until named.
std::vector<std::string> discover_kernel_names(const std::string& source);

// What every translation unit the JIT assembles begins with.
inline constexpr std::string_view host_prelude = "#include \"lockstep/cuda.h\"\n#include \"lockstep/jit/kernel_table.h\"\n";

std::string assemble_translation_unit(const std::string& source, const std::string& source_name, const std::vector<std::string>& kernel_names,
                                      compile_target target);

}  // namespace lockstep::jit
