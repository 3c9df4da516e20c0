// cg::reduce(group, value, op) on the emulator (CUDA's <cooperative_groups/reduce.h>):
// every thread of a tile or coalesced group gets op folded over the group's
// values in rank order, with any associative op. A tile of more than one warp
// reduces each warp, then the warps' totals.
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
  if constexpr (details::is_multi_warp_tile<GroupT>::value) {
    // Each warp's total, then the tile's warps' totals in order.
    const V warp_total = reduce(tiled_partition<32>(this_thread_block()), value, op);
    return group.exchange(warp_total, [&](const unsigned char* tile) {
      V acc = details::slot_value<V>(tile);
      for (unsigned w = 1; w < group.size() / 32; ++w) acc = op(acc, details::slot_value<V>(tile + w * 32 * details::scratch_slot_bytes));
      return acc;
    });
  } else {
    const unsigned size = static_cast<unsigned>(group.num_threads()), rank = static_cast<unsigned>(group.thread_rank());
    V acc = value;
    for (unsigned step = 1; step < size; step *= 2) {
      const V other = group.shfl_down(acc, step);
      if (rank + step < size) acc = op(acc, other);
    }
    return group.shfl(acc, 0);
  }
}

}  // namespace cooperative_groups
