// lockstep-module-source TARGET IN.cu OUT.cpp NAME...: writes the translation
// unit of a kernel module (the source plus its kernel table, see
// src/jit/translation_unit.h) for TARGET host (the emulator) or nvcc, so the
// library's kernels are built ahead of time exactly as the JIT builds them.
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "jit/translation_unit.h"

int main(int argc, char** argv) {
  if (argc < 5 || (std::string(argv[1]) != "host" && std::string(argv[1]) != "nvcc")) {
    std::cerr << "usage: lockstep-module-source host|nvcc IN.cu OUT.cpp NAME...\n";
    return 2;
  }
  std::ifstream in(argv[2], std::ios::binary);
  if (!in) {
    std::cerr << "lockstep-module-source: cannot read " << argv[2] << "\n";
    return 1;
  }
  std::stringstream text;
  text << in.rdbuf();
  const std::vector<std::string> names(argv + 4, argv + argc);
  const auto target = std::string(argv[1]) == "host" ? lockstep::jit::compile_target::host : lockstep::jit::compile_target::nvcc;
  std::ofstream out(argv[3], std::ios::binary);
  out << lockstep::jit::assemble_translation_unit(text.str(), argv[2], names, target);
  return out ? 0 : 1;
}
