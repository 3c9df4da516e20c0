// Settings of the emulator: how many OS threads run blocks, in which order
// the threads of a block run between barriers, and which checks run (see
// lockstep/emu/check.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace lockstep::emu {

// forward runs thread 0 first (deterministic, the default); reverse and random
// change the order in which threads start and resume after each barrier, so a
// kernel that depends on that order (a missing __syncthreads) gives different
// results under different orders.
enum class thread_order { forward, reverse, random };

struct options {
  unsigned workers = 0;  // OS threads running blocks; 0 = one per core
  thread_order order = thread_order::forward;
  std::uint64_t seed = 0;                // for thread_order::random
  std::size_t stack_bytes = 256 * 1024;  // per emulated thread that waits at a barrier
  unsigned checks = 0;                   // check_tool bits (all_checks = all four); 0 = normal mode
  double timeout_seconds = 0;            // a launch running longer ends with cudaErrorLaunchTimeout; 0 = no limit
  // Kernels that the region-loop compiler split at their barriers
  // (src/emulator/compile_time/region_loops) run each block as loops over its threads;
  // false runs every kernel on fibers (check mode and the reverse and random
  // orders always do).
  bool region_loops = true;
  // A kernel that runs on fibers although region loops are allowed says so
  // once on stderr (Python: lockstep.FibersWarning); true silences that
  // (lockstep/emu/kernel_engine.h).
  bool quiet_fibers = false;
  // Devices the runtime API reports, each an H100 over the same memory (peer
  // access between any two): programs written for several GPUs run; those
  // that loop over every device do each device's work in turn.
  unsigned devices = 1;
};

// Defaults come from LOCKSTEP_EMU_WORKERS, LOCKSTEP_EMU_ORDER
// (forward | reverse | random[:seed]), LOCKSTEP_EMU_STACK_KIB,
// LOCKSTEP_CHECK (1 | all | a comma list of memcheck, racecheck, synccheck,
// initcheck | 0), LOCKSTEP_EMU_TIMEOUT (seconds), LOCKSTEP_EMU_ENGINE (loops,
// the default, or fibers: region_loops), LOCKSTEP_EMU_DEVICES (1 to 8) and
// LOCKSTEP_QUIET_FIBERS (1: quiet_fibers).
options get_options();
void set_options(const options& o);

const char* to_string(thread_order order);
thread_order parse_thread_order(const std::string& text, std::uint64_t* seed);
unsigned parse_checks(const std::string& text);  // LOCKSTEP_CHECK's syntax; throws std::invalid_argument
std::string checks_to_string(unsigned checks);   // "memcheck,racecheck", "none"

}  // namespace lockstep::emu
