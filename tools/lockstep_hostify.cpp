// lockstep-hostify [--split-barriers FLAGS... --] IN.cu OUT.cpp: writes the
// host-compiler form of a CUDA source file (see
// src/emulator/compile_time/host_source/host_source.h), with a #line directive so
// diagnostics name the original file. With --split-barriers, kernels with
// barriers are also split into region loops (src/emulator/compile_time/region_loops),
// Clang parsing the file with FLAGS (-I, -D, -std); what stays on fibers is
// said on stderr when LOCKSTEP_REGION_LOOPS_LOG is set.
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "emulator/compile_time/host_source/host_source.h"
#include "emulator/compile_time/region_loops/region_loops.h"
#include "host_build/engine_record.h"

int main(int argc, char** argv) {
  std::vector<std::string> parse_flags, files;
  bool split = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--split-barriers") == 0) {
      split = true;
      for (++i; i < argc && std::strcmp(argv[i], "--") != 0; ++i) parse_flags.emplace_back(argv[i]);
    } else {
      files.emplace_back(argv[i]);
    }
  }
  if (files.size() != 2) {
    std::cerr << "usage: lockstep-hostify [--split-barriers FLAGS... --] IN.cu OUT.cpp\n";
    return 2;
  }
  std::ifstream in(files[0], std::ios::binary);
  if (!in) {
    std::cerr << "lockstep-hostify: cannot read " << files[0] << "\n";
    return 1;
  }
  std::stringstream text;
  text << in.rdbuf();
  std::string host = "#line 1 \"" + files[0] + "\"\n" + lockstep::emu::host_source(text.str());
  if (split) {
    auto result = lockstep::emu::region_loops::split_kernels(host, files[0], parse_flags);
    lockstep::emu::region_loops::log(files[0], result);
    // With the record of how its kernels run (src/host_build/engine_record.h).
    host = std::move(result.source) + lockstep::host_build::engine_record_source(lockstep::host_build::record_of_split(result), files[0]);
  }
  std::ofstream out(files[1], std::ios::binary);
  out << host;
  return out ? 0 : 1;
}
