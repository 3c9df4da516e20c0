// What each warp collective computes, lane by lane, apart from scheduling.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>

#include "execution/warp_ops.h"

namespace ops = lockstep::emu::warp_ops;
using lockstep::emu::warp_op;

namespace {
constexpr std::uint32_t every_lane = 0xffffffffu;
constexpr std::uint64_t untouched = 0xdeadbeefcafef00dull;

struct round {
  std::array<std::uint64_t, 32> value{};
  std::array<int, 32> lane_arg{};
  std::array<std::uint64_t, 32> result{};
  round() { result.fill(untouched); }
  // Distinct values: lane l holds 100 + l.
  static round numbered() {
    round r;
    for (unsigned l = 0; l < 32; ++l) r.value[l] = 100 + l;
    return r;
  }
  void all_pass(int arg) { lane_arg.fill(arg); }
  void run(warp_op op, std::uint32_t lanes, int width = 32) { ops::results(op, lanes, width, value, lane_arg, result); }
};
}  // namespace

TEST(WarpOps, ShflIdxReadsTheNamedLaneOfTheCallersSegment) {
  round r = round::numbered();
  r.all_pass(3);
  r.run(warp_op::shfl_idx, every_lane, 8);
  for (unsigned l = 0; l < 32; ++l) EXPECT_EQ(r.result[l], 100 + (l / 8) * 8 + 3) << "lane " << l;
}

TEST(WarpOps, ShflIdxUsesOnlyTheLowBitsOfTheSourceLane) {
  round r = round::numbered();
  r.all_pass(37);  // 37 & 31 = 5
  r.run(warp_op::shfl_idx, every_lane, 32);
  for (unsigned l = 0; l < 32; ++l) EXPECT_EQ(r.result[l], 105u) << "lane " << l;
  r.all_pass(13);  // with width 8 only 13 & 7 = 5 counts
  r.run(warp_op::shfl_idx, every_lane, 8);
  for (unsigned l = 0; l < 32; ++l) EXPECT_EQ(r.result[l], 100 + (l / 8) * 8 + 5) << "lane " << l;
}

TEST(WarpOps, ShflIdxFromALaneOutsideTheRoundGivesTheCallerItsOwnValue) {
  round r = round::numbered();
  r.all_pass(0);
  const std::uint32_t odd_lanes = 0xaaaaaaaau;  // lane 0, the source, does not take part
  r.run(warp_op::shfl_idx, odd_lanes);
  for (unsigned l = 0; l < 32; ++l) EXPECT_EQ(r.result[l], l % 2 ? 100 + l : untouched) << "lane " << l;
}

TEST(WarpOps, ShflWidthOneGivesEveryLaneItsOwnValue) {
  round r = round::numbered();
  for (unsigned l = 0; l < 32; ++l) r.lane_arg[l] = static_cast<int>(31 - l);
  r.run(warp_op::shfl_idx, every_lane, 1);
  for (unsigned l = 0; l < 32; ++l) EXPECT_EQ(r.result[l], 100 + l) << "lane " << l;
}

TEST(WarpOps, ShflUpKeepsTheOwnValueBelowTheSegmentStart) {
  round r = round::numbered();
  r.all_pass(3);
  r.run(warp_op::shfl_up, every_lane, 16);
  for (unsigned l = 0; l < 32; ++l) EXPECT_EQ(r.result[l], l % 16 < 3 ? 100 + l : 100 + l - 3) << "lane " << l;
}

TEST(WarpOps, ShflDownKeepsTheOwnValuePastTheSegmentEnd) {
  round r = round::numbered();
  r.all_pass(2);
  r.run(warp_op::shfl_down, every_lane, 8);
  for (unsigned l = 0; l < 32; ++l) EXPECT_EQ(r.result[l], l % 8 >= 6 ? 100 + l : 100 + l + 2) << "lane " << l;
  r.all_pass(40);  // 40 & 31 = 8
  r.run(warp_op::shfl_down, every_lane, 32);
  for (unsigned l = 0; l < 32; ++l) EXPECT_EQ(r.result[l], l >= 24 ? 100 + l : 100 + l + 8) << "lane " << l;
}

TEST(WarpOps, ShflDownFromAnInactiveLaneGivesTheOwnValue) {
  round r = round::numbered();
  r.all_pass(1);
  const std::uint32_t lanes = every_lane & ~(1u << 5);  // lane 4 reads lane 5, which is not in the round
  r.run(warp_op::shfl_down, lanes);
  EXPECT_EQ(r.result[4], 104u);
  EXPECT_EQ(r.result[3], 104u);
  EXPECT_EQ(r.result[5], untouched);
  EXPECT_EQ(r.result[6], 107u);
}

TEST(WarpOps, ShflXorSwapsPartnersAndReadsOnlyEarlierSegments) {
  round r = round::numbered();
  r.all_pass(16);
  r.run(warp_op::shfl_xor, every_lane, 32);
  for (unsigned l = 0; l < 32; ++l) EXPECT_EQ(r.result[l], 100 + (l ^ 16)) << "lane " << l;
  // CUDA: with width < 32 a lane may read from an earlier segment, but one
  // reading from a later segment gets its own value.
  r.all_pass(8);
  r.run(warp_op::shfl_xor, every_lane, 8);
  for (unsigned l = 0; l < 32; ++l) EXPECT_EQ(r.result[l], (l & 8) ? 100 + (l ^ 8) : 100 + l) << "lane " << l;
}

TEST(WarpOps, ShuffleSourceNamesTheLaneRead) {
  EXPECT_EQ(ops::shuffle_source(warp_op::shfl_idx, 9, 2, 8, every_lane), 10u);
  EXPECT_EQ(ops::shuffle_source(warp_op::shfl_up, 17, 1, 16, every_lane), 16u);
  EXPECT_EQ(ops::shuffle_source(warp_op::shfl_up, 16, 1, 16, every_lane), 16u);
  EXPECT_EQ(ops::shuffle_source(warp_op::shfl_down, 31, 1, 32, every_lane), 31u);
  EXPECT_EQ(ops::shuffle_source(warp_op::shfl_xor, 3, 1, 32, every_lane & ~(1u << 2)), 3u);
}

TEST(WarpOps, BallotSetsTheBitsOfParticipatingLanesWithATruePredicate) {
  round r;
  r.value[0] = 1;
  r.value[3] = 1ull << 40;  // true: only zero is false
  r.value[4] = 1;           // not in the round
  r.value[31] = 7;
  const std::uint32_t lanes = every_lane & ~(1u << 4);
  EXPECT_EQ(ops::ballot(lanes, r.value), (1u << 0) | (1u << 3) | (1u << 31));
  r.run(warp_op::ballot, lanes);
  for (unsigned l = 0; l < 32; ++l) EXPECT_EQ(r.result[l], l == 4 ? untouched : 0x80000009ull) << "lane " << l;
}

TEST(WarpOps, AnyIsTrueOnlyForATrueParticipatingLane) {
  round r;
  r.value[7] = 1;
  EXPECT_FALSE(ops::any(every_lane & ~(1u << 7), r.value));
  EXPECT_TRUE(ops::any(1u << 7, r.value));
  r.run(warp_op::any, 0x0000ff00u);
  EXPECT_EQ(r.result[8], 0u);
  r.run(warp_op::any, 0x000000ffu);
  EXPECT_EQ(r.result[0], 1u);
}

TEST(WarpOps, AllIgnoresLanesOutsideTheRound) {
  round r;
  for (unsigned l = 0; l < 16; ++l) r.value[l] = 1;
  EXPECT_TRUE(ops::all(0x0000ffffu, r.value));
  EXPECT_FALSE(ops::all(0x0001ffffu, r.value));
  r.run(warp_op::all, 0x0000ffffu);
  EXPECT_EQ(r.result[15], 1u);
  EXPECT_EQ(r.result[16], untouched);
  r.run(warp_op::all, every_lane);
  EXPECT_EQ(r.result[0], 0u);
}

TEST(WarpOps, ActivemaskGivesEachArrivingLaneTheLanesThatArrivedTogether) {
  round r;
  const std::uint32_t arrived = 0x00f0000fu;
  r.run(warp_op::active, arrived);
  for (unsigned l = 0; l < 32; ++l) EXPECT_EQ(r.result[l], (arrived >> l & 1u) ? arrived : untouched) << "lane " << l;
}

TEST(WarpOps, SyncwarpAndWmmaComputeNothing) {
  round r = round::numbered();
  for (warp_op op : {warp_op::sync, warp_op::wmma_load, warp_op::wmma_store, warp_op::wmma_mma}) {
    r.run(op, every_lane);
    for (unsigned l = 0; l < 32; ++l) ASSERT_EQ(r.result[l], untouched) << ops::name(op) << ", lane " << l;
  }
}

TEST(WarpOps, ReduceAddWrapsAndReadsTheLow32Bits) {
  round r;
  r.value[0] = 0xffffffffu;
  r.value[1] = 2;
  r.value[2] = 0x500000000ull;  // upper bits do not count
  r.value[3] = 1000;            // not in the round
  EXPECT_EQ(ops::reduce(warp_op::reduce_add, 0x7u, r.value, false), 1u);
  r.run(warp_op::reduce_add, 0x7u);
  EXPECT_EQ(r.result[2], 1u);
  EXPECT_EQ(r.result[3], untouched);
}

TEST(WarpOps, ReduceMinAndMaxCompareSignedOnlyWhenAsked) {
  round r;
  r.value[0] = static_cast<std::uint32_t>(-5);
  r.value[1] = 3;
  r.value[2] = static_cast<std::uint32_t>(-9);  // not in the round
  const std::uint32_t lanes = 0x3u;
  EXPECT_EQ(ops::reduce(warp_op::reduce_min, lanes, r.value, true), static_cast<std::uint32_t>(-5));
  EXPECT_EQ(ops::reduce(warp_op::reduce_max, lanes, r.value, true), 3u);
  EXPECT_EQ(ops::reduce(warp_op::reduce_min, lanes, r.value, false), 3u);
  EXPECT_EQ(ops::reduce(warp_op::reduce_max, lanes, r.value, false), static_cast<std::uint32_t>(-5));
  r.all_pass(1);  // the int overload of __reduce_min_sync
  r.run(warp_op::reduce_min, lanes);
  EXPECT_EQ(r.result[1], static_cast<std::uint32_t>(-5));
  r.all_pass(0);
  r.run(warp_op::reduce_min, lanes);
  EXPECT_EQ(r.result[1], 3u);
}

TEST(WarpOps, ReduceAndOrXorCombineParticipatingLanesOnly) {
  round r;
  r.value[1] = 0b1100;
  r.value[2] = 0b1010;
  r.value[5] = 0b0001;  // not in the round
  const std::uint32_t lanes = (1u << 1) | (1u << 2);
  EXPECT_EQ(ops::reduce(warp_op::reduce_and, lanes, r.value, false), 0b1000u);
  EXPECT_EQ(ops::reduce(warp_op::reduce_or, lanes, r.value, false), 0b1110u);
  EXPECT_EQ(ops::reduce(warp_op::reduce_xor, lanes, r.value, false), 0b0110u);
  r.run(warp_op::reduce_xor, lanes);
  EXPECT_EQ(r.result[1], 0b0110u);
  EXPECT_EQ(r.result[5], untouched);
}

TEST(WarpOps, MatchAnyGroupsParticipatingLanesByEqualValue) {
  round r;
  for (unsigned l = 0; l < 32; ++l) r.value[l] = l % 3;
  r.value[4] = 1ull << 33;  // differs from 0 only above the low 32 bits: the whole value counts
  const std::uint32_t lanes = every_lane & ~(1u << 3);
  EXPECT_EQ(ops::match_any(lanes, r.value, 4), 1u << 4);
  r.run(warp_op::match_any, lanes);
  for (unsigned l = 0; l < 32; ++l) {
    if (l == 3) {
      EXPECT_EQ(r.result[l], untouched);
      continue;
    }
    std::uint32_t want = 0;
    for (unsigned k = 0; k < 32; ++k)
      if ((lanes >> k & 1u) && r.value[k] == r.value[l]) want |= 1u << k;
    EXPECT_EQ(r.result[l], want) << "lane " << l;
  }
  EXPECT_EQ(r.result[0] & (1u << 3), 0u);  // lane 3 has value 0 too, but is not in the round
}

TEST(WarpOps, LanesInWarpStopAtThePartialLastWarp) {
  EXPECT_EQ(ops::lanes_in_warp(48, 0), every_lane);
  EXPECT_EQ(ops::lanes_in_warp(48, 1), 0x0000ffffu);
  EXPECT_EQ(ops::lanes_in_warp(64, 1), every_lane);
  EXPECT_EQ(ops::lanes_in_warp(1, 0), 0x1u);
}

namespace {
// misuse_of_call's answer and its message, as the runner reports them.
struct call_check {
  ops::misuse kind;
  std::string what;
};
call_check check_call(warp_op op, unsigned lane, std::uint32_t mask, int width, std::uint32_t present, std::uint32_t exited) {
  const ops::misuse kind = ops::misuse_of_call(op, lane, mask, width, present, exited);
  return {kind, kind == ops::misuse::none ? "" : ops::describe(kind, op, lane, mask, width, present, exited)};
}
}  // namespace

TEST(WarpOps, ACallWhoseMaskLacksTheCallerIsASynchronisationMisuse) {
  const call_check c = check_call(warp_op::shfl_idx, 3, 0x1u, 32, every_lane, 0);
  EXPECT_EQ(c.kind, ops::misuse::mask_lacks_caller);
  EXPECT_TRUE(ops::is_synchronisation(c.kind));
  EXPECT_NE(c.what.find("__shfl_sync with mask 0x00000001 does not name the calling lane 3"), std::string::npos) << c.what;
}

TEST(WarpOps, AShuffleWidthNotAPowerOfTwoIsABadArgument) {
  for (int width : {0, 3, 33, -8}) {
    const call_check c = check_call(warp_op::shfl_xor, 0, every_lane, width, every_lane, 0);
    EXPECT_EQ(c.kind, ops::misuse::bad_shuffle_width) << "width " << width;
    EXPECT_FALSE(ops::is_synchronisation(c.kind));
    EXPECT_NE(c.what.find("__shfl_xor_sync with width " + std::to_string(width)), std::string::npos) << c.what;
  }
  for (int width : {1, 2, 16, 32}) EXPECT_EQ(ops::misuse_of_call(warp_op::shfl_xor, 0, every_lane, width, every_lane, 0), ops::misuse::none) << width;
  EXPECT_EQ(ops::misuse_of_call(warp_op::ballot, 0, every_lane, 3, every_lane, 0), ops::misuse::none);  // width belongs to shuffles only
}

TEST(WarpOps, WmmaInAPartialWarpIsRefused) {
  const call_check c = check_call(warp_op::wmma_mma, 0, every_lane, 32, 0x0000ffffu, 0);
  EXPECT_EQ(c.kind, ops::misuse::wmma_in_partial_warp);
  EXPECT_TRUE(ops::is_synchronisation(c.kind));
  EXPECT_NE(c.what.find("wmma::mma_sync in a warp of 16 threads"), std::string::npos) << c.what;
  EXPECT_EQ(ops::misuse_of_call(warp_op::wmma_mma, 0, every_lane, 32, every_lane, 0), ops::misuse::none);
}

TEST(WarpOps, AMaskNamingExitedLanesIsRefusedButAbsentLanesAreIgnored) {
  // A full mask in a warp of 16 threads: lanes 16..31 do not exist, as on the GPU.
  EXPECT_EQ(ops::misuse_of_call(warp_op::sync, 0, every_lane, 32, 0x0000ffffu, 0), ops::misuse::none);
  const call_check c = check_call(warp_op::sync, 0, every_lane, 32, 0x0000ffffu, 0x00000030u);
  EXPECT_EQ(c.kind, ops::misuse::mask_names_exited_lanes);
  EXPECT_TRUE(ops::is_synchronisation(c.kind));
  EXPECT_NE(c.what.find("__syncwarp with mask 0x0000ffff names lanes 0x00000030 that have already exited"), std::string::npos) << c.what;
  // Exited lanes outside the mask are no concern of this call.
  EXPECT_EQ(ops::misuse_of_call(warp_op::sync, 0, 0x0000000fu, 32, every_lane, 0x00000030u), ops::misuse::none);
}
