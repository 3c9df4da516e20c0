// Faults and interrupts while emulated kernels run.
//
// A kernel that dereferences a bad pointer, overflows its stack, divides an
// integer by zero or calls abort() raises a signal in the worker thread that
// runs it. The handlers (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT),
// installed at the first launch to run on an alternate signal stack, act only
// when the signalled thread is a worker inside a block (its `worker` is
// armed): they record what they saw and siglongjmp to the landing the worker
// set before the block (executor.cpp), which drops the block's fibers as after
// any failed block. Every other signal goes on to the handler that was there
// before, exactly as if lockstep had none: Python's, the program's, or the
// default action.
//
// SIGINT (chained the same way, and put back at each launch, since Python and
// Jupyter re-install theirs) and the optional time limit interrupt a launch: a
// watchdog thread signals the launch's armed workers every few milliseconds
// until each has left its block. A worker jumps out only where it runs the
// kernel's own code, never inside malloc or printf, whose locks it would leave
// held. Nothing here costs a system call per block or per thread: a launch
// checks the SIGINT handler and publishes its workers, a block arms its worker
// with one store after a sigsetjmp that saves no signal mask.
#pragma once
#include <pthread.h>
#include <setjmp.h>

#include <atomic>
#include <cstdint>

#include "lockstep/emu/vector_types.h"

namespace lockstep::emu::fault {

// What a handler saw when it ended a worker's block.
struct record {
  int signal = 0;                         // SIGSEGV, ...; 0 for an interrupt
  int code = 0;                           // si_code
  std::uintptr_t address = 0;             // si_addr
  std::uintptr_t pc = 0, sp = 0;          // of the interrupted code
  std::uint64_t error_code = 0;           // x86's page-fault error code: bit 1 is set for a write
  std::uint64_t registers[16] = {};       // rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8-r15: the operand of a fault without si_addr
  uint3 block{0, 0, 0}, thread{0, 0, 0};  // the emulated thread, filled in at the landing
  // False where the block ran as region loops, whose record of the running
  // thread lags behind, and running it again on fibers did not fault.
  bool thread_known = true;
  // SIGABRT only (abort() was called, so the stack is sound): return
  // addresses, innermost first, to find the kernel's line below libc's frames.
  std::uintptr_t frames[16] = {};
  int frame_count = 0;
};

enum class interrupt : int { none = 0, sigint = 1, timeout = 2 };

// One worker thread of the pool, as the handlers see it.
struct worker {
  sigjmp_buf landing;
  pthread_t thread{};
  std::atomic<int> armed{0};  // inside a block: a fault there is the kernel's
  bool interrupted = false;   // the landing came from an interrupt, not a fault
  record seen;
};

// Once on each worker thread (and on a launching thread): an alternate signal
// stack, where a handler runs after a fiber's stack overflowed. A thread that
// has one already keeps it.
void prepare_thread();

// The handlers' view of one launch, from before its first block to after its
// last: handlers installed, SIGINT's put back if something replaced it, the
// workers and the kernel's code published, the time limit running.
class launch_watch {
 public:
  launch_watch(const void* kernel, worker* workers, unsigned count, double timeout_seconds);
  ~launch_watch();
  launch_watch(const launch_watch&) = delete;
  launch_watch& operator=(const launch_watch&) = delete;
  // Why workers were interrupted, if they were.
  interrupt reason() const;
};

// At the landing, after the jump: the handlers' signals unblocked (the jump
// left them blocked) and the emulated thread noted.
void landed(worker& w, const uint3& block, const uint3& thread);

}  // namespace lockstep::emu::fault
