// Memory that kernel code may touch although it is neither device memory nor
// shared memory, as seen from the calling OS thread: the program's static
// data (__constant__ and __device__ variables, string literals), thread-local
// blocks (lockstep's own, where threadIdx lives), the launching thread's
// stack (where the launch keeps the kernel's arguments). And where the
// calling thread's copy of a module's thread-locals (__shared__ arrays) is.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace lockstep::emu::check {

struct address_range {
  std::uintptr_t begin = 0, end = 0;
  bool contains(std::uintptr_t a) const { return a - begin < end - begin; }
};

class address_ranges {
 public:
  void add(address_range r) { ranges_.push_back(r); }
  void sort() {
    std::sort(ranges_.begin(), ranges_.end(), [](address_range a, address_range b) { return a.begin < b.begin; });
  }
  bool contains(std::uintptr_t a) const {
    auto it = std::upper_bound(ranges_.begin(), ranges_.end(), a, [](std::uintptr_t x, address_range r) { return x < r.begin; });
    return it != ranges_.begin() && (it - 1)->contains(a);
  }

 private:
  std::vector<address_range> ranges_;  // sorted by begin
};

// Every loaded module's segments.
address_ranges static_data();
// The calling thread's stack.
address_range own_stack();
// The calling thread's thread-local blocks of every module that has one.
address_ranges own_thread_locals();
// The calling thread's thread-local block of the module holding `code`
// (created if the thread never used it), `bytes` long; {0, 0} if it has none.
address_range own_thread_locals_of(const void* code);

}  // namespace lockstep::emu::check
