// A thread that waits for the block's other threads outside a barrier.
//
// The emulator runs a block's threads one at a time, each until it reaches a
// barrier or a warp collective. A thread that waits for another by polling
// (libcu++'s cuda::barrier::wait, a spin on a flag with __nanosleep) would
// poll forever, since the thread it waits for never gets to run. Such waits
// sleep or yield between polls: __nanosleep, and, inside libcu++ for the host
// (which the emulator compiles device code against), sched_yield and
// nanosleep. In a kernel's thread these let the block's other threads run
// instead (block_runner::yield_thread); anywhere else they are libc's. They
// take precedence over libc's because liblockstep comes before libc in the
// program's link order; a thread of the host program is unaffected.
#include <dlfcn.h>
#include <sched.h>
#include <time.h>

#include "block_runner.h"
#include "lockstep/emu/builtins.h"
#include "lockstep/emu/sync.h"

namespace lockstep::emu {

void device_yield() {
  if (current.block) current.block->yield_thread();
}

}  // namespace lockstep::emu

namespace {

template <class Function>
Function* libc_function(const char* name) {
  static Function* const function = reinterpret_cast<Function*>(dlsym(RTLD_NEXT, name));
  return function;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int sched_yield() noexcept {
  if (lockstep::emu::current.block) {
    lockstep::emu::current.block->yield_thread();
    return 0;
  }
  static auto* const libc = libc_function<int()>("sched_yield");
  return libc();
}

__attribute__((visibility("default"))) int nanosleep(const struct timespec* duration, struct timespec* remaining) {
  if (lockstep::emu::current.block) {
    lockstep::emu::current.block->yield_thread();
    if (remaining) *remaining = {};
    return 0;
  }
  static auto* const libc = libc_function<int(const struct timespec*, struct timespec*)>("nanosleep");
  return libc(duration, remaining);
}

}  // extern "C"
