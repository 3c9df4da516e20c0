// Fiber stacks for one worker, reused from block to block.
//
// Each stack is an mmap'd region with an inaccessible guard region below it,
// so a kernel thread that overflows its stack faults (and the fault handler
// reports a stack overflow) instead of silently writing into a neighbour's.
// The guard is at least as large as the stack (address space only), so that a
// large local array, whose frame moves the stack pointer far down at once,
// lands in it too rather than in the next stack. Pages are only committed
// when touched, so a large default size costs address space, not memory.
//
// Every guarded stack costs the process two memory maps, and Linux allows
// about 65530 (vm.max_map_count). A cooperative launch keeps a stack for every
// thread of the grid at grid.sync() (132 x 4 blocks of 512 threads: 270336),
// so its pools may be unguarded: stacks side by side in large maps, each
// above a moat of untouched memory and with a canary at its bottom that
// release() checks, catching most overflows only after the fact.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace lockstep::emu {

class stack_pool {
 public:
  explicit stack_pool(std::size_t stack_bytes, bool guarded = true);
  ~stack_pool();
  stack_pool(const stack_pool&) = delete;
  stack_pool& operator=(const stack_pool&) = delete;

  void* acquire();
  // False when an unguarded stack's canary was overwritten (its thread
  // overflowed the stack); the stack goes back to the pool either way.
  bool release(void* stack);
  std::size_t stack_bytes() const { return stack_bytes_; }
  bool guarded() const { return guarded_; }
  std::size_t guard_bytes() const { return guarded_ ? stack_bytes_ : 0; }  // at least, below every stack
  // The stack whose guard region holds `address`, or null (for fault reports).
  const void* stack_guarded_at(std::uintptr_t address) const;

 private:
  struct region {
    char* begin;  // the guard's start
    std::size_t bytes;
    char* stack;
  };
  void* acquire_unguarded();

  std::size_t stack_bytes_;
  std::size_t page_;
  bool guarded_;
  char* slab_next_ = nullptr;  // unguarded: the next stack of the newest slab
  std::size_t slab_left_ = 0;
  std::vector<void*> free_;
  std::vector<region> all_;
};

}  // namespace lockstep::emu
