// What a block_runner tells the observer of a block it runs: check mode's
// block_checker implements this. The runner owns the interface and knows
// nothing of the checker; the checker needs nothing of the runner but this
// header. Everything an observer learns of the block comes through these
// calls' arguments or the running thread's emu::current record.
#pragma once
#include <cstddef>
#include <cstdint>
#include <exception>
#include <span>
#include <string>

#include "lockstep/emu/sync.h"

namespace lockstep::emu {

namespace check {
class launch_session;
}  // namespace check

class block_observer {
 public:
  virtual ~block_observer() = default;

  // A block of `threads` threads of the launch of `session` starts (the runner
  // only passes the session through).
  virtual void block_started(check::launch_session& session, unsigned threads, unsigned char* dynamic_shared, std::size_t dynamic_bytes) = 0;
  // The block has finished or failed; none of its threads runs again.
  virtual void block_ended() = 0;
  // The runner switches to the thread whose fiber has this stack.
  virtual void running_on(const void* stack, std::size_t bytes) = 0;
  // A __syncthreads() round releases `waiting` (linear thread ids, ascending);
  // `pc[t]` is where thread t waits; `first_exited` is the lowest thread that
  // exited without reaching it, or the block's thread count if none did.
  virtual void barrier_released(std::span<const unsigned> waiting, std::span<const std::uintptr_t> pc, unsigned first_exited) = 0;
  // A round of `op` completes among `lanes` of warp `warp`, before any lane
  // goes on; `mask[l]` is what lane l passed and `pc[l]` where it called.
  virtual void warp_completed(unsigned warp, warp_op op, std::uint32_t lanes, std::span<const std::uint32_t, 32> mask,
                              std::span<const std::uintptr_t, 32> pc) = 0;
  // A misuse the runner refuses (a deadlock, a collective some lane cannot
  // reach...), blamed on `thread` (linear) at `pc`. The observer may stop the
  // block by throwing; if it returns, the block fails with kernel_error `what`.
  virtual void refused(const std::string& what, unsigned thread, std::uintptr_t pc) = 0;
  // The runner's own code (building a report) runs on the block's OS thread
  // from `begins` true to false: its memory accesses are not the kernel's.
  // (Library functions it calls may be a check-mode program's instrumented
  // copies, std::string's say, which would otherwise report the heap.)
  virtual void runner_code(bool begins) = 0;
};

// Marks a scope of the runner's own code for the observer, if any.
class runner_code_scope {
 public:
  explicit runner_code_scope(block_observer* observer) : observer_(observer) {
    if (observer_) observer_->runner_code(true);
  }
  ~runner_code_scope() {
    if (observer_) observer_->runner_code(false);
  }
  runner_code_scope(const runner_code_scope&) = delete;
  runner_code_scope& operator=(const runner_code_scope&) = delete;

 private:
  block_observer* observer_;
};

// For an observer, from inside the running emulated thread: ends that thread
// where it is, without unwinding it (it was about to make an access that must
// not happen), and with it the block, which then fails with `why`.
[[noreturn]] void stop_running_thread(std::exception_ptr why);

}  // namespace lockstep::emu
