// Program counters to source lines, for reports only: addr2line (binutils)
// reads the debug info of the module holding each address, once per module
// and launch, and the answers are kept for the rest of the process.
#pragma once
#include <cstdint>
#include <vector>

#include "lockstep/emu/check.h"

namespace lockstep::emu::check {

// The user's line for a chain of return addresses, innermost first: the
// first frame (inlined ones included) that is not in lockstep's headers or
// the system's. Each address is a return address (the call is just before it).
source_line user_line(const std::vector<std::uintptr_t>& stack);

// Looks up every address at once, so that user_line then answers from the cache.
void prefetch_lines(const std::vector<std::uintptr_t>& return_addresses);

}  // namespace lockstep::emu::check
