// Barriers and warp collectives on the emulator.
//
// Each call is a rendezvous: the calling thread's fiber waits until every
// thread the operation names has arrived, exactly the points where CUDA
// threads may observe each other. Between them threads run without switching.
// The wrappers are always inlined, so the emulator sees the kernel's own
// address as the caller (check mode's synccheck names that line).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "lockstep/emu/waits.h"

namespace lockstep::emu {

enum class barrier_reduce { none, count, all, any };
LOCKSTEP_WAITS(block) int block_barrier(barrier_reduce reduce, int predicate);

enum class warp_op : std::uint8_t {
  sync,
  shfl_idx,
  shfl_up,
  shfl_down,
  shfl_xor,
  ballot,
  any,
  all,
  reduce_add,
  reduce_min,
  reduce_max,
  reduce_and,
  reduce_or,
  reduce_xor,
  match_any,
  active,
  wmma_load,
  wmma_store,
  wmma_mma
};  // nvcuda::wmma's *_sync functions (emu/wmma.h)
LOCKSTEP_WAITS(warp) std::uint64_t warp_collective(warp_op op, unsigned mask, std::uint64_t value, int lane_arg, int width);
// Whether the block runs as region loops and a collective step is gathering
// its lanes' calls, which warp_collective then records and answers with 0
// (lockstep/emu/region_loops.h): a collective whose work needs its whole
// warp (wmma's) does it when the step runs it again, answered.
bool loop_gathering();
// cooperative_groups' grid.sync(): the block's threads meet, then the block
// waits for every other block of the grid. Only in a cooperative launch;
// elsewhere the launch fails with an error saying so.
LOCKSTEP_WAITS(grid) void grid_sync();
bool launch_is_cooperative();  // grid_group::is_valid()
// Lets the block's other threads run before the caller goes on: a thread
// waiting for them outside a barrier (src/emulator/execution/thread_yield.cpp).
LOCKSTEP_WAITS(yield) void device_yield();
// Ends the launch with a kernel_error naming the calling thread: a misuse the GPU traps on.
[[noreturn]] void kernel_misuse(const std::string& what);

// A value of 1, 2, 4 or 8 bytes as the unsigned integer of its size: GCC's
// vectoriser converts that to and from 64 bits, where it gives up on a
// memcpy into part of a 64-bit value (region loops' shuffles ran 4x slower).
template <std::size_t bytes>
using bits_of_size = std::conditional_t<bytes == 1, std::uint8_t,
                                        std::conditional_t<bytes == 2, std::uint16_t, std::conditional_t<bytes == 4, std::uint32_t, std::uint64_t>>>;

// A value in the low bytes of 64 bits, the rest zero (warp collectives move these).
template <class T>
inline std::uint64_t to_bits(T v) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>, "warp shuffles move values of at most 8 bytes");
  if constexpr ((sizeof(T) & (sizeof(T) - 1)) == 0) {
    return __builtin_bit_cast(bits_of_size<sizeof(T)>, v);
  } else {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof(T));
    return bits;
  }
}
template <class T>
inline T from_bits(std::uint64_t bits) {
  if constexpr ((sizeof(T) & (sizeof(T) - 1)) == 0) {
    return __builtin_bit_cast(T, static_cast<bits_of_size<sizeof(T)>>(bits));
  } else {
    T v;
    std::memcpy(&v, &bits, sizeof(T));
    return v;
  }
}

}  // namespace lockstep::emu

#define LOCKSTEP_SYNC_WRAPPER inline __attribute__((always_inline))

LOCKSTEP_WAITS(barrier) LOCKSTEP_SYNC_WRAPPER void __syncthreads() { ::lockstep::emu::block_barrier(::lockstep::emu::barrier_reduce::none, 0); }
LOCKSTEP_WAITS(block) LOCKSTEP_SYNC_WRAPPER int __syncthreads_count(int predicate) {
  return ::lockstep::emu::block_barrier(::lockstep::emu::barrier_reduce::count, predicate);
}
LOCKSTEP_WAITS(block) LOCKSTEP_SYNC_WRAPPER int __syncthreads_and(int predicate) {
  return ::lockstep::emu::block_barrier(::lockstep::emu::barrier_reduce::all, predicate);
}
LOCKSTEP_WAITS(block) LOCKSTEP_SYNC_WRAPPER int __syncthreads_or(int predicate) {
  return ::lockstep::emu::block_barrier(::lockstep::emu::barrier_reduce::any, predicate);
}

// A thread that sleeps is waiting for others (a spin on a flag): they run meanwhile.
LOCKSTEP_WAITS(yield) inline void __nanosleep(unsigned) { ::lockstep::emu::device_yield(); }

LOCKSTEP_WAITS(warp) LOCKSTEP_SYNC_WRAPPER void __syncwarp(unsigned mask = 0xffffffffu) {
  ::lockstep::emu::warp_collective(::lockstep::emu::warp_op::sync, mask, 0, 0, 32);
}
// The lanes that reach __activemask together: it waits for the warp's other
// lanes until each has arrived, exited, or stopped at another barrier.
LOCKSTEP_WAITS(warp) LOCKSTEP_SYNC_WRAPPER unsigned __activemask() {
  return static_cast<unsigned>(::lockstep::emu::warp_collective(::lockstep::emu::warp_op::active, 0, 0, 0, 32));
}

#define LOCKSTEP_SHFL(fn, op, arg_t)                                                                          \
  template <class T>                                                                                          \
  LOCKSTEP_WAITS(warp)                                                                                        \
  LOCKSTEP_SYNC_WRAPPER T fn(unsigned mask, T var, arg_t lane_arg, int width = 32) {                          \
    using namespace ::lockstep::emu;                                                                          \
    return from_bits<T>(warp_collective(warp_op::op, mask, to_bits(var), static_cast<int>(lane_arg), width)); \
  }
LOCKSTEP_SHFL(__shfl_sync, shfl_idx, int)
LOCKSTEP_SHFL(__shfl_up_sync, shfl_up, unsigned)
LOCKSTEP_SHFL(__shfl_down_sync, shfl_down, unsigned)
LOCKSTEP_SHFL(__shfl_xor_sync, shfl_xor, int)
#undef LOCKSTEP_SHFL

LOCKSTEP_WAITS(warp) LOCKSTEP_SYNC_WRAPPER unsigned __ballot_sync(unsigned mask, int predicate) {
  return static_cast<unsigned>(::lockstep::emu::warp_collective(::lockstep::emu::warp_op::ballot, mask, predicate != 0, 0, 32));
}
LOCKSTEP_WAITS(warp) LOCKSTEP_SYNC_WRAPPER int __any_sync(unsigned mask, int predicate) {
  return static_cast<int>(::lockstep::emu::warp_collective(::lockstep::emu::warp_op::any, mask, predicate != 0, 0, 32));
}
LOCKSTEP_WAITS(warp) LOCKSTEP_SYNC_WRAPPER int __all_sync(unsigned mask, int predicate) {
  return static_cast<int>(::lockstep::emu::warp_collective(::lockstep::emu::warp_op::all, mask, predicate != 0, 0, 32));
}

// sm_80 warp reductions over 32-bit integers; lane_arg 1 marks a signed min/max.
LOCKSTEP_WAITS(warp) LOCKSTEP_SYNC_WRAPPER unsigned __reduce_add_sync(unsigned mask, unsigned v) {
  return static_cast<unsigned>(::lockstep::emu::warp_collective(::lockstep::emu::warp_op::reduce_add, mask, v, 0, 32));
}
LOCKSTEP_WAITS(warp) LOCKSTEP_SYNC_WRAPPER int __reduce_add_sync(unsigned mask, int v) {
  return static_cast<int>(__reduce_add_sync(mask, static_cast<unsigned>(v)));
}
LOCKSTEP_WAITS(warp) LOCKSTEP_SYNC_WRAPPER unsigned __reduce_min_sync(unsigned mask, unsigned v) {
  return static_cast<unsigned>(::lockstep::emu::warp_collective(::lockstep::emu::warp_op::reduce_min, mask, v, 0, 32));
}
LOCKSTEP_WAITS(warp) LOCKSTEP_SYNC_WRAPPER int __reduce_min_sync(unsigned mask, int v) {
  return static_cast<int>(::lockstep::emu::warp_collective(::lockstep::emu::warp_op::reduce_min, mask, static_cast<unsigned>(v), 1, 32));
}
LOCKSTEP_WAITS(warp) LOCKSTEP_SYNC_WRAPPER unsigned __reduce_max_sync(unsigned mask, unsigned v) {
  return static_cast<unsigned>(::lockstep::emu::warp_collective(::lockstep::emu::warp_op::reduce_max, mask, v, 0, 32));
}
LOCKSTEP_WAITS(warp) LOCKSTEP_SYNC_WRAPPER int __reduce_max_sync(unsigned mask, int v) {
  return static_cast<int>(::lockstep::emu::warp_collective(::lockstep::emu::warp_op::reduce_max, mask, static_cast<unsigned>(v), 1, 32));
}
LOCKSTEP_WAITS(warp) LOCKSTEP_SYNC_WRAPPER unsigned __reduce_and_sync(unsigned mask, unsigned v) {
  return static_cast<unsigned>(::lockstep::emu::warp_collective(::lockstep::emu::warp_op::reduce_and, mask, v, 0, 32));
}
LOCKSTEP_WAITS(warp) LOCKSTEP_SYNC_WRAPPER unsigned __reduce_or_sync(unsigned mask, unsigned v) {
  return static_cast<unsigned>(::lockstep::emu::warp_collective(::lockstep::emu::warp_op::reduce_or, mask, v, 0, 32));
}
LOCKSTEP_WAITS(warp) LOCKSTEP_SYNC_WRAPPER unsigned __reduce_xor_sync(unsigned mask, unsigned v) {
  return static_cast<unsigned>(::lockstep::emu::warp_collective(::lockstep::emu::warp_op::reduce_xor, mask, v, 0, 32));
}
template <class T>
LOCKSTEP_WAITS(warp)
LOCKSTEP_SYNC_WRAPPER unsigned __match_any_sync(unsigned mask, T value) {
  return static_cast<unsigned>(::lockstep::emu::warp_collective(::lockstep::emu::warp_op::match_any, mask, ::lockstep::emu::to_bits(value), 0, 32));
}
// The lanes of the mask if every one holds the same value (and *pred = 1), else
// 0 (and *pred = 0). Lanes a partial warp lacks are not in the answer, as on
// the GPU (numba's tests launch 10 threads with a full mask).
template <class T>
LOCKSTEP_WAITS(warp)
LOCKSTEP_SYNC_WRAPPER unsigned __match_all_sync(unsigned mask, T value, int* pred) {
  const unsigned same = __match_any_sync(mask, value);
  const bool all_same = same == (mask & __activemask());
  *pred = all_same ? 1 : 0;
  return all_same ? same : 0u;
}
