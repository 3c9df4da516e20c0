// What a function of lockstep's device headers waits for, written once on
// its declaration. The region-loop compiler (src/emulator/compile_time/region_loops,
// synchronization.cpp) parses the kernel's translation unit with libclang and
// reads these annotations: a call of an annotated function may synchronise,
// so the loops meet it as the GPU's threads would. Other compilers see
// nothing. tests/python/test_waits_annotations.py fails for a function of
// these headers that reaches a waiting primitive without one.
//
// The kinds:
//   barrier  the block's barrier (__syncthreads): a region ends there
//   group    waits as the group it is given does (cg::sync(g), thread_group::sync)
//   block    meets the block's threads otherwise (a vote, a block-wide tile)
//   warp     meets its warp: the loops run it only as a collective step
//   grid     meets the grid's threads (a cooperative launch)
//   yield    lets the other threads run while it waits (a spin, a sleep)
#pragma once

#if defined(__clang__)
#define LOCKSTEP_WAITS(kind) __attribute__((annotate("lockstep::waits::" #kind)))
#else
#define LOCKSTEP_WAITS(kind)
#endif
