// The collectives of lockstep's emulator that a region loop runs as a
// collective step (src/emulator/compile_time/region_loops), one line each, beside their
// declarations in sync.h: tests/cpp/runtime/test_region_loop_collectives.cpp
// fails for one of sync.h without its line here, or a line without one.
#pragma once

// The warp intrinsics that meet their warp once (one warp_collective call
// each), X(name, shuffle), where
// `shuffle` is the warp_op a split kernel's shuffle step passes
// (loop_shuffle_warps) and `none` for the others. The region-loop compiler
// (src/emulator/compile_time/region_loops) runs a call of each as a collective step; its
// list of them (region_loops::gathered_intrinsics) and its shuffles' ops are
// this table. (The others, __match_all_sync meeting twice, tiles, wmma, stay
// on fibers.)
#define LOCKSTEP_GATHERED_WARP_COLLECTIVES(X) \
  X(__shfl_sync, shfl_idx)                    \
  X(__shfl_up_sync, shfl_up)                  \
  X(__shfl_down_sync, shfl_down)              \
  X(__shfl_xor_sync, shfl_xor)                \
  X(__ballot_sync, none)                      \
  X(__any_sync, none)                         \
  X(__all_sync, none)                         \
  X(__activemask, none)                       \
  X(__syncwarp, none)                         \
  X(__reduce_add_sync, none)                  \
  X(__reduce_min_sync, none)                  \
  X(__reduce_max_sync, none)                  \
  X(__reduce_and_sync, none)                  \
  X(__reduce_or_sync, none)                   \
  X(__reduce_xor_sync, none)                  \
  X(__match_any_sync, none)

// The block barriers that answer a vote of the block (block_barrier with a
// barrier_reduce other than none), X(name, reduce): a collective step gathers
// each thread's predicate and gives the block's answer (loop_block_vote).
#define LOCKSTEP_BLOCK_VOTES(X) \
  X(__syncthreads_count, count) \
  X(__syncthreads_and, all)     \
  X(__syncthreads_or, any)
