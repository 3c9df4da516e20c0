#include "grid_barrier.h"

#include <chrono>

#include "lockstep/errors.h"
#include "message_text.h"

namespace lockstep::emu {

std::string grid_barrier::hang_text(const std::string& kernel, uint3 block) const {
  return "kernel '" + kernel + "', block " + coordinates_text(block) + ": grid.sync() waits for all " + std::to_string(blocks_) +
         " blocks of the grid, but block " + coordinates_text(ended_block_) +
         " has ended without reaching it, so on a GPU this launch hangs; every thread of every block must call grid.sync() the same number "
         "of times";
}

void grid_barrier::arrive_and_wait(const std::string& kernel, uint3 block) {
  std::unique_lock lock(mutex_);
  if (ended_) throw kernel_error(cudaErrorLaunchFailure, hang_text(kernel, block));
  const std::uint64_t generation = generation_;
  if (++arrived_ == blocks_) {
    if (released_callback_) released_callback_();
    arrived_ = 0;
    ++generation_;
    released_.notify_all();
    return;
  }
  // Polled as well as notified: an interrupt or time limit (fault.h) does not
  // notify, and a worker waiting here is not in the kernel's code, where the
  // watchdog's signal would end it.
  while (generation_ == generation) {
    if (stop_ || stopped_()) throw launch_stopped{};
    if (ended_) throw kernel_error(cudaErrorLaunchFailure, hang_text(kernel, block));
    released_.wait_for(lock, std::chrono::milliseconds(10));
  }
}

void grid_barrier::block_ended(uint3 block) {
  std::lock_guard lock(mutex_);
  if (!ended_) ended_block_ = block;
  ended_ = true;
  released_.notify_all();
}

void grid_barrier::stop() {
  std::lock_guard lock(mutex_);
  stop_ = true;
  released_.notify_all();
}

}  // namespace lockstep::emu
