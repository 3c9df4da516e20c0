// The grid-wide barrier of a cooperative launch (cooperative_groups'
// grid.sync()): each block runs on an OS thread of its own, and that thread
// waits here once all of its block's threads have reached the barrier.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "lockstep/emu/vector_types.h"

namespace lockstep::emu {

class grid_barrier {
 public:
  // `stopped`: polled while waiting; true once the launch has failed or was
  // interrupted elsewhere, which ends the wait with an exception.
  // `released`: called by the last block to arrive, while all others wait
  // (check mode orders the memory accesses before and after there).
  grid_barrier(std::uint64_t blocks, std::function<bool()> stopped, std::function<void()> released = nullptr)
      : blocks_(blocks), stopped_(std::move(stopped)), released_callback_(std::move(released)) {}

  // Block `block` (of kernel `kernel`) has arrived; returns once every block
  // has. Throws kernel_error when some block has ended without arriving (a GPU
  // would hang), and launch_stopped when the launch failed elsewhere.
  void arrive_and_wait(const std::string& kernel, uint3 block);
  // A block has ended (its threads exited, or it failed): blocks waiting now,
  // or arriving later, could wait forever.
  void block_ended(uint3 block);
  void stop();  // the launch failed: wake every waiting block

  // Thrown to a waiting block when the launch failed elsewhere; the launch's
  // error is that other failure.
  struct launch_stopped {};

 private:
  std::string hang_text(const std::string& kernel, uint3 block) const;

  std::mutex mutex_;
  std::condition_variable released_;
  const std::uint64_t blocks_;
  std::function<bool()> stopped_;
  std::function<void()> released_callback_;
  std::uint64_t arrived_ = 0;
  std::uint64_t generation_ = 0;
  bool ended_ = false;  // some block has ended
  uint3 ended_block_{0, 0, 0};
  bool stop_ = false;
};

}  // namespace lockstep::emu
