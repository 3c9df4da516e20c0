// Running a program without a shell and collecting what it prints.
#pragma once
#include <string>
#include <vector>

namespace lockstep::toolchain {

struct process_result {
  int exit_code;       // 128 + the signal's number when killed by a signal, as shells report it
  std::string output;  // stdout and stderr, interleaved
};

// Runs argv[0] (searched on PATH when it has no '/') with these arguments,
// no shell involved, stdin from /dev/null, and waits for it. Throws
// std::system_error when it cannot be started (no such program).
process_result run_process(const std::vector<std::string>& argv);

}  // namespace lockstep::toolchain
