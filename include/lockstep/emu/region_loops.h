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

  // A region's loop: for (b.first(); b.more(); b.next()), with b.t the running
  // thread's linear index; threadIdx reads follow it.
  void first() {
    t = 0;
    index_ = {0, 0, 0};
    publish();
  }
  bool more() const { return t < threads_; }
  void next() {
    ++t;
    if (++index_.x == dim_.x) {
      index_.x = 0;
      if (++index_.y == dim_.y) {
        index_.y = 0;
        ++index_.z;
      }
    }
    publish();
  }
  unsigned t = 0;
  // What threadIdx, blockIdx and blockDim read inside a region's loop.
  const uint3& thread_idx() const { return index_; }
  const uint3& block_idx() const { return block_; }
  const dim3& block_dim() const { return dim_; }

 private:
  void publish() {
    here_->thread_idx = index_;
    here_->linear_tid = t;
  }
  thread_context* here_;
  dim3 dim_;
  uint3 block_;
  unsigned threads_;
  uint3 index_{0, 0, 0};
};

}  // namespace lockstep::emu
