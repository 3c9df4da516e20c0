#include "warp_ops.h"

#include <cstdio>

namespace lockstep::emu::warp_ops {

const char* name(warp_op op) {
  switch (op) {
    case warp_op::sync:
      return "__syncwarp";
    case warp_op::shfl_idx:
      return "__shfl_sync";
    case warp_op::shfl_up:
      return "__shfl_up_sync";
    case warp_op::shfl_down:
      return "__shfl_down_sync";
    case warp_op::shfl_xor:
      return "__shfl_xor_sync";
    case warp_op::ballot:
      return "__ballot_sync";
    case warp_op::any:
      return "__any_sync";
    case warp_op::all:
      return "__all_sync";
    case warp_op::reduce_add:
      return "__reduce_add_sync";
    case warp_op::reduce_min:
      return "__reduce_min_sync";
    case warp_op::reduce_max:
      return "__reduce_max_sync";
    case warp_op::reduce_and:
      return "__reduce_and_sync";
    case warp_op::reduce_or:
      return "__reduce_or_sync";
    case warp_op::reduce_xor:
      return "__reduce_xor_sync";
    case warp_op::match_any:
      return "__match_any_sync";
    case warp_op::active:
      return "__activemask";
    case warp_op::wmma_load:
      return "wmma::load_matrix_sync";
    case warp_op::wmma_store:
      return "wmma::store_matrix_sync";
    case warp_op::wmma_mma:
      return "wmma::mma_sync";
  }
  return "?";
}

std::string mask_text(std::uint32_t mask) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", mask);
  return buf;
}

std::string describe(misuse m, warp_op op, unsigned lane, std::uint32_t mask, int width, std::uint32_t present, std::uint32_t exited) {
  switch (m) {
    case misuse::none:
      break;
    case misuse::mask_lacks_caller:
      return std::string(name(op)) + " with mask " + mask_text(mask) + " does not name the calling lane " + std::to_string(lane) +
             "; a lane must include itself in the mask";
    case misuse::bad_shuffle_width:
      return std::string(name(op)) + " with width " + std::to_string(width) + "; width must be a power of two from 1 to 32";
    case misuse::wmma_in_partial_warp:
      return std::string(name(op)) + " in a warp of " + std::to_string(__builtin_popcount(present)) +
             " threads; the wmma functions need all 32 lanes of a full warp";
    case misuse::mask_names_exited_lanes:
      return std::string(name(op)) + " with mask " + mask_text(mask & present) + " names lanes " + mask_text(mask & present & exited) +
             " that have already exited; every lane named in the mask must reach the call";
  }
  return {};
}

void results(warp_op op, std::uint32_t lanes, int width, lane_values value, lane_args lane_arg, lane_results result) {
  auto every_lane_gets = [&](std::uint64_t v) { each_lane(lanes, [&](unsigned l) { result[l] = v; }); };
  switch (op) {
    case warp_op::sync:
    case warp_op::wmma_load:
    case warp_op::wmma_store:
    case warp_op::wmma_mma:
      break;
    case warp_op::active:
      every_lane_gets(lanes);
      break;
    case warp_op::shfl_idx:
    case warp_op::shfl_up:
    case warp_op::shfl_down:
    case warp_op::shfl_xor:
      shuffle(op, lanes, width, value, lane_arg, result);
      break;
    case warp_op::ballot:
      every_lane_gets(ballot(lanes, value));
      break;
    case warp_op::any:
      every_lane_gets(any(lanes, value));
      break;
    case warp_op::all:
      every_lane_gets(all(lanes, value));
      break;
    case warp_op::reduce_add:
    case warp_op::reduce_min:
    case warp_op::reduce_max:
    case warp_op::reduce_and:
    case warp_op::reduce_or:
    case warp_op::reduce_xor: {
      const bool is_signed = lanes && lane_arg[static_cast<unsigned>(__builtin_ctz(lanes))] != 0;
      every_lane_gets(reduce(op, lanes, value, is_signed));
      break;
    }
    case warp_op::match_any:
      each_lane(lanes, [&](unsigned l) { result[l] = match_any(lanes, value, l); });
      break;
  }
}

}  // namespace lockstep::emu::warp_ops
