// lockstep-module-source TARGET IN.cu OUT.cpp NAME...: writes the translation
// unit of a kernel module (the source plus its kernel table, see
// src/jit/translation_unit.h) for TARGET host (the emulator) or nvcc, so the
// library's kernels are built ahead of time exactly as the JIT builds them.
// A NAME of the form @FILE stands for the names in FILE, one per line (the
// built-in modules' list, written by lockstep-builtin-kernel-names).
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "jit/translation_unit.h"

int main(int argc, char** argv) {
  if (argc < 5 || (std::string(argv[1]) != "host" && std::string(argv[1]) != "nvcc")) {
    std::cerr << "usage: lockstep-module-source host|nvcc IN.cu OUT.cpp NAME|@FILE...\n";
    return 2;
  }
  std::ifstream in(argv[2], std::ios::binary);
  if (!in) {
    std::cerr << "lockstep-module-source: cannot read " << argv[2] << "\n";
    return 1;
  }
  std::stringstream text;
  text << in.rdbuf();
  std::vector<std::string> names;
  for (int i = 4; i < argc; ++i) {
    if (argv[i][0] != '@') {
      names.emplace_back(argv[i]);
      continue;
    }
    std::ifstream list(argv[i] + 1);
    if (!list) {
      std::cerr << "lockstep-module-source: cannot read the name list " << argv[i] + 1 << "\n";
      return 1;
    }
    for (std::string line; std::getline(list, line);)
      if (!line.empty()) names.push_back(line);
  }
  const auto target = std::string(argv[1]) == "host" ? lockstep::jit::compile_target::host : lockstep::jit::compile_target::nvcc;
  std::ofstream out(argv[3], std::ios::binary);
  out << lockstep::jit::assemble_translation_unit(text.str(), argv[2], names, target);
  return out ? 0 : 1;
}
