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
// Unguarded stacks are mapped this many at a time, one map each.
constexpr std::size_t stacks_per_slab = 256;
constexpr std::uint64_t canary = 0x6c6f636b73746570ull;  // "lockstep"
}  // namespace

stack_pool::stack_pool(std::size_t stack_bytes, bool guarded) : guarded_(guarded) {
  page_ = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  stack_bytes_ = (stack_bytes + page_ - 1) / page_ * page_;
}

bool stack_pool::release(void* stack) {
  free_.push_back(stack);
  return guarded_ || *static_cast<const std::uint64_t*>(stack) == canary;
}

void* stack_pool::acquire_unguarded() {
  // Below each stack a moat of a quarter of its size, never touched unless
  // the stack overflows: a small overflow lands there, not in the neighbour's
  // frames, and release() finds the canary gone.
  const std::size_t moat = (stack_bytes_ / 4 + page_ - 1) / page_ * page_, slot = moat + stack_bytes_;
  if (slab_left_ == 0) {
    const std::size_t bytes = stacks_per_slab * slot;
    void* slab = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (slab == MAP_FAILED) throw std::bad_alloc();
    all_.push_back({static_cast<char*>(slab), bytes, nullptr});
    slab_next_ = static_cast<char*>(slab);
    slab_left_ = stacks_per_slab;
  }
  char* stack = slab_next_ + moat;
  slab_next_ += slot;
  --slab_left_;
  *reinterpret_cast<std::uint64_t*>(stack) = canary;
  return stack;
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
  if (!guarded_) return acquire_unguarded();
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
    if (r.stack && address >= reinterpret_cast<std::uintptr_t>(r.begin) && address < reinterpret_cast<std::uintptr_t>(r.stack)) return r.stack;
  return nullptr;
}

}  // namespace lockstep::emu
