// What a kernel split at its barriers by the region-loop compiler
// (src/emulator/compile_time/region_loops) calls: the block's first thread claims the whole
// block, then runs each region between barriers as a loop over the block's
// threads, thread x innermost, with the values that live across a barrier in
// per-thread arrays.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <tuple>
#include <type_traits>

#include "lockstep/emu/builtins.h"
#include "lockstep/emu/sync.h"
#include "lockstep/emu/warp_lanes.h"

namespace lockstep::emu {

// What a split kernel tells the executor when it claims its block.
struct loop_claim {
  // The kernel has no barrier and no shared memory, and reads threadIdx.x
  // and blockIdx.x only as `blockIdx.x * blockDim.x + threadIdx.x`: a run
  // of blocks along x can then be one call whose rows span them all (the
  // sum is the same for thread x of block b + k as for thread k * blockDim.x
  // + x of a wider block b), so rows of 16 threads become rows the host
  // compiler vectorises well, and the per-block cost is paid once per run.
  bool blocks_along_x = false;
  // Bytes of per-thread arrays on the loop stack: they bound a run's width.
  unsigned bytes_per_thread = 0;
};
// How many blocks along x, from the running one, the calling thread, the
// first of its block, is to run as loops (no other thread of those blocks
// will start); 0 runs the kernel as written, one fiber per thread: check
// mode, the reverse and random thread orders, cooperative launches, and
// options::region_loops off.
unsigned loop_claim_block(loop_claim how = {});
// Calls body(arg) on the worker's loop stack, a large one kept for the
// claimed blocks: their per-thread arrays are local arrays there, which the
// host compiler knows no pointer of the kernel's reaches, so it can keep
// their elements in registers and vectorise across threads.
void loop_stack_call(void (*body)(void*), void* arg);

// The arguments (the kernel's parameters) are copied into body's frame there.
template <class F, class... Args>
inline void loop_on_block_stack(F&& body, const Args&... args) {
  auto call = [&] { body(args...); };
  loop_stack_call([](void* f) { (*static_cast<decltype(call)*>(f))(); }, &call);
}

// The storage of a per-thread array element: T itself where a local array of
// T needs no constructor, else raw bytes that the value is assigned into.
template <class T>
struct alignas(T) loop_cell {
  unsigned char bytes[sizeof(T)];
};
template <class T>
using loop_slot = std::conditional_t<std::is_trivially_default_constructible_v<std::remove_cv_t<T>> && std::is_trivially_destructible_v<T>,
                                     std::remove_cv_t<T>, loop_cell<std::remove_cv_t<T>>>;
template <class T>
inline std::remove_cv_t<T>* loop_slots(loop_slot<T>* cells) {
  return reinterpret_cast<std::remove_cv_t<T>*>(cells);
}

// A per-thread variable's declaration, renamed, hands its value to the array.
template <class To, class From>
inline void loop_store(To& to, const From& from) {
  if constexpr (std::is_array_v<To>) {
    static_assert(sizeof(To) == sizeof(From));
    std::memcpy(const_cast<std::remove_cv_t<To>*>(&to), const_cast<const std::remove_cv_t<From>*>(&from), sizeof(To));
  } else if constexpr (std::is_copy_assignable_v<To>) {
    to = from;
  } else {
    // A type the program can copy but not assign (a struct with a reference
    // or const member): each thread's value is constructed in its cell.
    static_assert(std::is_trivially_destructible_v<To>, "a per-thread value that can be neither assigned nor dropped");
    ::new (const_cast<void*>(static_cast<const volatile void*>(__builtin_addressof(to)))) std::remove_cv_t<To>(from);
  }
}

// `int i = blockIdx.x * blockDim.x + threadIdx.x;` sums in unsigned
// arithmetic, which may wrap, so the host compiler cannot tell that i moves
// by one from thread to thread and leaves loops indexed by it scalar. In
// region loops the coordinate in such a sum (or an int local computed from
// the coordinates, `int tx = threadIdx.x;` in `blockIdx.x * 16 + tx`), where
// the program converts the sum to int at once, is a thread_offset, summed in
// int: the same value
// wherever the int the program asked for is not negative by wrap-around
// (an index past 2^31 - 1, wrong on a GPU too), and linear in the loop.
struct thread_offset {
  int index;
};
inline unsigned operator+(unsigned shared, thread_offset thread) { return unsigned(int(shared) + thread.index); }
inline unsigned operator+(thread_offset thread, unsigned shared) { return shared + thread; }
inline unsigned operator+(int shared, thread_offset thread) { return unsigned(shared + thread.index); }
inline unsigned operator+(thread_offset thread, int shared) { return shared + thread; }

class loop_block {
 public:
  // blocks_along_x: the blocks the loops run as one (loop_claim), the
  // running one first; threadIdx.x then counts on through them all.
  explicit loop_block(unsigned blocks_along_x = 1)
      : dim_(current.block_dim), block_(current.block_idx), extent_x_(int(dim_.x * blocks_along_x)), threads_(extent_x_ * dim_.y * dim_.z) {}

  unsigned threads() const { return threads_; }
  // The extents as ints: the threads' loops count in int, which the
  // host compiler may assume never wraps, so a guard such as
  // `if (threadIdx.x < half)` becomes a bound it can split the loop at.
  int extent_x() const { return extent_x_; }
  int extent_y() const { return int(dim_.y); }
  int extent_z() const { return int(dim_.z); }

  // A region's loop body starts by entering its thread (x, y, z), linear
  // index t: threadIdx reads inside the region follow it, and so does the
  // thread's record, which device functions and device asserts read. Plain
  // stores: the host compiler keeps them wherever a call may read the
  // record and moves them out of loops that have none. A fault report may
  // therefore find the record behind: the executor then runs the block again
  // on fibers to name the thread (executor.cpp).
  void enter(int x, int y, int z, int t) {
    move_to(x, y, z, t);
    current.thread_idx = index_;
    current.linear_tid = unsigned(t);
  }
  // Enters the thread for the region's own reads only: a region that calls
  // nothing that reads the record (the region-loop compiler follows the
  // calls) leaves it alone, so stores through a char pointer, which may
  // alias the record, do not keep the loop from being vectorised.
  void move_to(int x, int y, int z, int) { index_ = {unsigned(x), unsigned(y), unsigned(z)}; }
  const uint3& thread_idx() const { return index_; }
  const uint3& block_idx() const { return block_; }
  const dim3& block_dim() const { return dim_; }
  // A thread coordinate added to a value the block shares (see thread_offset).
  thread_offset offset_x() const { return {int(index_.x)}; }
  thread_offset offset_y() const { return {int(index_.y)}; }
  thread_offset offset_z() const { return {int(index_.z)}; }

 private:
  dim3 dim_;
  uint3 block_;
  int extent_x_;
  unsigned threads_;
  uint3 index_{0, 0, 0};
};

// A mask array's element (a masked branch's condition, each thread's) as
// its byte, 0 or 1: GCC vectorises a row's sum of these, not of the bools.
inline unsigned char loop_mask_byte(const bool& in) {
  unsigned char byte;
  std::memcpy(&byte, &in, 1);
  return byte;
}

// A warp collective in a split kernel (a shuffle, a vote, __activemask,
// __syncwarp, __reduce_*_sync, __match_any_sync: each meets its warp once) is
// a step of three parts: a region in which each thread makes its call as
// written, which warp_collective records as the lane's call instead of
// waiting; the answers, warp by warp, by the rules the fiber engine applies
// to the lanes that meet (src/emulator/execution/warp_ops.h); then a region that runs
// the statement with the lane's answer in place of the call.
struct loop_lane_call {
  std::uint64_t value, answer;
  unsigned mask;
  int lane_arg, width;
  warp_op op;
};
// From here on the block's warp collectives record thread t's call in
// calls[t] and set arrived[t] (t: the linear index loop_block::enter wrote).
void loop_gather_into(loop_lane_call* calls, unsigned char* arrived);
// Ends the gathering and answers each warp's calls. A lane missing from its
// own mask, or one named that made no call (it exited, or is elsewhere), is
// a misuse the fiber engine names: the block then runs again on fibers.
void loop_answer_warps(const loop_block& block, loop_lane_call* calls, const unsigned char* arrived);
// A call whose answer the library works on further (a cooperative-groups
// tile's ballot, any, sync): the statement runs again with the call as
// written, and from here on (until null) the block's warp collectives return
// each lane's answer in `calls` instead of waiting.
void loop_replay_from(const loop_lane_call* calls);
// The call's answer as the call returns it: every collective's result is the
// low bytes of its 64-bit answer (from_bits, as lockstep/emu/sync.h reads it).
template <class R>
inline R loop_answer(const loop_lane_call* calls, int t) {
  if constexpr (!std::is_void_v<R>) return from_bits<R>(calls[t].answer);
}

// Throws what makes the executor run the block again on fibers, which name the misuse.
[[noreturn]] void loop_collective_misused();

// Shuffles, the collectives reductions are made of, take a shorter way with
// the same answers: the gathering stores each lane's value (to_bits) in
// `values`, and each lane then reads its source lane's there, by the fiber
// engine's rule (warp_ops::shuffle_source), a loop the host compiler can
// vectorise. `lanes`: each warp's lanes that made the call (loop_warp_lanes),
// or null where every lane of the block did. A misuse (a lane missing from
// its own mask, a lane named that made no call, a width that is not a power
// of two up to 32) sets `misused`; the step then calls loop_collective_misused.
template <class R>
inline R loop_shuffle(warp_op op, const std::uint64_t* values, const unsigned* lanes, const loop_block& block, int t, unsigned& misused,
                      unsigned mask, int lane_arg, int width = 32) {
  const unsigned lane = unsigned(t) & 31u, warp = unsigned(t) >> 5;
  const std::uint32_t present = warp_ops::lanes_in_warp(block.threads(), warp), came = lanes ? lanes[warp] : present;
  misused |= unsigned(!(mask >> lane & 1u)) | unsigned((mask & present & ~came) != 0) | unsigned(!warp_ops::valid_shuffle_width(width));
  return from_bits<R>(values[unsigned(t) - lane + warp_ops::shuffle_source(op, lane, lane_arg, width, came & mask)]);
}
// Where the mask, the lane argument and the width are the same for every
// thread (`__shfl_down_sync(0xffffffffu, v, offset)` in a loop the block
// runs), the answers are computed warp by warp, once, into `answers`, which
// the statement then reads (loop_answer_bits); a misuse throws before any
// thread reads one.
template <warp_op Op>
inline void loop_shuffle_warps(const std::uint64_t* values, std::uint64_t* answers, const unsigned* lanes, const loop_block& block, unsigned mask,
                               int lane_arg, int width = 32) {
  if (!warp_ops::valid_shuffle_width(width)) loop_collective_misused();
  const unsigned threads = block.threads();
  for (unsigned w = 0; w * warp_ops::lanes_per_warp < threads; ++w) {
    const std::uint32_t present = warp_ops::lanes_in_warp(threads, w), came = lanes ? lanes[w] : present;
    if (!came) continue;  // no lane of this warp made the call
    if ((came & ~mask) || (mask & present & ~came)) loop_collective_misused();
    const std::uint64_t* in = values + w * warp_ops::lanes_per_warp;
    std::uint64_t* out = answers + w * warp_ops::lanes_per_warp;
    const std::uint32_t meeting = came & mask;
    if (meeting == ~0u)
      for (unsigned l = 0; l < warp_ops::lanes_per_warp; ++l) out[l] = in[warp_ops::shuffle_source(Op, l, lane_arg, width, ~0u)];
    else
      for (unsigned l = 0; l < warp_ops::lanes_per_warp; ++l)
        if (meeting >> l & 1u) out[l] = in[warp_ops::shuffle_source(Op, l, lane_arg, width, meeting)];
  }
}
template <class R>
inline R loop_answer_bits(const std::uint64_t* answers, int t) {
  return from_bits<R>(answers[t]);
}
// `__syncthreads_count(p)`, `__syncthreads_and(p)`, `__syncthreads_or(p)`:
// the block's answer from each thread's predicate (0 or 1), as the fiber
// engine's barrier gives it, over the threads that came (`arrived`, or every
// thread of the block where it is null).
inline int loop_block_vote(const loop_block& block, barrier_reduce how, const int* predicates, const unsigned char* arrived) {
  int came = 0, true_ = 0;
  for (unsigned t = 0; t < block.threads(); ++t)
    if (!arrived || arrived[t]) ++came, true_ += predicates[t];
  return how == barrier_reduce::count ? true_ : how == barrier_reduce::all ? int(true_ == came) : how == barrier_reduce::any ? int(true_ > 0) : 0;
}

// A call of a value-returning device function that waits (a warp sum, a
// block reduction): the function's lanes variant, run once for the block.
// In the gathering each calling lane calls `name__ls_enter(call, t, args)`,
// the function's own parameter list, so its template arguments are deduced
// and its arguments converted as the call itself would; it stores them here
// with the variant (`name__ls_lanes`) that takes them. The block then runs
// the variant over the calling lanes, which leaves each lane's result here.
class loop_lanes_call {
 public:
  explicit loop_lanes_call(unsigned threads) : threads_(threads) {}
  loop_lanes_call(const loop_lanes_call&) = delete;
  loop_lanes_call& operator=(const loop_lanes_call&) = delete;
  ~loop_lanes_call() {
    if (arguments_) ::operator delete(arguments_, std::align_val_t(argument_alignment_));
    if (results_) ::operator delete(results_, std::align_val_t(result_alignment_));
  }
  template <class Arguments, class Result, class... P>
  void put(unsigned t, void (*variant)(const loop_block&, const unsigned char*, const Arguments*, Result*), P&&... p) {
    static_assert(std::is_trivially_destructible_v<Arguments> && std::is_trivially_copyable_v<Result>,
                  "a lanes variant keeps its arguments and results in raw storage");
    if (!arguments_) {
      argument_alignment_ = alignof(Arguments), result_alignment_ = alignof(Result);
      arguments_ = ::operator new(sizeof(Arguments) * threads_, std::align_val_t(argument_alignment_));
      results_ = ::operator new(sizeof(Result) * threads_, std::align_val_t(result_alignment_));
      variant_ = reinterpret_cast<void (*)()>(variant);
      run_ = [](loop_lanes_call& self, const loop_block& block, const unsigned char* calling) {
        reinterpret_cast<void (*)(const loop_block&, const unsigned char*, const Arguments*, Result*)>(self.variant_)(
            block, calling, static_cast<const Arguments*>(self.arguments_), static_cast<Result*>(self.results_));
      };
    }
    ::new (static_cast<Arguments*>(arguments_) + t) Arguments(static_cast<P&&>(p)...);
  }
  // The variant, for the lanes whose calling[t] is set (no lane called: nothing to run).
  void run(const loop_block& block, const unsigned char* calling) {
    if (run_) run_(*this, block, calling);
  }
  template <class R>
  R result(unsigned t) const {
    return static_cast<const R*>(results_)[t];
  }

 private:
  unsigned threads_;
  void* arguments_ = nullptr;
  void* results_ = nullptr;
  std::size_t argument_alignment_ = 1, result_alignment_ = 1;
  void (*variant_)() = nullptr;
  void (*run_)(loop_lanes_call&, const loop_block&, const unsigned char*) = nullptr;
};

// A lanes variant's parameter that its barriers' conditions read: the first
// calling lane's argument, once for the block. Its callers were held to pass
// every lane's alike; a scalar that differs all the same is a barrier whose
// condition differs between threads, which the fibers run again to report.
template <std::size_t I, class Arguments>
inline std::tuple_element_t<I, Arguments> loop_uniform_argument(const loop_block& block, const unsigned char* calling, const Arguments* arguments) {
  unsigned first = 0;
  while (!calling[first]) ++first;
  const auto& value = std::get<I>(arguments[first]);
  if constexpr (std::is_scalar_v<std::tuple_element_t<I, Arguments>>)
    for (unsigned t = first + 1; t < block.threads(); ++t)
      if (calling[t] && std::memcmp(&std::get<I>(arguments[t]), &value, sizeof value) != 0) loop_collective_misused();
  return value;
}

// cg::reduce(tile, value, op) over tiles of `size` lanes of one warp: the
// gathering stores each lane's value (to_bits of the result type V) in
// `values`; the statement then reads its lane's result, which the tile's first
// lane computes for the whole tile as cooperative_groups/reduce.h does on
// fibers (an xor butterfly whose partners follow warp_ops::shuffle_source), so
// the bits are the same. Every lane of a tile takes part (loop_tile_whole).
template <class V, class Op>
inline V loop_tile_reduce(std::uint64_t* values, const loop_block& block, int t, unsigned size, Op op) {
  if (unsigned(t) % size == 0) {
    const unsigned warp_first = unsigned(t) & ~31u, first_lane = unsigned(t) & 31u;
    const std::uint32_t tile_mask = (size == 32 ? ~0u : ((1u << size) - 1u) << first_lane);
    const std::uint32_t meeting = tile_mask & warp_ops::lanes_in_warp(block.threads(), warp_first / warp_ops::lanes_per_warp);
    V acc[32], next[32];
    for (unsigned l = first_lane; l < first_lane + size; ++l)
      if (meeting >> l & 1u) acc[l] = from_bits<V>(values[warp_first + l]);
    for (unsigned lanes = size / 2; lanes > 0; lanes /= 2) {
      for (unsigned l = first_lane; l < first_lane + size; ++l)
        if (meeting >> l & 1u) next[l] = op(acc[l], acc[warp_ops::shuffle_source(warp_op::shfl_xor, l, int(lanes), int(size), meeting)]);
      for (unsigned l = first_lane; l < first_lane + size; ++l)
        if (meeting >> l & 1u) acc[l] = next[l];
    }
    for (unsigned l = first_lane; l < first_lane + size; ++l)
      if (meeting >> l & 1u) values[warp_first + l] = to_bits(acc[l]);
  }
  return from_bits<V>(values[t]);
}
// A tile some of whose lanes did not come (returned, or masked out) is a
// misuse the fibers name: the block runs again on fibers.
inline void loop_tile_whole(const loop_block& block, const unsigned char* arrived, unsigned size) {
  for (unsigned first = 0; first < block.threads(); first += size) {
    unsigned came = 0, lanes = 0;
    for (unsigned t = first; t < first + size && t < block.threads(); ++t) came += arrived[t], ++lanes;
    if (came != 0 && came != lanes) loop_collective_misused();
  }
}

// Each warp's lanes whose arrived[t] (0 or 1) is set; a whole warp's 32
// flags are read 8 at a time, as under a mask most warps have all or none.
inline void loop_warp_lanes(const loop_block& block, const unsigned char* arrived, unsigned* lanes) {
  for (unsigned w = 0; w * warp_ops::lanes_per_warp < block.threads(); ++w) {
    const unsigned char* flags = arrived + w * warp_ops::lanes_per_warp;
    const unsigned count = warp_ops::lanes_per_warp < block.threads() - w * warp_ops::lanes_per_warp ? warp_ops::lanes_per_warp
                                                                                                     : block.threads() - w * warp_ops::lanes_per_warp;
    if (count == warp_ops::lanes_per_warp) {
      std::uint64_t words[4];
      std::memcpy(words, flags, sizeof words);
      const std::uint64_t any = words[0] | words[1] | words[2] | words[3], every = words[0] & words[1] & words[2] & words[3];
      if (any == 0 || every == 0x0101010101010101u) {
        lanes[w] = any == 0 ? 0u : ~0u;
        continue;
      }
    }
    unsigned came = 0;
    for (unsigned l = 0; l < count; ++l) came |= unsigned(flags[l] != 0) << l;
    lanes[w] = came;
  }
}

}  // namespace lockstep::emu
