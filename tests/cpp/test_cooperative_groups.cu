// cooperative_groups' groups against host references: thread_block, tiles of
// every size from tiled_partition<N> and from tiles, run-time tiles
// (thread_group), coalesced groups under divergence, binary and labeled
// partitions (and their sides meeting at the warp's sync), this_thread, invoke_one.
#if defined(__CUDACC__)
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#else
#include "lockstep/emu/cooperative_groups.h"
#include "lockstep/emu/cooperative_groups/reduce.h"
#endif
#include "test_util.h"

namespace cg = cooperative_groups;
using namespace testing_util;

namespace {

constexpr int block_threads = 128;

// A value of more than 8 bytes, which shuffles move in pieces.
struct wide {
  float x;
  double y;
  int z;
};

enum tile_field {
  f_rank,
  f_size,
  f_meta_rank,
  f_meta_size,
  f_shfl,
  f_shfl_up,
  f_shfl_down,
  f_shfl_xor,
  f_any,
  f_all,
  f_ballot,
  f_match_any,
  f_match_all,
  f_match_all_pred,
  f_synced,
  f_wide_z,
  f_sub_meta_rank,
  f_sub_meta_size,
  f_num_threads,
  tile_fields
};

template <unsigned N>
__global__ void tile_ops(const int* value, const int* pred, const int* label, int src, unsigned delta, unsigned lane_mask, int* out) {
  __shared__ int staged[block_threads];
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<N> tile = cg::tiled_partition<N>(block);
  const unsigned t = block.thread_rank();
  int* o = out + t * tile_fields;
  const int v = value[t];
  o[f_rank] = tile.thread_rank();
  o[f_size] = tile.size();
  o[f_num_threads] = tile.num_threads();
  o[f_meta_rank] = tile.meta_group_rank();
  o[f_meta_size] = tile.meta_group_size();
  o[f_shfl] = tile.shfl(v, src);
  o[f_shfl_up] = tile.shfl_up(v, delta);
  o[f_shfl_down] = tile.shfl_down(v, delta);
  o[f_shfl_xor] = tile.shfl_xor(v, lane_mask);
  o[f_any] = tile.any(pred[t]);
  o[f_all] = tile.all(pred[t]);
  o[f_ballot] = static_cast<int>(tile.ballot(pred[t]));
  o[f_match_any] = static_cast<int>(tile.match_any(label[t]));
  int same = -1;
  o[f_match_all] = static_cast<int>(tile.match_all(label[t], same));
  o[f_match_all_pred] = same;
  wide w{static_cast<float>(v), v * 0.5, v + 7};
  o[f_wide_z] = tile.shfl(w, src).z;
  staged[t] = v;
  tile.sync();
  o[f_synced] = staged[t - tile.thread_rank() + (tile.thread_rank() + 1) % N];
  // A tile of the tile: ranked within its parent tile.
  if constexpr (N > 1) {
    auto sub = cg::tiled_partition<N / 2>(tile);
    o[f_sub_meta_rank] = sub.meta_group_rank();
    o[f_sub_meta_size] = sub.meta_group_size();
  } else {
    o[f_sub_meta_rank] = 0;
    o[f_sub_meta_size] = 1;
  }
}

template <unsigned N>
void check_tile() {
  const auto value = random_vector<int>(block_threads, -1000000, 1000000);
  auto pred = random_vector<int>(block_threads, 0, 1);
  // Some whole tiles true, so that all() is seen true as well as false.
  for (unsigned base = 0; base < block_threads; base += N)
    if (random_vector<int>(1, 0, 2)[0] == 0)
      for (unsigned r = 0; r < N; ++r) pred[base + r] = 1;
  auto label = random_vector<int>(block_threads, 0, 2);
  for (unsigned base = 0; base < block_threads; base += N)
    if (random_vector<int>(1, 0, 2)[0] == 0)
      for (unsigned r = 0; r < N; ++r) label[base + r] = 5;
  const int src = random_vector<int>(1, 0, N - 1)[0];
  const unsigned delta = static_cast<unsigned>(random_vector<int>(1, 0, N)[0]);
  const unsigned lane_mask = static_cast<unsigned>(random_vector<int>(1, 0, N - 1)[0]);
  device_buffer<int> d_value(value), d_pred(pred), d_label(label), out(block_threads * tile_fields);
  lockstep::launch(tile_ops<N>, 1, block_threads)(d_value.get(), d_pred.get(), d_label.get(), src, delta, lane_mask, out.get());
  const auto got = out.download();
  const unsigned sub_size = N > 1 ? N / 2 : 1;
  for (unsigned t = 0; t < block_threads; ++t) {
    const unsigned rank = t % N, base = t - rank;
    const int* o = &got[t * tile_fields];
    unsigned ballot = 0, match = 0;
    bool any = false, all = true;
    for (unsigned r = 0; r < N; ++r) {
      ballot |= (pred[base + r] != 0 ? 1u : 0u) << r;
      any = any || pred[base + r];
      all = all && pred[base + r];
      match |= (label[base + r] == label[t] ? 1u : 0u) << r;
    }
    const unsigned full = N == 32 ? 0xffffffffu : (1u << N) - 1u;
    SCOPED_TRACE("tile " + std::to_string(N) + ", thread " + std::to_string(t));
    EXPECT_EQ(o[f_rank], int(rank));
    EXPECT_EQ(o[f_size], int(N));
    EXPECT_EQ(o[f_num_threads], int(N));
    EXPECT_EQ(o[f_meta_rank], int(t / N));
    EXPECT_EQ(o[f_meta_size], int((block_threads + N - 1) / N));
    EXPECT_EQ(o[f_shfl], value[base + src]);
    EXPECT_EQ(o[f_shfl_up], rank >= delta ? value[t - delta] : value[t]);
    EXPECT_EQ(o[f_shfl_down], rank + delta < N ? value[t + delta] : value[t]);
    EXPECT_EQ(o[f_shfl_xor], value[base + (rank ^ lane_mask)]);
    EXPECT_EQ(o[f_any], int(any));
    EXPECT_EQ(o[f_all], int(all));
    EXPECT_EQ(unsigned(o[f_ballot]), ballot);
    EXPECT_EQ(unsigned(o[f_match_any]), match);
    EXPECT_EQ(o[f_match_all_pred], int(match == full));
    EXPECT_EQ(unsigned(o[f_match_all]), match == full ? full : 0u);
    EXPECT_EQ(o[f_wide_z], value[base + src] + 7);
    EXPECT_EQ(o[f_synced], value[base + (rank + 1) % N]);
    EXPECT_EQ(o[f_sub_meta_rank], int(rank / sub_size));
    EXPECT_EQ(o[f_sub_meta_size], int(N / sub_size));
  }
}

TEST(CooperativeGroups, TilesOfEverySize) {
  check_tile<1>();
  check_tile<2>();
  check_tile<4>();
  check_tile<8>();
  check_tile<16>();
  check_tile<32>();
}

enum multi_field { m_rank, m_size, m_meta_rank, m_meta_size, m_shfl, m_any, m_all, m_synced, m_sub_meta_rank, m_sub_meta_size, multi_fields };

// Tiles of several warps: shuffles, votes and sync over the block's barrier.
template <unsigned N>
__global__ void multi_warp_ops(const int* value, const int* pred, int src, int* out) {
  __shared__ int staged[1024];
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<N> tile = cg::tiled_partition<N>(block);
  const unsigned t = block.thread_rank();
  int* o = out + t * multi_fields;
  o[m_rank] = tile.thread_rank();
  o[m_size] = tile.size();
  o[m_meta_rank] = tile.meta_group_rank();
  o[m_meta_size] = tile.meta_group_size();
  o[m_shfl] = tile.shfl(value[t], src);
  o[m_any] = tile.any(pred[t]);
  o[m_all] = tile.all(pred[t]);
  staged[t] = value[t];
  tile.sync();
  o[m_synced] = staged[t - tile.thread_rank() + (tile.thread_rank() + 1) % N];
  // Warps of the tile, ranked within it.
  const auto warp = cg::tiled_partition<32>(tile);
  o[m_sub_meta_rank] = warp.meta_group_rank();
  o[m_sub_meta_size] = warp.meta_group_size();
}

template <unsigned N>
void check_multi_warp_tile() {
  const unsigned threads = N < 1024 ? 2 * N : N;
  const auto value = random_vector<int>(threads, -1000000, 1000000);
  auto pred = random_vector<int>(threads, 0, 1);
  if (random_vector<int>(1, 0, 1)[0])
    for (unsigned r = 0; r < N; ++r) pred[r] = 1;  // the first tile all true
  const int src = random_vector<int>(1, 0, N - 1)[0];
  device_buffer<int> d_value(value), d_pred(pred), out(threads * multi_fields);
  lockstep::launch(multi_warp_ops<N>, 1, threads)(d_value.get(), d_pred.get(), src, out.get());
  const auto got = out.download();
  for (unsigned t = 0; t < threads; ++t) {
    const unsigned rank = t % N, base = t - rank;
    bool any = false, all = true;
    for (unsigned r = 0; r < N; ++r) {
      any = any || pred[base + r];
      all = all && pred[base + r];
    }
    const int* o = &got[t * multi_fields];
    SCOPED_TRACE("tile " + std::to_string(N) + ", thread " + std::to_string(t));
    EXPECT_EQ(o[m_rank], int(rank));
    EXPECT_EQ(o[m_size], int(N));
    EXPECT_EQ(o[m_meta_rank], int(t / N));
    EXPECT_EQ(o[m_meta_size], int(threads / N));
    EXPECT_EQ(o[m_shfl], value[base + src]);
    EXPECT_EQ(o[m_any], int(any));
    EXPECT_EQ(o[m_all], int(all));
    EXPECT_EQ(o[m_synced], value[base + (rank + 1) % N]);
    EXPECT_EQ(o[m_sub_meta_rank], int(rank / 32));
    EXPECT_EQ(o[m_sub_meta_size], int(N / 32));
  }
}

TEST(CooperativeGroups, MultiWarpTiles) {
  check_multi_warp_tile<64>();
  check_multi_warp_tile<128>();
  check_multi_warp_tile<256>();
  check_multi_warp_tile<512>();
  check_multi_warp_tile<1024>();
}

enum block_field {
  b_rank,
  b_size,
  b_index_x,
  b_index_y,
  b_thread_x,
  b_thread_y,
  b_thread_z,
  b_dim_x,
  b_dim_z,
  b_sum,
  b_self_rank,
  b_self_size,
  block_fields
};

__global__ void block_ops(const int* value, int* out) {
  __shared__ int total;
  cg::thread_block block = cg::this_thread_block();
  const unsigned t = block.thread_rank();
  int* o = out + (blockIdx.y * gridDim.x + blockIdx.x) * block.size() * block_fields + t * block_fields;
  o[b_rank] = t;
  o[b_size] = block.num_threads();
  o[b_index_x] = block.group_index().x;
  o[b_index_y] = block.group_index().y;
  o[b_thread_x] = block.thread_index().x;
  o[b_thread_y] = block.thread_index().y;
  o[b_thread_z] = block.thread_index().z;
  o[b_dim_x] = block.group_dim().x;
  o[b_dim_z] = block.dim_threads().z;
  if (t == 0) total = 0;
  cg::sync(block);
  atomicAdd(&total, value[t]);
  block.sync();
  o[b_sum] = total;
  cg::thread_block_tile<1> self = cg::this_thread();
  o[b_self_rank] = self.thread_rank() + 10 * self.meta_group_rank();
  o[b_self_size] = self.size() + 10 * self.meta_group_size();
}

TEST(CooperativeGroups, ThreadBlock) {
  const dim3 grid(3, 2), block(8, 4, 2);
  const int threads = 64;
  const auto value = random_vector<int>(threads, -1000, 1000);
  long long sum = 0;
  for (int v : value) sum += v;
  device_buffer<int> d_value(value), out(6 * threads * block_fields);
  lockstep::launch(block_ops, grid, block)(d_value.get(), out.get());
  const auto got = out.download();
  for (unsigned b = 0; b < 6; ++b)
    for (unsigned t = 0; t < unsigned(threads); ++t) {
      const int* o = &got[(b * threads + t) * block_fields];
      SCOPED_TRACE("block " + std::to_string(b) + ", thread " + std::to_string(t));
      EXPECT_EQ(o[b_rank], int(t));
      EXPECT_EQ(o[b_size], threads);
      EXPECT_EQ(o[b_index_x], int(b % 3));
      EXPECT_EQ(o[b_index_y], int(b / 3));
      EXPECT_EQ(o[b_thread_x], int(t % 8));
      EXPECT_EQ(o[b_thread_y], int(t / 8 % 4));
      EXPECT_EQ(o[b_thread_z], int(t / 32));
      EXPECT_EQ(o[b_dim_x], 8);
      EXPECT_EQ(o[b_dim_z], 2);
      EXPECT_EQ(o[b_sum], sum);
      EXPECT_EQ(o[b_self_rank], 0);
      EXPECT_EQ(o[b_self_size], 11);
    }
}

enum group_field { g_rank, g_size, g_synced, group_fields };

// tiled_partition(parent, n) at run time gives a thread_group.
__global__ void runtime_tiles(const int* value, unsigned tile_size, int* out) {
  __shared__ int staged[block_threads];
  cg::thread_block block = cg::this_thread_block();
  cg::thread_group tile = cg::tiled_partition(block, tile_size);
  const unsigned t = block.thread_rank();
  int* o = out + t * group_fields;
  o[g_rank] = static_cast<int>(tile.thread_rank());
  o[g_size] = static_cast<int>(tile.size());
  staged[t] = value[t];
  tile.sync();
  const unsigned rank = static_cast<unsigned>(tile.thread_rank());
  o[g_synced] = staged[t - rank + (rank + 1) % tile.size()];
  // A thread_group made from another: tiles of half the size.
  cg::thread_group half = cg::tiled_partition(tile, tile_size > 1 ? tile_size / 2 : 1);
  half.sync();
  if (half.thread_rank() != rank % (tile_size > 1 ? tile_size / 2 : 1)) o[g_rank] = -1;
}

TEST(CooperativeGroups, RuntimeTiledPartition) {
  for (unsigned n : {1u, 2u, 4u, 8u, 16u, 32u}) {
    const auto value = random_vector<int>(block_threads, -1000, 1000);
    device_buffer<int> d_value(value), out(block_threads * group_fields);
    lockstep::launch(runtime_tiles, 1, block_threads)(d_value.get(), n, out.get());
    const auto got = out.download();
    for (unsigned t = 0; t < block_threads; ++t) {
      SCOPED_TRACE("tile size " + std::to_string(n) + ", thread " + std::to_string(t));
      EXPECT_EQ(got[t * group_fields + g_rank], int(t % n));
      EXPECT_EQ(got[t * group_fields + g_size], int(n));
      EXPECT_EQ(got[t * group_fields + g_synced], value[t - t % n + (t % n + 1) % n]);
    }
  }
}

enum coalesced_field {
  c_size,
  c_rank,
  c_shfl,
  c_up,
  c_down,
  c_ballot,
  c_any,
  c_all,
  c_match,
  c_meta,
  c_tile_rank,
  c_tile_size,
  c_tile_meta_rank,
  coalesced_fields
};

// The threads that take the branch form the coalesced group.
__global__ void coalesced_ops(const int* take, const int* value, const int* label, int src, int* out) {
  const unsigned t = threadIdx.x;
  int* o = out + t * coalesced_fields;
  for (int f = 0; f < coalesced_fields; ++f) o[f] = -7;
  if (take[t]) {
    cg::coalesced_group g = cg::coalesced_threads();
    const int v = value[t];
    o[c_size] = g.size();
    o[c_rank] = g.thread_rank();
    o[c_shfl] = g.shfl(v, src % g.size());
    o[c_up] = g.shfl_up(v, 1);
    o[c_down] = g.shfl_down(v, 2);
    o[c_ballot] = static_cast<int>(g.ballot(v > 0));
    o[c_any] = g.any(v > 0);
    o[c_all] = g.all(v > 0);
    o[c_match] = static_cast<int>(g.match_any(label[t]));
    o[c_meta] = g.meta_group_rank() * 10 + g.meta_group_size();
    cg::coalesced_group pair = cg::tiled_partition(g, 2);
    o[c_tile_rank] = pair.thread_rank();
    o[c_tile_size] = pair.size();
    o[c_tile_meta_rank] = pair.meta_group_rank();
  }
}

TEST(CooperativeGroups, CoalescedUnderDivergence) {
  const int threads = 96;
  const auto take = random_vector<int>(threads, 0, 1);
  const auto value = random_vector<int>(threads, -1000, 1000);
  const auto label = random_vector<int>(threads, 0, 3);
  const int src = random_vector<int>(1, 0, 31)[0];
  device_buffer<int> d_take(take), d_value(value), d_label(label), out(threads * coalesced_fields);
  lockstep::launch(coalesced_ops, 1, threads)(d_take.get(), d_value.get(), d_label.get(), src, out.get());
  const auto got = out.download();
  for (int w = 0; w < threads / 32; ++w) {
    std::vector<int> members;  // thread ids in rank order
    for (int l = 0; l < 32; ++l)
      if (take[w * 32 + l]) members.push_back(w * 32 + l);
    const int size = static_cast<int>(members.size());
    for (int r = 0; r < size; ++r) {
      const int t = members[r];
      const int* o = &got[t * coalesced_fields];
      SCOPED_TRACE("thread " + std::to_string(t));
      unsigned ballot = 0, match = 0;
      bool any = false, all = true;
      for (int k = 0; k < size; ++k) {
        ballot |= (value[members[k]] > 0 ? 1u : 0u) << k;
        match |= (label[members[k]] == label[t] ? 1u : 0u) << k;
        any = any || value[members[k]] > 0;
        all = all && value[members[k]] > 0;
      }
      EXPECT_EQ(o[c_size], size);
      EXPECT_EQ(o[c_rank], r);
      EXPECT_EQ(o[c_shfl], value[members[src % size]]);
      EXPECT_EQ(o[c_up], value[members[r >= 1 ? r - 1 : r]]);
      EXPECT_EQ(o[c_down], value[members[r + 2 < size ? r + 2 : r]]);
      EXPECT_EQ(unsigned(o[c_ballot]), ballot);
      EXPECT_EQ(o[c_any], int(any));
      EXPECT_EQ(o[c_all], int(all));
      EXPECT_EQ(unsigned(o[c_match]), match);
      EXPECT_EQ(o[c_meta], 1);
      EXPECT_EQ(o[c_tile_rank], r % 2);
      EXPECT_EQ(o[c_tile_size], std::min(2, size - r / 2 * 2));
      EXPECT_EQ(o[c_tile_meta_rank], r / 2);
    }
  }
  for (int t = 0; t < threads; ++t)
    if (!take[t]) EXPECT_EQ(got[t * coalesced_fields + c_size], -7);
}

enum partition_field { p_size, p_rank, p_meta_rank, p_meta_size, p_sum, p_bin_size, p_bin_rank, p_bin_meta, partition_fields };

__global__ void partitions(const int* value, const int* label, int* out) {
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
  const unsigned t = threadIdx.x;
  int* o = out + t * partition_fields;
  cg::coalesced_group side = cg::binary_partition(warp, value[t] > 0);
  o[p_bin_size] = side.size();
  o[p_bin_rank] = side.thread_rank();
  o[p_bin_meta] = side.meta_group_rank() * 10 + side.meta_group_size();
  // Last: the groups shuffle different numbers of times.
  cg::coalesced_group same = cg::labeled_partition(warp, label[t]);
  o[p_size] = same.size();
  o[p_rank] = same.thread_rank();
  o[p_meta_rank] = same.meta_group_rank();
  o[p_meta_size] = same.meta_group_size();
  int sum = value[t];
  for (unsigned k = 1; k < same.size(); ++k) sum += same.shfl(value[t], (same.thread_rank() + k) % same.size());
  o[p_sum] = sum;
}

TEST(CooperativeGroups, LabeledAndBinaryPartitions) {
  const int threads = 64;
  const auto value = random_vector<int>(threads, -1000, 1000);
  const auto label = random_vector<int>(threads, 0, 4);
  device_buffer<int> d_value(value), d_label(label), out(threads * partition_fields);
  lockstep::launch(partitions, 1, threads)(d_value.get(), d_label.get(), out.get());
  const auto got = out.download();
  for (int t = 0; t < threads; ++t) {
    const int w = t / 32 * 32;
    int size = 0, rank = 0, sum = 0, leaders_below = 0, leaders = 0, bin_size = 0, bin_rank = 0;
    bool mixed_signs = false;
    for (int l = w; l < w + 32; ++l) {
      bool first = true;  // l is its label's lowest lane
      for (int k = w; k < l; ++k) first = first && label[k] != label[l];
      if (first) {
        ++leaders;
        bool mine_lower = false;
        for (int k = w; k < t; ++k) mine_lower = mine_lower || label[k] == label[t];
        // leaders below my group's leader
        int my_leader = t;
        for (int k = t; k >= w; --k)
          if (label[k] == label[t]) my_leader = k;
        if (l < my_leader) ++leaders_below;
        (void)mine_lower;
      }
      if (label[l] == label[t]) {
        ++size;
        sum += value[l];
        if (l < t) ++rank;
      }
      if ((value[l] > 0) == (value[t] > 0)) {
        ++bin_size;
        if (l < t) ++bin_rank;
      }
      mixed_signs = mixed_signs || (value[l] > 0) != (value[w] > 0);
    }
    const int* o = &got[t * partition_fields];
    SCOPED_TRACE("thread " + std::to_string(t));
    EXPECT_EQ(o[p_size], size);
    EXPECT_EQ(o[p_rank], rank);
    EXPECT_EQ(o[p_meta_rank], leaders_below);
    EXPECT_EQ(o[p_meta_size], leaders);
    EXPECT_EQ(o[p_sum], sum);
    EXPECT_EQ(o[p_bin_size], bin_size);
    EXPECT_EQ(o[p_bin_rank], bin_rank);
    EXPECT_EQ(o[p_bin_meta], mixed_signs ? (value[t] > 0 ? 12 : 2) : 1);
  }
}

__global__ void invoke_ones(int* count, int* broadcast) {
  cg::thread_block_tile<8> tile = cg::tiled_partition<8>(cg::this_thread_block());
  cg::invoke_one(tile, [&] { atomicAdd(count, 1); });
  broadcast[threadIdx.x] = cg::invoke_one_broadcast(tile, [] { return static_cast<int>(threadIdx.x) + 1000; });
}

TEST(CooperativeGroups, InvokeOne) {
  const int threads = 64;
  device_buffer<int> count(1, 0), broadcast(threads);
  lockstep::launch(invoke_ones, 1, threads)(count.get(), broadcast.get());
  EXPECT_EQ(count.download()[0], threads / 8);
  const auto got = broadcast.download();
  for (int t = 0; t < threads; ++t) {
    // One thread of the tile ran it; which one is the implementation's.
    EXPECT_GE(got[t], 1000 + t / 8 * 8);
    EXPECT_LT(got[t], 1000 + t / 8 * 8 + 8);
    EXPECT_EQ(got[t], got[t / 8 * 8]);
  }
}

}  // namespace

// The two sides of a binary partition reduce (in different numbers of
// shuffle rounds, their sizes differing), then meet at the warp's sync: one
// side reaches the sync while the other still shuffles (the CUDA samples'
// binaryPartitionCG), several times over.
__global__ void partition_sums_then_sync(const int* values, int* odd_sum, int* even_sum, int rounds) {
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
  for (int r = 0; r < rounds; ++r) {
    const int v = values[r * blockDim.x + threadIdx.x];
    cg::coalesced_group side = cg::binary_partition(warp, v & 1);
    const int total = cg::reduce(side, v, cg::plus<int>());
    if (side.thread_rank() == 0) atomicAdd(v & 1 ? odd_sum : even_sum, total);
    cg::sync(warp);
  }
}

TEST(CooperativeGroups, PartitionSidesReduceThenMeetAtTheWarpsSync) {
  const int threads = 96, rounds = 5;
  const auto values = random_vector<int>(threads * rounds, 0, 1000);
  device_buffer<int> d_values(values), odd(std::vector<int>{0}), even(std::vector<int>{0});
  lockstep::launch(partition_sums_then_sync, 1, threads)(d_values.get(), odd.get(), even.get(), rounds);
  long long odd_expected = 0, even_expected = 0;
  for (int v : values) (v & 1 ? odd_expected : even_expected) += v;
  EXPECT_EQ(odd.download()[0], odd_expected);
  EXPECT_EQ(even.download()[0], even_expected);
}
