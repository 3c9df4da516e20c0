// cooperative_groups on the emulator: what CUDA's <cooperative_groups.h>
// declares, over the emulator's barriers and warp collectives (sync.h).
//
// Groups: thread_block, thread_block_tile<N> (N = 1, 2, 4, ..., 32 over warp
// collectives; 64 to 1024 over the block's barrier), coalesced_group, grid_group (grid.sync()
// needs a cooperative launch), the type-erased thread_group, tiled_partition,
// binary_partition, labeled_partition, this_thread, invoke_one. cg::reduce,
// the scans and memcpy_async are in cooperative_groups/*.h, one header per
// CUDA header.
//
// A tile's mask is the same as on the GPU (the tile's lanes of the warp), and
// every warp-level call of a group is one warp collective of that mask, so the
// emulator's checks (lanes that exited, lanes that meet at different calls)
// apply to groups too.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

#include "lockstep/emu/builtins.h"
#include "lockstep/emu/sync.h"
#include "lockstep/emu/waits.h"

namespace cooperative_groups {

namespace details {

enum group_type : unsigned { coalesced_group_id = 1, thread_block_id = 2, grid_group_id = 3 };

inline unsigned laneid() { return ::lockstep::emu::in_kernel("cooperative_groups").linear_tid & 31u; }
inline unsigned lanemask_lt() { return (1u << laneid()) - 1u; }

// The lane of the `rank`-th set bit of `mask` (32 if there is none).
inline unsigned nth_lane(unsigned mask, unsigned rank) {
  for (unsigned lane = 0; lane < 32; ++lane)
    if (mask >> lane & 1u) {
      if (rank == 0) return lane;
      --rank;
    }
  return 32;
}

// The bits of `lanes` that are in `mask`, packed in rank order (bit r: rank r).
inline unsigned pack_lanes(unsigned mask, unsigned lanes) {
  unsigned packed = 0, rank = 0;
  for (unsigned lane = 0; lane < 32; ++lane)
    if (mask >> lane & 1u) packed |= (lanes >> lane & 1u) << rank++;
  return packed;
}

// Shuffles of any trivially copyable type, as CUDA's: values over 8 bytes move
// in 8-byte pieces, one warp collective each.
template <class T>
LOCKSTEP_WAITS(warp)
T shuffle(::lockstep::emu::warp_op op, unsigned mask, const T& value, int lane_arg, int width) {
  static_assert(std::is_trivially_copyable_v<T>, "cooperative_groups shuffles move trivially copyable values");
  constexpr std::size_t pieces = (sizeof(T) + 7) / 8;
  std::uint64_t bits[pieces] = {};
  std::memcpy(bits, &value, sizeof(T));
  for (std::size_t i = 0; i < pieces; ++i) bits[i] = ::lockstep::emu::warp_collective(op, mask, bits[i], lane_arg, width);
  T out;
  std::memcpy(&out, bits, sizeof(T));
  return out;
}

LOCKSTEP_WAITS(warp) inline unsigned ballot(unsigned mask, int predicate) {
  return static_cast<unsigned>(::lockstep::emu::warp_collective(::lockstep::emu::warp_op::ballot, mask, predicate != 0, 0, 32));
}

template <class T>
LOCKSTEP_WAITS(warp)
unsigned match_any(unsigned mask, const T& value) {
  static_assert(std::is_integral_v<T> || std::is_pointer_v<T>, "match_any compares integral values");
  return static_cast<unsigned>(::lockstep::emu::warp_collective(::lockstep::emu::warp_op::match_any, mask, ::lockstep::emu::to_bits(value), 0, 32));
}

struct access;  // builds groups from masks (partitions)

}  // namespace details

// The type-erased group: a block, a grid, or warp lanes (tiles and coalesced groups).
class thread_group {
 public:
  unsigned long long size() const;
  unsigned long long num_threads() const { return size(); }
  unsigned long long thread_rank() const;
  LOCKSTEP_WAITS(group) void sync() const;
  unsigned get_type() const { return type_; }

 protected:
  friend struct details::access;
  explicit thread_group(unsigned type) : type_(type) {}
  unsigned type_;
  // Lane groups only:
  unsigned mask_ = 0;
  unsigned meta_rank_ = 0;
  unsigned meta_size_ = 1;
  bool is_tiled_ = false;  // a tile of a block: consecutive lanes from a tile boundary
};

class thread_block : public thread_group {
 public:
  LOCKSTEP_WAITS(barrier) static void sync() { __syncthreads(); }
  static unsigned thread_rank() { return ::lockstep::emu::in_kernel("thread_block").linear_tid; }
  static unsigned size() {
    const dim3& b = ::lockstep::emu::in_kernel("thread_block").block_dim;
    return b.x * b.y * b.z;
  }
  static unsigned num_threads() { return size(); }
  static dim3 group_index() {
    const uint3& b = ::lockstep::emu::in_kernel("thread_block").block_idx;
    return dim3(b.x, b.y, b.z);
  }
  static dim3 thread_index() {
    const uint3& t = ::lockstep::emu::in_kernel("thread_block").thread_idx;
    return dim3(t.x, t.y, t.z);
  }
  static dim3 group_dim() { return ::lockstep::emu::in_kernel("thread_block").block_dim; }
  static dim3 dim_threads() { return group_dim(); }

 private:
  friend thread_block this_thread_block();
  thread_block() : thread_group(details::thread_block_id) {}
};

inline thread_block this_thread_block() { return thread_block(); }

// CUDA's scratch for tiles of more than 32 threads before sm_80; the emulator needs none.
template <unsigned MaxBlockSize>
struct block_tile_memory {
  unsigned char unused;
};
template <unsigned MaxBlockSize>
thread_block this_thread_block(block_tile_memory<MaxBlockSize>&) {
  return this_thread_block();
}

class grid_group : public thread_group {
 public:
  // True in a cooperative launch, where sync() may be called.
  bool is_valid() const { return ::lockstep::emu::launch_is_cooperative(); }
  LOCKSTEP_WAITS(grid) __attribute__((always_inline)) void sync() const { ::lockstep::emu::grid_sync(); }
  static unsigned long long num_blocks() {
    const dim3& g = ::lockstep::emu::in_kernel("grid_group").grid_dim;
    return 1ull * g.x * g.y * g.z;
  }
  static unsigned long long block_rank() {
    const auto& c = ::lockstep::emu::in_kernel("grid_group");
    return (1ull * c.block_idx.z * c.grid_dim.y + c.block_idx.y) * c.grid_dim.x + c.block_idx.x;
  }
  static unsigned long long size() { return num_blocks() * thread_block::size(); }
  static unsigned long long num_threads() { return size(); }
  static unsigned long long thread_rank() { return block_rank() * thread_block::size() + thread_block::thread_rank(); }
  static dim3 dim_blocks() { return ::lockstep::emu::in_kernel("grid_group").grid_dim; }
  static dim3 block_index() { return thread_block::group_index(); }
  static dim3 group_dim() { return dim_threads(); }
  // The grid's extent in threads, and this thread's index in it.
  static dim3 dim_threads() {
    const dim3 g = dim_blocks(), b = thread_block::group_dim();
    return dim3(g.x * b.x, g.y * b.y, g.z * b.z);
  }
  static dim3 thread_index() {
    const dim3 b = thread_block::group_dim(), i = block_index(), t = thread_block::thread_index();
    return dim3(i.x * b.x + t.x, i.y * b.y + t.y, i.z * b.z + t.z);
  }

 private:
  friend grid_group this_grid();
  grid_group() : thread_group(details::grid_group_id) {}
};

inline grid_group this_grid() { return grid_group(); }

// Lanes of one warp, ranked by lane: coalesced_threads(), partitions.
class coalesced_group : public thread_group {
 public:
  unsigned num_threads() const { return static_cast<unsigned>(__builtin_popcount(mask_)); }
  unsigned size() const { return num_threads(); }
  unsigned thread_rank() const { return static_cast<unsigned>(__builtin_popcount(mask_ & details::lanemask_lt())); }
  unsigned meta_group_rank() const { return meta_rank_; }
  unsigned meta_group_size() const { return meta_size_; }
  LOCKSTEP_WAITS(warp) void sync() const { __syncwarp(mask_); }

  template <class T>
  LOCKSTEP_WAITS(warp)
  std::remove_cv_t<std::remove_reference_t<T>> shfl(T&& value, int src_rank) const {
    using V = std::remove_cv_t<std::remove_reference_t<T>>;
    return details::shuffle<V>(::lockstep::emu::warp_op::shfl_idx, mask_, value, static_cast<int>(details::nth_lane(mask_, src_rank)), 32);
  }
  // From the member `delta` ranks above (below); a thread with none keeps its value.
  template <class T>
  LOCKSTEP_WAITS(warp)
  std::remove_cv_t<std::remove_reference_t<T>> shfl_down(T&& value, unsigned delta) const {
    using V = std::remove_cv_t<std::remove_reference_t<T>>;
    const unsigned rank = thread_rank(), source = rank + delta < size() ? rank + delta : rank;
    return details::shuffle<V>(::lockstep::emu::warp_op::shfl_idx, mask_, value, static_cast<int>(details::nth_lane(mask_, source)), 32);
  }
  template <class T>
  LOCKSTEP_WAITS(warp)
  std::remove_cv_t<std::remove_reference_t<T>> shfl_up(T&& value, unsigned delta) const {
    using V = std::remove_cv_t<std::remove_reference_t<T>>;
    const unsigned rank = thread_rank(), source = rank >= delta ? rank - delta : rank;
    return details::shuffle<V>(::lockstep::emu::warp_op::shfl_idx, mask_, value, static_cast<int>(details::nth_lane(mask_, source)), 32);
  }
  LOCKSTEP_WAITS(warp) int any(int predicate) const { return details::ballot(mask_, predicate) != 0; }
  LOCKSTEP_WAITS(warp) int all(int predicate) const { return details::ballot(mask_, predicate) == mask_; }
  // Bit r: the member of rank r.
  LOCKSTEP_WAITS(warp) unsigned ballot(int predicate) const { return details::pack_lanes(mask_, details::ballot(mask_, predicate)); }
  template <class T>
  LOCKSTEP_WAITS(warp)
  unsigned match_any(T value) const {
    return details::pack_lanes(mask_, details::match_any(mask_, value));
  }
  template <class T>
  LOCKSTEP_WAITS(warp)
  unsigned match_all(T value, int& pred) const {
    const unsigned same = details::match_any(mask_, value);
    pred = same == mask_;
    return pred ? details::pack_lanes(mask_, mask_) : 0u;
  }

 protected:
  friend struct details::access;
  friend coalesced_group coalesced_threads();
  explicit coalesced_group(unsigned mask) : thread_group(details::coalesced_group_id) { mask_ = mask; }
};

// The lanes of the warp that call it together (__activemask()).
LOCKSTEP_WAITS(warp) inline coalesced_group coalesced_threads() { return coalesced_group(__activemask()); }

template <unsigned Size, class ParentT = void>
class thread_block_tile;

namespace details {

// A tile of Size consecutive threads of one warp (Size 1, 2, 4, 8, 16 or 32).
template <unsigned Size>
class warp_tile : public thread_group {
 public:
  static constexpr unsigned num_threads() { return Size; }
  static constexpr unsigned size() { return Size; }
  static unsigned thread_rank() { return thread_block::thread_rank() & (Size - 1); }
  unsigned meta_group_rank() const { return meta_rank_; }
  unsigned meta_group_size() const { return meta_size_; }
  LOCKSTEP_WAITS(warp) static void sync() { __syncwarp(build_mask()); }

  template <class T>
  LOCKSTEP_WAITS(warp)
  std::remove_cv_t<std::remove_reference_t<T>> shfl(T&& value, int src_rank) const {
    return details::shuffle<std::remove_cv_t<std::remove_reference_t<T>>>(::lockstep::emu::warp_op::shfl_idx, build_mask(), value, src_rank, Size);
  }
  template <class T>
  LOCKSTEP_WAITS(warp)
  std::remove_cv_t<std::remove_reference_t<T>> shfl_down(T&& value, unsigned delta) const {
    return details::shuffle<std::remove_cv_t<std::remove_reference_t<T>>>(::lockstep::emu::warp_op::shfl_down, build_mask(), value,
                                                                          static_cast<int>(delta), Size);
  }
  template <class T>
  LOCKSTEP_WAITS(warp)
  std::remove_cv_t<std::remove_reference_t<T>> shfl_up(T&& value, unsigned delta) const {
    return details::shuffle<std::remove_cv_t<std::remove_reference_t<T>>>(::lockstep::emu::warp_op::shfl_up, build_mask(), value,
                                                                          static_cast<int>(delta), Size);
  }
  template <class T>
  LOCKSTEP_WAITS(warp)
  std::remove_cv_t<std::remove_reference_t<T>> shfl_xor(T&& value, unsigned lane_mask) const {
    return details::shuffle<std::remove_cv_t<std::remove_reference_t<T>>>(::lockstep::emu::warp_op::shfl_xor, build_mask(), value,
                                                                          static_cast<int>(lane_mask), Size);
  }
  LOCKSTEP_WAITS(warp) int any(int predicate) const { return details::ballot(build_mask(), predicate) != 0; }
  LOCKSTEP_WAITS(warp) int all(int predicate) const { return details::ballot(build_mask(), predicate) == build_mask(); }
  // Bit r: the tile's thread of rank r.
  LOCKSTEP_WAITS(warp) unsigned ballot(int predicate) const { return details::ballot(build_mask(), predicate) >> first_lane(); }
  template <class T>
  LOCKSTEP_WAITS(warp)
  unsigned match_any(T value) const {
    return details::match_any(build_mask(), value) >> first_lane();
  }
  template <class T>
  LOCKSTEP_WAITS(warp)
  unsigned match_all(T value, int& pred) const {
    const unsigned same = details::match_any(build_mask(), value);
    pred = same == build_mask();
    return pred ? build_mask() >> first_lane() : 0u;
  }

 protected:
  static unsigned first_lane() { return details::laneid() & ~(Size - 1); }
  // The tile's lanes of the warp, as the GPU's (lanes a partial warp lacks included).
  static unsigned build_mask() { return Size == 32 ? 0xffffffffu : ((1u << Size) - 1u) << first_lane(); }
  warp_tile(unsigned meta_rank, unsigned meta_size) : thread_group(details::coalesced_group_id) {
    mask_ = build_mask();
    meta_rank_ = meta_rank;
    meta_size_ = meta_size;
    is_tiled_ = true;
  }
};

// Memory the threads of a block share for multi-warp tiles' exchanges (the
// block's fibers share their worker's thread-locals, as __shared__ arrays
// do): a slot of up to 16 bytes per thread.
constexpr std::size_t scratch_slot_bytes = 16;
inline unsigned char* block_scratch() {
  alignas(16) thread_local unsigned char slots[1024 * scratch_slot_bytes];
  return slots;
}
template <class T>
T slot_value(const unsigned char* slot) {
  T v;
  std::memcpy(&v, slot, sizeof(T));
  return v;
}

// A tile of Size (64, 128, ..., 1024) consecutive threads of a block. Its
// sync() is the block's barrier, so every tile of the block must reach it
// together (as in CUDA's samples); its exchanges go through block_scratch.
// As in CUDA, it is no thread_group.
template <unsigned Size>
class multi_warp_tile {
  static_assert(Size <= 1024 && (Size & (Size - 1)) == 0, "thread_block_tile: Size must be a power of two of at most 1024");

 public:
  static constexpr unsigned num_threads() { return Size; }
  static constexpr unsigned size() { return Size; }
  static unsigned thread_rank() { return thread_block::thread_rank() & (Size - 1); }
  unsigned meta_group_rank() const { return meta_rank_; }
  unsigned meta_group_size() const { return meta_size_; }
  LOCKSTEP_WAITS(block) static void sync() { __syncthreads(); }

  // Every thread's value, for `fold(first_slot_of_the_tile)` to read between two barriers.
  template <class T, class Fold>
  LOCKSTEP_WAITS(block)
  static auto exchange(const T& value, Fold&& fold) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= scratch_slot_bytes,
                  "multi-warp tiles exchange trivially copyable values of at most 16 bytes");
    unsigned char* slots = block_scratch();
    std::memcpy(slots + thread_block::thread_rank() * scratch_slot_bytes, &value, sizeof(T));
    sync();
    auto result = fold(slots + (thread_block::thread_rank() - thread_rank()) * scratch_slot_bytes);
    sync();
    return result;
  }
  template <class T>
  LOCKSTEP_WAITS(block)
  std::remove_cv_t<std::remove_reference_t<T>> shfl(T&& value, unsigned src_rank) const {
    using V = std::remove_cv_t<std::remove_reference_t<T>>;
    return exchange(V(value), [&](const unsigned char* tile) { return slot_value<V>(tile + (src_rank % Size) * scratch_slot_bytes); });
  }
  LOCKSTEP_WAITS(block) int any(int predicate) const {
    return exchange(predicate != 0, [](const unsigned char* tile) {
      for (unsigned r = 0; r < Size; ++r)
        if (slot_value<bool>(tile + r * scratch_slot_bytes)) return 1;
      return 0;
    });
  }
  LOCKSTEP_WAITS(block) int all(int predicate) const {
    return exchange(predicate != 0, [](const unsigned char* tile) {
      for (unsigned r = 0; r < Size; ++r)
        if (!slot_value<bool>(tile + r * scratch_slot_bytes)) return 0;
      return 1;
    });
  }

 protected:
  multi_warp_tile(unsigned meta_rank, unsigned meta_size) : meta_rank_(meta_rank), meta_size_(meta_size) {}
  unsigned meta_rank_;
  unsigned meta_size_;
};

template <class GroupT>
struct is_multi_warp_tile : std::false_type {};

}  // namespace details

// A tile of Size consecutive threads of a block: Size 1, 2, 4, 8, 16 or 32
// (one warp's lanes, with warp collectives), or 64 to 1024.
template <unsigned Size>
class thread_block_tile<Size, void> : public std::conditional_t<(Size <= 32), details::warp_tile<Size>, details::multi_warp_tile<Size>> {
  using base = std::conditional_t<(Size <= 32), details::warp_tile<Size>, details::multi_warp_tile<Size>>;

 protected:
  friend struct details::access;
  template <unsigned, class>
  friend class thread_block_tile;
  thread_block_tile(unsigned meta_rank, unsigned meta_size) : base(meta_rank, meta_size) {}
};

namespace details {
template <unsigned Size, class ParentT>
struct is_multi_warp_tile<thread_block_tile<Size, ParentT>> : std::bool_constant<(Size > 32)> {};
}  // namespace details

// tiled_partition<Size>(parent)'s result; converts to thread_block_tile<Size>.
template <unsigned Size, class ParentT>
class thread_block_tile : public thread_block_tile<Size, void> {
 public:
  explicit thread_block_tile(const ParentT& parent)
      : thread_block_tile<Size, void>(static_cast<unsigned>(parent.thread_rank() / Size),
                                      static_cast<unsigned>((parent.num_threads() + Size - 1) / Size)) {}
};

// Tiles of Size threads of a block or of a larger tile, ranked as the parent's threads.
namespace details {
template <class ParentT>
constexpr bool splits_into(unsigned size) {
  if constexpr (std::is_same_v<ParentT, thread_block>)
    return true;
  else
    return ParentT::size() > size;
}
}  // namespace details

template <unsigned Size, class ParentT>
thread_block_tile<Size, ParentT> tiled_partition(const ParentT& parent) {
  static_assert(details::splits_into<ParentT>(Size), "tiled_partition<Size>: a tile can only be split into smaller tiles");
  return thread_block_tile<Size, ParentT>(parent);
}

namespace details {
struct access {
  static coalesced_group from_mask(unsigned mask, unsigned meta_rank, unsigned meta_size, bool tiled) {
    coalesced_group g(mask);
    g.meta_rank_ = meta_rank;
    g.meta_size_ = meta_size;
    g.is_tiled_ = tiled;
    return g;
  }
  static unsigned mask(const thread_group& g) { return g.mask_; }
  static thread_block_tile<1, void> unit_tile() { return thread_block_tile<1, void>(0, 1); }
  static bool tiled(const thread_group& g) { return g.is_tiled_; }
};

[[noreturn]] inline void bad_tile_size(unsigned tile_size) {
  ::lockstep::emu::kernel_misuse("cooperative_groups::tiled_partition(parent, " + std::to_string(tile_size) +
                                 "): the tile size must be a power of two from 1 to 32 (on a GPU the kernel traps)");
}

// CUDA's tiling of a coalesced group (tiled: from a tile of a block) or of a block.
inline coalesced_group tile_lanes(const thread_group& parent, unsigned tile_size) {
  if (tile_size == 0 || tile_size > 32 || (tile_size & (tile_size - 1))) bad_tile_size(tile_size);
  if (parent.get_type() == thread_block_id) {
    const unsigned rank = thread_block::thread_rank(), threads = thread_block::size();
    const unsigned base = rank & ~(tile_size - 1), length = threads - base < tile_size ? threads - base : tile_size;
    const unsigned mask = (length == 32 ? 0xffffffffu : (1u << length) - 1u) << (laneid() & ~(tile_size - 1));
    return access::from_mask(mask, rank / tile_size, (threads + tile_size - 1) / tile_size, true);
  }
  const unsigned mask = access::mask(parent), size = static_cast<unsigned>(__builtin_popcount(mask));
  const unsigned rank = static_cast<unsigned>(__builtin_popcount(mask & lanemask_lt()));
  if (size <= tile_size) return access::from_mask(mask, 0, 1, access::tiled(parent));
  if (access::tiled(parent)) {
    const unsigned base = rank & ~(tile_size - 1), length = size - base < tile_size ? size - base : tile_size;
    const unsigned tile_mask = (length == 32 ? 0xffffffffu : (1u << length) - 1u) << (laneid() & ~(tile_size - 1));
    return access::from_mask(tile_mask, rank / tile_size, size / tile_size, true);
  }
  // The members of ranks [rank / tile_size * tile_size, + tile_size).
  unsigned tile_mask = 0;
  for (unsigned r = rank / tile_size * tile_size; r < size && r < (rank / tile_size + 1) * tile_size; ++r) tile_mask |= 1u << nth_lane(mask, r);
  return access::from_mask(tile_mask, rank / tile_size, (size + tile_size - 1) / tile_size, false);
}
}  // namespace details

// The calling thread alone.
inline thread_block_tile<1, void> this_thread() { return details::access::unit_tile(); }

// Run-time tiling: tiles of tile_size (a power of two up to 32) threads.
inline thread_group tiled_partition(const thread_group& parent, unsigned tile_size) { return details::tile_lanes(parent, tile_size); }
inline thread_group tiled_partition(const thread_block& parent, unsigned tile_size) { return details::tile_lanes(parent, tile_size); }
inline coalesced_group tiled_partition(const coalesced_group& parent, unsigned tile_size) { return details::tile_lanes(parent, tile_size); }

// The group's threads whose predicate is the same as the caller's; meta rank 1: true.
template <class GroupT>
LOCKSTEP_WAITS(warp)
coalesced_group binary_partition(const GroupT& group, bool pred) {
  const unsigned mask = details::access::mask(group), set = details::ballot(mask, pred);
  if (set == mask || set == 0) return details::access::from_mask(mask, 0, 1, false);
  return details::access::from_mask(pred ? set : mask & ~set, pred ? 1u : 0u, 2, false);
}

// The group's threads whose label is the same as the caller's, ranked by their lowest lane.
template <class GroupT, class Label>
LOCKSTEP_WAITS(warp)
coalesced_group labeled_partition(const GroupT& group, Label label) {
  static_assert(std::is_integral_v<Label> || std::is_pointer_v<Label>, "labeled_partition: the label must be an integral or pointer type");
  if constexpr (std::is_same_v<Label, bool>) {
    return binary_partition(group, label);
  } else {
    const unsigned mask = details::access::mask(group), same = details::match_any(mask, label);
    const unsigned leader = static_cast<unsigned>(__builtin_ctz(same));
    const unsigned leaders = details::ballot(mask, details::laneid() == leader);
    return details::access::from_mask(same, static_cast<unsigned>(__builtin_popcount(leaders & ((1u << leader) - 1u))),
                                      static_cast<unsigned>(__builtin_popcount(leaders)), false);
  }
}

template <class GroupT>
LOCKSTEP_WAITS(group)
void sync(const GroupT& group) {
  group.sync();
}
template <class GroupT>
auto thread_rank(const GroupT& group) -> decltype(group.thread_rank()) {
  return group.thread_rank();
}
template <class GroupT>
auto group_size(const GroupT& group) -> decltype(group.num_threads()) {
  return group.num_threads();
}

inline unsigned long long thread_group::size() const {
  switch (type_) {
    case details::thread_block_id:
      return thread_block::size();
    case details::grid_group_id:
      return grid_group::size();
    default:
      return static_cast<unsigned>(__builtin_popcount(mask_));
  }
}

inline unsigned long long thread_group::thread_rank() const {
  switch (type_) {
    case details::thread_block_id:
      return thread_block::thread_rank();
    case details::grid_group_id:
      return grid_group::thread_rank();
    default:
      return static_cast<unsigned>(__builtin_popcount(mask_ & details::lanemask_lt()));
  }
}

inline void thread_group::sync() const {
  switch (type_) {
    case details::thread_block_id:
      __syncthreads();
      break;
    case details::grid_group_id:
      ::lockstep::emu::grid_sync();
      break;
    default:
      __syncwarp(mask_);
      break;
  }
}

// fn(args...) in one thread of the group (its rank 0).
template <class GroupT, class Fn, class... Args>
void invoke_one(const GroupT& group, Fn&& fn, Args&&... args) {
  if (group.thread_rank() == 0) std::forward<Fn>(fn)(std::forward<Args>(args)...);
}

// fn(args...) in one thread of the group, its result returned to every thread.
template <class GroupT, class Fn, class... Args>
LOCKSTEP_WAITS(group)
auto invoke_one_broadcast(const GroupT& group, Fn&& fn, Args&&... args) {
  using result_type = std::remove_cv_t<std::remove_reference_t<decltype(std::forward<Fn>(fn)(std::forward<Args>(args)...))>>;
  static_assert(!std::is_void_v<result_type>, "invoke_one_broadcast: use invoke_one for functions returning void");
  result_type result{};
  if (group.thread_rank() == 0) result = std::forward<Fn>(fn)(std::forward<Args>(args)...);
  return group.shfl(result, 0);
}

}  // namespace cooperative_groups
