// cg::reduce(group, value, op) on the emulator (CUDA's <cooperative_groups/reduce.h>):
// every thread of a tile or coalesced group gets the group's values combined
// by op (any associative and commutative callable).
#pragma once
#include <type_traits>
#include <utility>

#include "lockstep/emu/cooperative_groups.h"
#include "lockstep/emu/cooperative_groups/functional.h"
#include "lockstep/emu/cooperative_groups/scan_ranks.h"
#include "lockstep/emu/waits.h"

namespace cooperative_groups {

// As CUDA computes it, so that floating-point results match the GPU's bit for
// bit: a tile (or a full coalesced group) by an xor butterfly, log2(size) warp
// rounds; a partial coalesced group by an inclusive scan whose last rank's
// result is shared. A tile of more than one warp reduces each warp, then
// folds the warps' totals in order.
template <class GroupT, class T, class Op>
LOCKSTEP_WAITS(group)
auto reduce(const GroupT& group, T&& value, Op&& op) -> std::remove_cv_t<std::remove_reference_t<decltype(op(value, value))>> {
  using V = std::remove_cv_t<std::remove_reference_t<decltype(op(value, value))>>;
  if constexpr (details::is_multi_warp_tile<GroupT>::value) {
    const V warp_total = reduce(tiled_partition<32>(this_thread_block()), value, op);
    return group.exchange(warp_total, [&](const unsigned char* tile) {
      V acc = details::slot_value<V>(tile);
      for (unsigned w = 1; w < group.size() / 32; ++w) acc = op(acc, details::slot_value<V>(tile + w * 32 * details::scratch_slot_bytes));
      return acc;
    });
  } else if constexpr (std::is_same_v<GroupT, coalesced_group>) {
    if (group.size() == 32) return reduce(tiled_partition<32>(this_thread_block()), value, op);
    const V scanned = details::scan_ranks(group, V(value), op);
    return group.shfl(scanned, group.size() - 1);
  } else {
    V acc = value;
    for (unsigned lanes = group.size() / 2; lanes > 0; lanes /= 2) acc = op(acc, group.shfl_xor(acc, lanes));
    return acc;
  }
}

}  // namespace cooperative_groups
