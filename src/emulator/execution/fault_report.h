// The errors a launch ends with after a fault, its time limit or SIGINT: what
// happened in CUDA's terms, which thread, what the address was near, and the
// source line, read from the records the signal handlers made (fault.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "fault.h"
#include "lockstep/errors.h"

namespace lockstep::emu {

class stack_pool;
class dynamic_shared_buffer;

// What the worker knew of its block when a fault ended it.
struct fault_site {
  const std::string& kernel;
  const void* kernel_address;
  const stack_pool& stacks;
  const void* running_stack;  // the fiber that ran, or null
  const dynamic_shared_buffer& dynamic_shared;
  std::size_t dynamic_shared_bytes;  // the launch's
};

kernel_error fault_error(const fault::record& r, const fault_site& site);

// `stopped`: the interrupted workers' records, in worker order.
kernel_error timeout_error(const std::string& kernel, double seconds, const std::vector<fault::record>& stopped);
launch_interrupted interrupted_error(const std::string& kernel, const std::vector<fault::record>& stopped);

}  // namespace lockstep::emu
