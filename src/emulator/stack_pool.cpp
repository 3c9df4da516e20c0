#include "stack_pool.h"

#include <sys/mman.h>
#include <unistd.h>

#include <new>

namespace lockstep::emu {

stack_pool::stack_pool(std::size_t stack_bytes) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  guard_bytes_ = page;
  stack_bytes_ = (stack_bytes + page - 1) / page * page;
}

stack_pool::~stack_pool() {
  for (void* s : all_) munmap(static_cast<char*>(s) - guard_bytes_, stack_bytes_ + guard_bytes_);
}

void* stack_pool::acquire() {
  if (!free_.empty()) {
    void* s = free_.back();
    free_.pop_back();
    return s;
  }
  void* region = mmap(nullptr, stack_bytes_ + guard_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (region == MAP_FAILED) throw std::bad_alloc();
  mprotect(region, guard_bytes_, PROT_NONE);
  void* stack = static_cast<char*>(region) + guard_bytes_;
  all_.push_back(stack);
  return stack;
}

}  // namespace lockstep::emu
