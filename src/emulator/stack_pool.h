// Fiber stacks for one worker, reused from block to block.
//
// Each stack is an mmap'd region with an inaccessible guard region below it,
// so a kernel thread that overflows its stack faults (and the fault handler
// reports a stack overflow) instead of silently writing into a neighbour's.
// The guard is at least as large as the stack (address space only), so that a
// large local array, whose frame moves the stack pointer far down at once,
// lands in it too rather than in the next stack. Pages are only committed
// when touched, so a large default size costs address space, not memory.
#pragma once
#include <cstddef>
#include <cstdint>
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
  std::size_t guard_bytes() const { return stack_bytes_; }  // at least, below every stack
  // The stack whose guard region holds `address`, or null (for fault reports).
  const void* stack_guarded_at(std::uintptr_t address) const;

 private:
  struct region {
    char* begin;  // the guard's start
    std::size_t bytes;
    char* stack;
  };
  std::size_t stack_bytes_;
  std::size_t page_;
  std::vector<void*> free_;
  std::vector<region> all_;
};

}  // namespace lockstep::emu
