// What a kernel split at its barriers by the region-loop compiler
// (src/emulator/region_loops) calls: the block's first thread claims the whole
// block, then runs each region between barriers as a loop over the block's
// threads, thread x innermost, with the values that live across a barrier in
// per-thread arrays.
#pragma once
#include <cstddef>
#include <cstring>
#include <type_traits>

#include "lockstep/emu/builtins.h"

namespace lockstep::emu {

// True when the calling thread, the first of its block, is to run the whole
// block as loops (no other thread of the block will start); false runs the
// kernel as written, one fiber per thread: check mode, the reverse and random
// thread orders, cooperative launches, and options::region_loops off.
bool loop_claim_block();
// `bytes` of storage, 64-byte aligned, that lasts until the block ends.
void* loop_arena(std::size_t bytes);

// A per-thread variable's declaration, renamed, hands its value to the array.
template <class To, class From>
inline void loop_store(To& to, const From& from) {
  if constexpr (std::is_array_v<To>) {
    static_assert(sizeof(To) == sizeof(From));
    std::memcpy(const_cast<std::remove_cv_t<To>*>(&to), const_cast<const std::remove_cv_t<From>*>(&from), sizeof(To));
  } else {
    to = from;
  }
}

class loop_block {
 public:
  loop_block() : here_(&current), dim_(current.block_dim), block_(current.block_idx), threads_(dim_.x * dim_.y * dim_.z) {}

  // One T per thread of the block, indexed by the linear thread index.
  template <class T>
  std::remove_cv_t<T>* per_thread() {
    return static_cast<std::remove_cv_t<T>*>(loop_arena(sizeof(T) * threads_));
  }
  // The same, made at the first call with this slot (a declaration in a loop
  // runs again at every iteration, its array is made once).
  template <class T>
  std::remove_cv_t<T>* per_thread(void*& slot) {
    if (!slot) slot = per_thread<T>();
    return static_cast<std::remove_cv_t<T>*>(slot);
  }
  // One flag per thread, cleared: which threads have returned.
  bool* exit_flags() {
    bool* flags = per_thread<bool>();
    std::memset(flags, 0, threads_);
    return flags;
  }

  // A region's loop body starts by entering its thread (x, y, z), linear
  // index t: threadIdx reads inside the region follow it, and so does the
  // thread's record, which device functions, printf and fault reports read.
  void enter(unsigned x, unsigned y, unsigned z, unsigned t) {
    index_ = {x, y, z};
    // Volatile: a fault report reads the record from a signal handler, so the
    // stores may not be sunk out of the loop as stores nothing reads.
    volatile thread_context& record = *here_;
    record.thread_idx.x = x;
    record.thread_idx.y = y;
    record.thread_idx.z = z;
    record.linear_tid = t;
  }
  const uint3& thread_idx() const { return index_; }
  const uint3& block_idx() const { return block_; }
  const dim3& block_dim() const { return dim_; }

 private:
  thread_context* here_;
  dim3 dim_;
  uint3 block_;
  unsigned threads_;
  uint3 index_{0, 0, 0};
};

}  // namespace lockstep::emu
