// Which lanes a warp has and which lane a shuffle reads: the rules the fiber
// engine's warp rounds (src/emulator/execution/warp_ops.h) and the region loops'
// collective steps (lockstep/emu/region_loops.h) both apply.
#pragma once
#include <cstdint>

#include "lockstep/emu/sync.h"

namespace lockstep::emu::warp_ops {

inline constexpr unsigned lanes_per_warp = 32;

// A shuffle's width: a power of two from 1 to 32.
constexpr bool valid_shuffle_width(int width) { return width >= 1 && width <= 32 && (width & (width - 1)) == 0; }

// The lanes warp `warp` of a block of `block_threads` threads has: all 32 but in a partial last warp.
constexpr std::uint32_t lanes_in_warp(unsigned block_threads, unsigned warp) {
  const unsigned count = block_threads - warp * lanes_per_warp;
  return count >= lanes_per_warp ? ~0u : (1u << count) - 1;
}

// The lane whose value `lane` receives from a shuffle, by PTX shfl.sync's
// rule: only the low 5 bits of the lane argument count; lanes form segments of
// `width` (a power of two from 1 to 32); a source outside the caller's
// segment, or not among `lanes`, gives the caller its own value. (So with
// __shfl_xor_sync a lane may read an earlier segment, never a later one, as
// CUDA documents.)
inline unsigned shuffle_source(warp_op op, unsigned lane_index, int lane_arg, int width, std::uint32_t lanes) {
  const int lane = static_cast<int>(lane_index), b = lane_arg & 31;
  const int segmask = (32 - width) & 31;
  const int min_lane = lane & segmask, max_lane = min_lane | (31 & ~segmask);
  int j = lane;
  bool in_range = false;
  switch (op) {
    case warp_op::shfl_idx:
      j = min_lane | (b & ~segmask);
      in_range = j <= max_lane;
      break;
    case warp_op::shfl_up:
      j = lane - b;
      in_range = j >= min_lane;
      break;
    case warp_op::shfl_down:
      j = lane + b;
      in_range = j <= max_lane;
      break;
    default:
      j = lane ^ b;
      in_range = j <= max_lane;
      break;
  }
  return in_range && (lanes >> j & 1u) ? static_cast<unsigned>(j) : lane_index;
}

}  // namespace lockstep::emu::warp_ops
