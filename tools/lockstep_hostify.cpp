// lockstep-hostify IN.cu OUT.cpp: writes the host-compiler form of a CUDA
// source file (see src/emulator/host_source/host_source.h), with a #line directive so
// diagnostics name the original file.
#include <fstream>
#include <iostream>
#include <sstream>

#include "emulator/host_source/host_source.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: lockstep-hostify IN.cu OUT.cpp\n";
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::cerr << "lockstep-hostify: cannot read " << argv[1] << "\n";
    return 1;
  }
  std::stringstream text;
  text << in.rdbuf();
  std::ofstream out(argv[2], std::ios::binary);
  out << "#line 1 \"" << argv[1] << "\"\n" << lockstep::emu::host_source(text.str());
  return out ? 0 : 1;
}
