// cg::memcpy_async, cg::wait and cg::wait_prior on the emulator (CUDA's
// <cooperative_groups/memcpy_async.h>). The copy is done at once, each
// thread of the group copying its share; wait and wait_prior are the group's
// sync(), after which, as on the GPU, every thread sees the whole copy.
#pragma once
#include <cstddef>
#include <cstring>

#include "lockstep/emu/cooperative_groups.h"
#include "lockstep/emu/waits.h"

#ifndef LOCKSTEP_CUDA_ALIGNED_SIZE_T
#define LOCKSTEP_CUDA_ALIGNED_SIZE_T
namespace cuda {
// libcu++'s size with an alignment promise (<cuda/barrier>): a byte count
// whose source and destination are aligned to Alignment bytes.
template <std::size_t Alignment>
struct aligned_size_t {
  static constexpr std::size_t align = Alignment;
  std::size_t value;
  explicit constexpr aligned_size_t(std::size_t size) : value(size) {}
  constexpr operator std::size_t() const { return value; }
};
}  // namespace cuda
#endif

namespace cooperative_groups {

namespace details {
// Rank r copies 16-byte pieces r, r + size, ... and rank 0 the tail.
template <class GroupT>
void copy_share(const GroupT& group, void* dst, const void* src, std::size_t bytes) {
  constexpr std::size_t piece = 16;
  const std::size_t threads = static_cast<std::size_t>(group.num_threads()), rank = static_cast<std::size_t>(group.thread_rank());
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  const std::size_t pieces = bytes / piece;
  for (std::size_t i = rank; i < pieces; i += threads) std::memcpy(d + i * piece, s + i * piece, piece);
  if (rank == 0 && bytes % piece) std::memcpy(d + pieces * piece, s + pieces * piece, bytes % piece);
}
}  // namespace details

// Copies `bytes` bytes (a size_t or cuda::aligned_size_t).
template <class GroupT, class T, class Size>
void memcpy_async(const GroupT& group, T* dst, const T* src, const Size& bytes) {
  details::copy_share(group, dst, src, static_cast<std::size_t>(bytes));
}

// Copies min(dst_count, src_count) elements of T.
template <class GroupT, class T, class DstLayout, class SrcLayout>
void memcpy_async(const GroupT& group, T* dst, const DstLayout& dst_count, const T* src, const SrcLayout& src_count) {
  const std::size_t n = static_cast<std::size_t>(dst_count) < static_cast<std::size_t>(src_count) ? static_cast<std::size_t>(dst_count)
                                                                                                  : static_cast<std::size_t>(src_count);
  details::copy_share(group, dst, src, n * sizeof(T));
}

template <class GroupT>
LOCKSTEP_WAITS(group)
void wait(const GroupT& group) {
  group.sync();
}

// Waits until at most Stage of the group's copies are in flight: none are, here.
template <unsigned Stage, class GroupT>
LOCKSTEP_WAITS(group)
void wait_prior(const GroupT& group) {
  group.sync();
}

}  // namespace cooperative_groups
