// Fiber stacks for one worker, reused from block to block.
//
// Each stack is an mmap'd region with an inaccessible guard page below it, so
// a kernel thread that overflows its stack faults instead of silently writing
// into a neighbour's. Pages are only committed when touched, so a large
// default size costs address space, not memory.
#pragma once
#include <cstddef>
#include <vector>

namespace lockstep::emu {

class stack_pool {
 public:
  explicit stack_pool(std::size_t stack_bytes);
  ~stack_pool();
  stack_pool(const stack_pool&) = delete;
  stack_pool& operator=(const stack_pool&) = delete;

  void* acquire();
  void release(void* stack) { free_.push_back(stack); }
  std::size_t stack_bytes() const { return stack_bytes_; }

 private:
  std::size_t stack_bytes_;
  std::size_t guard_bytes_;
  std::vector<void*> free_;
  std::vector<void*> all_;
};

}  // namespace lockstep::emu
