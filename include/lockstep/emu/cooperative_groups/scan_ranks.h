// The warp-level scan that cg::reduce (partial coalesced groups) and the
// scans share, as CUDA computes it: Hillis-Steele over ranks, each thread
// combining op(own, lower), so results (floating-point rounding, and the
// order of a non-commutative op) are the GPU's.
#pragma once

#include "lockstep/emu/cooperative_groups.h"
#include "lockstep/emu/waits.h"

namespace cooperative_groups::details {

template <class GroupT, class V, class Op>
LOCKSTEP_WAITS(group)
V scan_ranks(const GroupT& group, V value, Op& op) {
  const unsigned size = static_cast<unsigned>(group.num_threads()), rank = static_cast<unsigned>(group.thread_rank());
  for (unsigned step = 1; step < size; step *= 2) {
    const V lower = group.shfl_up(value, step);
    if (rank >= step) value = op(value, lower);
  }
  return value;
}

}  // namespace cooperative_groups::details
