// What a function of lockstep's device headers waits for, written once on
// its declaration, where libclang (which parses kernels for the region-loop
// compiler, src/emulator/compile_time/region_loops) sees it as an annotate
// attribute; the compiler's synchronization.cpp reads it there and knows no
// list of lockstep's names. Other compilers see nothing, except where
// LOCKSTEP_WAITS_SPELLED asks for the attribute: `lockstep nvcc` preprocesses
// a program with the host compiler before libclang reads it, and GCC keeps
// (and ignores, silently in these system headers) what it was asked to spell.
// tests/python/test_waits_annotations.py fails for a function of these
// headers that reaches a waiting primitive without one.
//
// The kinds:
//   barrier  the block's barrier (__syncthreads): a region ends there
//   group    waits as the group it is given does (cg::sync(g), thread_group::sync)
//   block    meets the block's threads otherwise (a vote, a block-wide tile)
//   warp     meets its warp: the loops run it only as a collective step
//   grid     meets the grid's threads (a cooperative launch)
//   yield    lets the other threads run while it waits (a spin, a sleep)
#pragma once

#if defined(__clang__) || defined(LOCKSTEP_WAITS_SPELLED)
#define LOCKSTEP_WAITS(kind) __attribute__((annotate("lockstep::waits::" #kind)))
#else
#define LOCKSTEP_WAITS(kind)
#endif
