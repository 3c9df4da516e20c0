// lockstep's warp intrinsics that meet their warp once (one warp_collective
// call each, declared in sync.h), one line each: X(name, shuffle), where
// `shuffle` is the warp_op a split kernel's shuffle step passes
// (loop_shuffle_warps) and `none` for the others. The region-loop compiler
// (src/emulator/region_loops) runs a call of each as a collective step; its
// list of them (region_loops::gathered_intrinsics) and its shuffles' ops are
// this table, and tests/cpp/runtime/test_region_loop_collectives.cpp fails
// for a collective of sync.h that calls warp_collective without a line here.
// (The others, __match_all_sync meeting twice, tiles, wmma, stay on fibers.)
#pragma once

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
