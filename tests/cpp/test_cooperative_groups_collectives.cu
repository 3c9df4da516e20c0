// cg::reduce, cg::inclusive_scan / exclusive_scan and cg::memcpy_async
// against host references, over tiles of every size and coalesced groups.
#if defined(__CUDACC__)
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
#else
#include "lockstep/emu/cooperative_groups.h"
#include "lockstep/emu/cooperative_groups/memcpy_async.h"
#include "lockstep/emu/cooperative_groups/reduce.h"
#include "lockstep/emu/cooperative_groups/scan.h"
#endif
#include <algorithm>
#include <functional>

#include "test_util.h"

namespace cg = cooperative_groups;
using namespace testing_util;

namespace {

constexpr int block_threads = 128;

enum int_field { r_plus, r_less, r_greater, r_and, r_or, r_xor, r_lambda, s_in_plus, s_ex_plus, s_in_less, s_ex_greater, s_in_lambda, int_fields };
enum float_field { rf_plus, sf_in_plus, sf_ex_plus, float_fields };

// A user's operation: the sum modulo 1009 (associative and commutative; the
// inputs are below 1009, so a group of one, whose value is returned as it is,
// agrees with the fold).
struct mod_sum {
  __host__ __device__ int operator()(int a, int b) const { return (a + b) % 1009; }
};

template <class Group>
__device__ void collectives(const Group& g, int v, float f, int* o, float* of) {
  o[r_plus] = cg::reduce(g, v, cg::plus<int>());
  o[r_less] = cg::reduce(g, v, cg::less<int>());
  o[r_greater] = cg::reduce(g, v, cg::greater<int>());
  o[r_and] = static_cast<int>(cg::reduce(g, static_cast<unsigned>(v), cg::bit_and<unsigned>()));
  o[r_or] = static_cast<int>(cg::reduce(g, static_cast<unsigned>(v), cg::bit_or<unsigned>()));
  o[r_xor] = static_cast<int>(cg::reduce(g, static_cast<unsigned>(v), cg::bit_xor<unsigned>()));
  o[r_lambda] = cg::reduce(g, v & 511, [](int a, int b) { return (a + b) % 1009; });
  o[s_in_plus] = cg::inclusive_scan(g, v, cg::plus<int>());
  o[s_ex_plus] = cg::exclusive_scan(g, v);
  o[s_in_less] = cg::inclusive_scan(g, v, cg::less<int>());
  o[s_ex_greater] = cg::exclusive_scan(g, v, cg::greater<int>());
  o[s_in_lambda] = cg::inclusive_scan(g, v & 511, mod_sum());
  of[rf_plus] = cg::reduce(g, f, cg::plus<float>());
  of[sf_in_plus] = cg::inclusive_scan(g, f);
  of[sf_ex_plus] = cg::exclusive_scan(g, f, cg::plus<float>());
}

template <unsigned N>
__global__ void tile_collectives(const int* value, const float* fvalue, int* out, float* fout) {
  cg::thread_block_tile<N> tile = cg::tiled_partition<N>(cg::this_thread_block());
  const unsigned t = threadIdx.x;
  collectives(tile, value[t], fvalue[t], out + t * int_fields, fout + t * float_fields);
}

__global__ void coalesced_collectives(const int* take, const int* value, const float* fvalue, int* out, float* fout) {
  const unsigned t = threadIdx.x;
  if (take[t]) collectives(cg::coalesced_threads(), value[t], fvalue[t], out + t * int_fields, fout + t * float_fields);
}

// Checks thread `t` of a group whose members, in rank order, are `members`.
// A tile's float sum as CUDA's butterfly adds it (exactly): the emulator's
// rounding is the GPU's.
float butterfly_sum(const std::vector<int>& members, int r, const std::vector<float>& fvalue) {
  std::vector<float> acc;
  for (int m : members) acc.push_back(fvalue[m]);
  for (std::size_t lanes = acc.size() / 2; lanes > 0; lanes /= 2) {
    std::vector<float> next(acc.size());
    for (std::size_t i = 0; i < acc.size(); ++i) next[i] = acc[i] + acc[i ^ lanes];
    acc = next;
  }
  return acc[r];
}

void check_member(const std::vector<int>& members, int r, const std::vector<int>& value, const std::vector<float>& fvalue, const int* o,
                  const float* of) {
  const int n = static_cast<int>(members.size());
  auto fold = [&](int count, int init, auto op, bool mask) {
    int acc = init;
    for (int k = 0; k < count; ++k) acc = op(acc, mask ? value[members[k]] & 511 : value[members[k]]);
    return acc;
  };
  const int v0 = value[members[0]];
  auto plus = [](int a, int b) { return a + b; };
  auto lo = [](int a, int b) { return std::min(a, b); };
  auto hi = [](int a, int b) { return std::max(a, b); };
  unsigned all_and = ~0u, all_or = 0, all_xor = 0;
  for (int m : members) {
    all_and &= unsigned(value[m]);
    all_or |= unsigned(value[m]);
    all_xor ^= unsigned(value[m]);
  }
  EXPECT_EQ(o[r_plus], fold(n, 0, plus, false));
  EXPECT_EQ(o[r_less], fold(n, v0, lo, false));
  EXPECT_EQ(o[r_greater], fold(n, v0, hi, false));
  EXPECT_EQ(unsigned(o[r_and]), all_and);
  EXPECT_EQ(unsigned(o[r_or]), all_or);
  EXPECT_EQ(unsigned(o[r_xor]), all_xor);
  EXPECT_EQ(o[r_lambda], fold(n, 0, mod_sum(), true));
  EXPECT_EQ(o[s_in_plus], fold(r + 1, 0, plus, false));
  EXPECT_EQ(o[s_ex_plus], fold(r, 0, plus, false));
  EXPECT_EQ(o[s_in_less], fold(r + 1, v0, lo, false));
  EXPECT_EQ(o[s_ex_greater], r == 0 ? 0 : fold(r, v0, hi, false));  // rank 0's is CUDA's T{}
  EXPECT_EQ(o[s_in_lambda], fold(r + 1, 0, mod_sum(), true));
  double sum = 0, prefix = 0, scale = 0;
  for (int k = 0; k < n; ++k) {
    sum += fvalue[members[k]];
    if (k < r) prefix += fvalue[members[k]];
    scale += std::fabs(fvalue[members[k]]);
  }
  const double tolerance = 1e-5 * (scale + 1);
  EXPECT_NEAR(of[rf_plus], sum, tolerance);
  EXPECT_NEAR(of[sf_in_plus], prefix + fvalue[members[r]], tolerance);
  EXPECT_NEAR(of[sf_ex_plus], prefix, tolerance);
}

// Tiles of up to 32 threads in blocks of 128, larger ones in blocks of two tiles.
template <unsigned N>
void check_tile_collectives() {
  const int threads = N <= 64 ? block_threads : static_cast<int>(std::min(2 * N, 1024u));
  const auto value = random_vector<int>(threads, -100000, 100000);
  const auto fvalue = random_vector<float>(threads, -1, 1);
  device_buffer<int> d_value(value), out(threads * int_fields);
  device_buffer<float> d_fvalue(fvalue), fout(threads * float_fields);
  lockstep::launch(tile_collectives<N>, 1, threads)(d_value.get(), d_fvalue.get(), out.get(), fout.get());
  const auto got = out.download();
  const auto fgot = fout.download();
  for (int t = 0; t < threads; ++t) {
    std::vector<int> members;
    for (unsigned r = 0; r < N; ++r) members.push_back(t / N * N + r);
    SCOPED_TRACE("tile " + std::to_string(N) + ", thread " + std::to_string(t));
    check_member(members, t % N, value, fvalue, &got[t * int_fields], &fgot[t * float_fields]);
    if (N <= 32) EXPECT_EQ(fgot[t * float_fields + rf_plus], butterfly_sum(members, t % N, fvalue));
  }
}

TEST(CooperativeGroupsCollectives, ReduceAndScanOnTilesOfEverySize) {
  check_tile_collectives<1>();
  check_tile_collectives<2>();
  check_tile_collectives<4>();
  check_tile_collectives<8>();
  check_tile_collectives<16>();
  check_tile_collectives<32>();
}

// Tiles of several warps: each warp, then the warps' totals.
TEST(CooperativeGroupsCollectives, ReduceAndScanOnMultiWarpTiles) {
  check_tile_collectives<64>();
  check_tile_collectives<128>();
  check_tile_collectives<256>();
  check_tile_collectives<512>();
  check_tile_collectives<1024>();
}

TEST(CooperativeGroupsCollectives, ReduceAndScanOnCoalescedGroups) {
  const int threads = 96;
  const auto take = random_vector<int>(threads, 0, 1);
  const auto value = random_vector<int>(threads, -100000, 100000);
  const auto fvalue = random_vector<float>(threads, -1, 1);
  device_buffer<int> d_take(take), d_value(value), out(threads * int_fields);
  device_buffer<float> d_fvalue(fvalue), fout(threads * float_fields);
  lockstep::launch(coalesced_collectives, 1, threads)(d_take.get(), d_value.get(), d_fvalue.get(), out.get(), fout.get());
  const auto got = out.download();
  const auto fgot = fout.download();
  for (int w = 0; w < threads / 32; ++w) {
    std::vector<int> members;
    for (int l = 0; l < 32; ++l)
      if (take[w * 32 + l]) members.push_back(w * 32 + l);
    for (int r = 0; r < static_cast<int>(members.size()); ++r) {
      SCOPED_TRACE("thread " + std::to_string(members[r]));
      check_member(members, r, value, fvalue, &got[members[r] * int_fields], &fgot[members[r] * float_fields]);
    }
  }
}

// A block stages its slice in shared memory with memcpy_async, a tile copies
// a quarter of it again; both read back after wait.
__global__ void staged_copy(const float* in, float* out, float* tile_out, int n) {
  __shared__ float staged[256];
  __shared__ float per_tile[4][64];
  cg::thread_block block = cg::this_thread_block();
  cg::memcpy_async(block, staged, in + blockIdx.x * n, sizeof(float) * n);
  cg::wait(block);
  out[blockIdx.x * n + threadIdx.x] = 2 * staged[(threadIdx.x + 1) % n];
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  const int quarter = n / 4;
  const unsigned q = tile.meta_group_rank();
  if (q < 4) {
    cg::memcpy_async(tile, per_tile[q], staged + quarter * q, sizeof(float) * quarter);
    cg::wait_prior<0>(tile);
    for (int k = tile.thread_rank(); k < quarter; k += 32) tile_out[blockIdx.x * n + quarter * q + k] = per_tile[q][k];
  }
}

TEST(CooperativeGroupsCollectives, MemcpyAsync) {
  const int blocks = 3, n = 256;
  const auto in = random_vector<float>(blocks * n, -1, 1);
  device_buffer<float> d_in(in), out(blocks * n), tile_out(blocks * n);
  lockstep::launch(staged_copy, blocks, n)(d_in.get(), out.get(), tile_out.get(), n);
  const auto got = out.download();
  const auto tile_got = tile_out.download();
  for (int b = 0; b < blocks; ++b)
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(got[b * n + i], 2 * in[b * n + (i + 1) % n]) << "block " << b << ", element " << i;
      ASSERT_EQ(tile_got[b * n + i], in[b * n + i]) << "block " << b << ", element " << i;
    }
}

}  // namespace
