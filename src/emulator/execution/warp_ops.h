// What each warp collective computes, apart from when it runs.
//
// The block runner gathers one round of a collective (the lanes taking part,
// each lane's value and lane argument) and, once every lane the masks name has
// arrived, asks these functions for each lane's result. They know nothing of
// fibers, scheduling or the running thread, so each rule is tested on its own
// (tests/cpp/unit/test_warp_ops.cpp). Arrays are indexed by lane; only the
// entries of lanes in `lanes` are read or written. The rules are inline: the
// runner applies them at every collective, and liblockstep's exported
// functions are not inlined into each other.
#pragma once
#include <cstdint>
#include <span>
#include <string>

#include "lockstep/emu/sync.h"
#include "lockstep/emu/warp_lanes.h"

namespace lockstep::emu::warp_ops {

using lane_values = std::span<const std::uint64_t, lanes_per_warp>;
using lane_args = std::span<const int, lanes_per_warp>;
using lane_results = std::span<std::uint64_t, lanes_per_warp>;

// As a kernel spells it, for messages.
const char* name(warp_op op);
// A lane mask as messages write it: 0x0000ffff.
std::string mask_text(std::uint32_t mask);

constexpr bool is_shuffle(warp_op op) { return op >= warp_op::shfl_idx && op <= warp_op::shfl_xor; }
// The wmma functions are warp-wide barriers too: the whole warp arrives, and
// racecheck orders the lanes' accesses around them as around __syncwarp.
constexpr bool is_wmma(warp_op op) { return op >= warp_op::wmma_load && op <= warp_op::wmma_mma; }

template <class Fn>
inline void each_lane(std::uint32_t lanes, Fn&& fn) {
  for (std::uint32_t m = lanes; m; m &= m - 1) fn(static_cast<unsigned>(__builtin_ctz(m)));
}

// What is wrong with one lane's call, found before it joins its warp's round.
enum class misuse : std::uint8_t { none, mask_lacks_caller, bad_shuffle_width, wmma_in_partial_warp, mask_names_exited_lanes };
// `mask` as the lane passed it; `present`: the lanes the warp has; `exited`:
// those that have exited already. Lanes past the end of a partial last warp
// do not exist, and the GPU ignores them in a mask too.
constexpr misuse misuse_of_call(warp_op op, unsigned lane, std::uint32_t mask, int width, std::uint32_t present, std::uint32_t exited) {
  if (!(mask >> lane & 1u)) return misuse::mask_lacks_caller;
  if (is_shuffle(op) && !valid_shuffle_width(width)) return misuse::bad_shuffle_width;
  if (is_wmma(op) && present != ~0u) return misuse::wmma_in_partial_warp;
  if (mask & present & exited) return misuse::mask_names_exited_lanes;
  return misuse::none;
}
// True: the lanes do not meet as the call says (synccheck reports it);
// false: a bad argument, an error in every mode.
constexpr bool is_synchronisation(misuse m) { return m != misuse::bad_shuffle_width; }
// The message for misuse_of_call's answer, from the same arguments.
std::string describe(misuse m, warp_op op, unsigned lane, std::uint32_t mask, int width, std::uint32_t present, std::uint32_t exited);

inline void shuffle(warp_op op, std::uint32_t lanes, int width, lane_values value, lane_args lane_arg, lane_results result) {
  each_lane(lanes, [&](unsigned l) { result[l] = value[shuffle_source(op, l, lane_arg[l], width, lanes)]; });
}

// __ballot_sync, __any_sync, __all_sync: a lane's predicate is true when its value is not 0.
inline std::uint32_t ballot(std::uint32_t lanes, lane_values predicate) {
  std::uint32_t votes = 0;
  each_lane(lanes, [&](unsigned l) { votes |= (predicate[l] != 0 ? 1u : 0u) << l; });
  return votes;
}
inline bool any(std::uint32_t lanes, lane_values predicate) { return ballot(lanes, predicate) != 0; }
inline bool all(std::uint32_t lanes, lane_values predicate) { return ballot(lanes, predicate) == lanes; }

// The __reduce_*_sync functions, over the low 32 bits of each value; min and
// max compare as int32 when `is_signed`, else as uint32.
inline std::uint32_t reduce(warp_op op, std::uint32_t lanes, lane_values value, bool is_signed) {
  if (op == warp_op::reduce_min || op == warp_op::reduce_max) {
    const bool want_min = op == warp_op::reduce_min;
    std::int64_t best = 0;
    bool first = true;
    each_lane(lanes, [&](unsigned l) {
      const auto u = static_cast<std::uint32_t>(value[l]);
      const std::int64_t v = is_signed ? std::int64_t(static_cast<std::int32_t>(u)) : std::int64_t(u);
      if (first || (want_min ? v < best : v > best)) best = v;
      first = false;
    });
    return static_cast<std::uint32_t>(best);
  }
  std::uint32_t acc = op == warp_op::reduce_and ? ~0u : 0u;
  each_lane(lanes, [&](unsigned l) {
    const auto v = static_cast<std::uint32_t>(value[l]);
    switch (op) {
      case warp_op::reduce_add:
        acc += v;
        break;
      case warp_op::reduce_and:
        acc &= v;
        break;
      case warp_op::reduce_or:
        acc |= v;
        break;
      default:
        acc ^= v;
        break;
    }
  });
  return acc;
}

// __match_any_sync for `lane`: the lanes whose value equals its own.
inline std::uint32_t match_any(std::uint32_t lanes, lane_values value, unsigned lane) {
  std::uint32_t same = 0;
  each_lane(lanes, [&](unsigned k) { same |= (value[k] == value[lane] ? 1u : 0u) << k; });
  return same;
}

// Each lane's result of a completed round of `op` among `lanes` (for
// __activemask, the lanes that arrived together). __syncwarp and the wmma
// functions have none, and leave `result` alone. A lane argument of 1 marks a
// signed min/max reduction (every lane passes the same).
void results(warp_op op, std::uint32_t lanes, int width, lane_values value, lane_args lane_arg, lane_results result);

}  // namespace lockstep::emu::warp_ops
