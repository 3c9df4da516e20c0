// cg::reduce(group, value, op) on the emulator (CUDA's <cooperative_groups/reduce.h>):
// every thread of a tile or coalesced group gets op folded over the group's
// values in rank order, with any associative op.
#pragma once
#include <type_traits>
#include <utility>

#include "lockstep/emu/cooperative_groups.h"
#include "lockstep/emu/cooperative_groups/functional.h"

namespace cooperative_groups {

// A tree over ranks: after the round with step s, rank r holds op over ranks
// [r, r + 2s) (cut at the group's end), so rank 0 ends with all of them in
// order, and shares it. log2(size) + 1 warp rounds.
template <class GroupT, class T, class Op>
auto reduce(const GroupT& group, T&& value, Op&& op) -> std::remove_cv_t<std::remove_reference_t<decltype(op(value, value))>> {
  using V = std::remove_cv_t<std::remove_reference_t<decltype(op(value, value))>>;
  const unsigned size = static_cast<unsigned>(group.num_threads()), rank = static_cast<unsigned>(group.thread_rank());
  V acc = value;
  for (unsigned step = 1; step < size; step *= 2) {
    const V other = group.shfl_down(acc, step);
    if (rank + step < size) acc = op(acc, other);
  }
  return group.shfl(acc, 0);
}

}  // namespace cooperative_groups
