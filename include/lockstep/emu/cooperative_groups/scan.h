// cg::inclusive_scan and cg::exclusive_scan on the emulator (CUDA's
// <cooperative_groups/scan.h>), over tiles and coalesced groups, in rank order.
#pragma once
#include <type_traits>
#include <utility>

#include "lockstep/emu/cooperative_groups.h"
#include "lockstep/emu/cooperative_groups/functional.h"

namespace cooperative_groups {

// Rank r gets op(v0, v1, ..., vr) (Hillis-Steele: log2(size) warp rounds).
template <class GroupT, class T, class Op>
auto inclusive_scan(const GroupT& group, T&& value, Op&& op) -> std::remove_cv_t<std::remove_reference_t<decltype(op(value, value))>> {
  using V = std::remove_cv_t<std::remove_reference_t<decltype(op(value, value))>>;
  const unsigned size = static_cast<unsigned>(group.num_threads()), rank = static_cast<unsigned>(group.thread_rank());
  V acc = value;
  for (unsigned step = 1; step < size; step *= 2) {
    const V lower = group.shfl_up(acc, step);
    if (rank >= step) acc = op(lower, acc);
  }
  return acc;
}

template <class GroupT, class T>
std::remove_cv_t<std::remove_reference_t<T>> inclusive_scan(const GroupT& group, T&& value) {
  using V = std::remove_cv_t<std::remove_reference_t<T>>;
  return inclusive_scan(group, std::forward<T>(value), plus<V>());
}

// Rank r gets op(v0, ..., v(r-1)); rank 0 gets a value-initialised T, as CUDA's.
template <class GroupT, class T, class Op>
auto exclusive_scan(const GroupT& group, T&& value, Op&& op) -> std::remove_cv_t<std::remove_reference_t<decltype(op(value, value))>> {
  using V = std::remove_cv_t<std::remove_reference_t<decltype(op(value, value))>>;
  const V inclusive = inclusive_scan(group, value, op);
  const V lower = group.shfl_up(inclusive, 1);
  return group.thread_rank() == 0 ? V{} : lower;
}

template <class GroupT, class T>
std::remove_cv_t<std::remove_reference_t<T>> exclusive_scan(const GroupT& group, T&& value) {
  using V = std::remove_cv_t<std::remove_reference_t<T>>;
  return exclusive_scan(group, std::forward<T>(value), plus<V>());
}

}  // namespace cooperative_groups
