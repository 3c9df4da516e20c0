// cg::inclusive_scan and cg::exclusive_scan on the emulator (CUDA's
// <cooperative_groups/scan.h>), over tiles and coalesced groups, in rank order.
#pragma once
#include <optional>
#include <type_traits>
#include <utility>

#include "lockstep/emu/cooperative_groups.h"
#include "lockstep/emu/cooperative_groups/functional.h"
#include "lockstep/emu/cooperative_groups/scan_ranks.h"
#include "lockstep/emu/waits.h"

namespace cooperative_groups {

namespace details {
// A multi-warp tile's scan: op over the totals of the warps before the
// caller's in its tile, or nothing for the tile's first warp.
template <class GroupT, class V, class Op>
LOCKSTEP_WAITS(group)
std::optional<V> earlier_warps(const GroupT& group, const V& warp_total, Op& op) {
  const unsigned my_warp = group.thread_rank() / 32;
  return group.exchange(warp_total, [&](const unsigned char* tile) {
    std::optional<V> acc;
    for (unsigned w = 0; w < my_warp; ++w) {
      const V total = slot_value<V>(tile + w * 32 * scratch_slot_bytes);
      acc = acc ? op(*acc, total) : total;
    }
    return acc;
  });
}
}  // namespace details

// Rank r gets v0, v1, ..., vr combined by op (details::scan_ranks; a tile of
// more than one warp adds the earlier warps' totals).
template <class GroupT, class T, class Op>
LOCKSTEP_WAITS(group)
auto inclusive_scan(const GroupT& group, T&& value, Op&& op) -> std::remove_cv_t<std::remove_reference_t<decltype(op(value, value))>> {
  using V = std::remove_cv_t<std::remove_reference_t<decltype(op(value, value))>>;
  if constexpr (details::is_multi_warp_tile<GroupT>::value) {
    const auto warp = tiled_partition<32>(this_thread_block());
    const V in_warp = inclusive_scan(warp, value, op);
    const std::optional<V> before = details::earlier_warps(group, warp.shfl(in_warp, 31), op);
    return before ? op(*before, in_warp) : in_warp;
  } else {
    return details::scan_ranks(group, V(value), op);
  }
}

template <class GroupT, class T>
LOCKSTEP_WAITS(group)
std::remove_cv_t<std::remove_reference_t<T>> inclusive_scan(const GroupT& group, T&& value) {
  using V = std::remove_cv_t<std::remove_reference_t<T>>;
  return inclusive_scan(group, std::forward<T>(value), plus<V>());
}

// Rank r gets op(v0, ..., v(r-1)); rank 0 gets a value-initialised T, as CUDA's.
template <class GroupT, class T, class Op>
LOCKSTEP_WAITS(group)
auto exclusive_scan(const GroupT& group, T&& value, Op&& op) -> std::remove_cv_t<std::remove_reference_t<decltype(op(value, value))>> {
  using V = std::remove_cv_t<std::remove_reference_t<decltype(op(value, value))>>;
  if constexpr (details::is_multi_warp_tile<GroupT>::value) {
    const auto warp = tiled_partition<32>(this_thread_block());
    const V in_warp = exclusive_scan(warp, value, op);
    const std::optional<V> before = details::earlier_warps(group, warp.shfl(op(in_warp, value), 31), op);
    if (!before) return in_warp;
    return warp.thread_rank() == 0 ? *before : op(*before, in_warp);
  } else {
    const V inclusive = inclusive_scan(group, value, op);
    const V lower = group.shfl_up(inclusive, 1);
    return group.thread_rank() == 0 ? V{} : lower;
  }
}

template <class GroupT, class T>
LOCKSTEP_WAITS(group)
std::remove_cv_t<std::remove_reference_t<T>> exclusive_scan(const GroupT& group, T&& value) {
  using V = std::remove_cv_t<std::remove_reference_t<T>>;
  return exclusive_scan(group, std::forward<T>(value), plus<V>());
}

}  // namespace cooperative_groups
