// lockstep-builtin-kernel-names host|nvcc OUT.txt: writes the kernels the
// built-in module for that compiler instantiates, one name expression per
// line (lockstep::kernels::...), from the recipe tables
// (lockstep/kernels/builtin_kernel_names.h). lockstep-module-source reads the
// file as @OUT.txt, so a new table row needs no edit to the build.
#include <fstream>
#include <iostream>
#include <string>

#include "lockstep/kernels/builtin_kernel_names.h"

int main(int argc, char** argv) {
  const std::string target = argc == 3 ? argv[1] : "";
  if (target != "host" && target != "nvcc") {
    std::cerr << "usage: lockstep-builtin-kernel-names host|nvcc OUT.txt\n";
    return 2;
  }
  std::ofstream out(argv[2], std::ios::binary);
  const auto module = target == "nvcc" ? lockstep::kernels::builtin_module::gpu : lockstep::kernels::builtin_module::emulator;
  lockstep::kernels::for_each_builtin_kernel(module, [&](const std::string& name) { out << "lockstep::kernels::" << name << "\n"; });
  if (!out) {
    std::cerr << "lockstep-builtin-kernel-names: cannot write " << argv[2] << "\n";
    return 1;
  }
  return 0;
}
