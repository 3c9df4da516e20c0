// Which engine a host-compiled kernel runs on, and why: region loops (the
// block as loops over its threads) or fibers (a stack per waiting thread).
// Read from the record its build carries with the module
// (src/emulator/execution/engine_record.h) and the emulator's options: the
// same answer the runner acts on. A kernel that runs on fibers although the
// options allow loops says so once on stderr (emu::options::quiet_fibers,
// LOCKSTEP_QUIET_FIBERS=1, silences it).
#pragma once
#include <string>

namespace lockstep::emu {

struct kernel_engine {
  bool loops = false;  // its blocks run as region loops
  std::string why;     // where not, why it runs on fibers
  std::string kernel;  // its name, unqualified
  std::string where;   // "file:line" of its definition, where its record knows it
};

// How `kernel` (the address of a host-compiled kernel) runs under the
// current options, launched as a plain (not cooperative) launch.
kernel_engine engine_of(const void* kernel);
template <class... P>
kernel_engine engine_of(void (*kernel)(P...)) {
  return engine_of(reinterpret_cast<const void*>(kernel));
}

// The line a launch of `kernel` would print on stderr because it runs on
// fibers though region loops are allowed (without its "lockstep: " prefix),
// marked as said so that the launch prints nothing; "" where there is
// nothing to say or it was said. For a caller that says it its own way
// (Python's lockstep.FibersWarning).
std::string take_fibers_notice(const void* kernel);

}  // namespace lockstep::emu
