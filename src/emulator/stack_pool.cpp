#include "stack_pool.h"

#include <sys/mman.h>
#include <unistd.h>

#include <new>

namespace lockstep::emu {

namespace {
// The guards differ by up to this many pages: with guards of exactly the
// stack's size, the tops of all stacks (where the waiting threads' frames
// are) would lie a power of two apart and fall into the same cache sets,
// which slows a kernel with barriers by a third.
constexpr std::size_t guard_colours = 16;
}  // namespace

stack_pool::stack_pool(std::size_t stack_bytes) {
  page_ = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  stack_bytes_ = (stack_bytes + page_ - 1) / page_ * page_;
}

stack_pool::~stack_pool() {
  for (const region& r : all_) munmap(r.begin, r.bytes);
}

void* stack_pool::acquire() {
  if (!free_.empty()) {
    void* s = free_.back();
    free_.pop_back();
    return s;
  }
  // Reserved inaccessible, then the stack part opened: the guard never takes memory.
  const std::size_t guard = stack_bytes_ + all_.size() % guard_colours * page_;
  void* begin = mmap(nullptr, guard + stack_bytes_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (begin == MAP_FAILED) throw std::bad_alloc();
  char* stack = static_cast<char*>(begin) + guard;
  if (mprotect(stack, stack_bytes_, PROT_READ | PROT_WRITE) != 0) {
    munmap(begin, guard + stack_bytes_);
    throw std::bad_alloc();
  }
  all_.push_back({static_cast<char*>(begin), guard + stack_bytes_, stack});
  return stack;
}

const void* stack_pool::stack_guarded_at(std::uintptr_t address) const {
  for (const region& r : all_)
    if (address >= reinterpret_cast<std::uintptr_t>(r.begin) && address < reinterpret_cast<std::uintptr_t>(r.stack)) return r.stack;
  return nullptr;
}

}  // namespace lockstep::emu
