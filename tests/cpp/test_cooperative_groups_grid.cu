// grid_group under a cooperative launch: ranks and extents, grid.sync()
// across many blocks (a two-phase sum whose second phase reads every block's
// first), the too-large cooperative launch, and (emulator only) grid.sync()
// without a cooperative launch.
#if defined(__CUDACC__)
#include <cooperative_groups.h>
#else
#include "lockstep/emu/cooperative_groups.h"
#endif
#include <string>

#include "test_util.h"
#if !defined(__CUDACC__)
#include "lockstep/emu/options.h"
#endif

namespace cg = cooperative_groups;
using namespace testing_util;

namespace {

enum grid_field { g_rank, g_size, g_block_rank, g_blocks, g_block_x, g_block_y, g_dim_x, g_dim_y, g_valid, grid_fields };

__global__ void grid_ranks(int* out) {
  cg::grid_group grid = cg::this_grid();
  int* o = out + grid.thread_rank() * grid_fields;
  o[g_rank] = static_cast<int>(grid.thread_rank());
  o[g_size] = static_cast<int>(grid.num_threads());
  o[g_block_rank] = static_cast<int>(grid.block_rank());
  o[g_blocks] = static_cast<int>(grid.num_blocks());
  o[g_block_x] = grid.block_index().x;
  o[g_block_y] = grid.block_index().y;
  o[g_dim_x] = grid.dim_blocks().x;
  o[g_dim_y] = grid.dim_blocks().y;
  o[g_valid] = grid.is_valid();
}

TEST(CooperativeGroupsGrid, RanksAndExtents) {
  const dim3 grid(4, 3), block(16, 2);
  const int threads = 32, blocks = 12;
  device_buffer<int> out(blocks * threads * grid_fields);
  lockstep::launch(grid_ranks, lockstep::launch_config{grid, block, 0, nullptr, true})(out.get());
  const auto got = out.download();
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < threads; ++t) {
      const int rank = b * threads + t;
      const int* o = &got[rank * grid_fields];
      SCOPED_TRACE("block " + std::to_string(b) + ", thread " + std::to_string(t));
      EXPECT_EQ(o[g_rank], rank);
      EXPECT_EQ(o[g_size], blocks * threads);
      EXPECT_EQ(o[g_block_rank], b);
      EXPECT_EQ(o[g_blocks], blocks);
      EXPECT_EQ(o[g_block_x], b % 4);
      EXPECT_EQ(o[g_block_y], b / 4);
      EXPECT_EQ(o[g_dim_x], 4);
      EXPECT_EQ(o[g_dim_y], 3);
      EXPECT_EQ(o[g_valid], 1);
    }
}

// Phase 1: each block sums its slice into partial[block]. grid.sync().
// Phase 2: every block sums all partials (each block reads every other
// block's phase-1 result) and writes the total, then adds a second round
// that needs a second grid.sync() (the partials are overwritten).
__global__ void two_phase_sum(const int* in, long long* partial, long long* total, long long* second, int per_block) {
  __shared__ long long block_sum;
  cg::grid_group grid = cg::this_grid();
  cg::thread_block block = cg::this_thread_block();
  if (block.thread_rank() == 0) block_sum = 0;
  block.sync();
  long long mine = 0;
  for (int i = block.thread_rank(); i < per_block; i += block.size()) mine += in[grid.block_rank() * per_block + i];
  atomicAdd(reinterpret_cast<unsigned long long*>(&block_sum), static_cast<unsigned long long>(mine));
  block.sync();
  if (block.thread_rank() == 0) partial[grid.block_rank()] = block_sum;
  grid.sync();
  long long sum = 0;
  for (unsigned long long b = 0; b < grid.num_blocks(); ++b) sum += partial[b];
  if (block.thread_rank() == 0) total[grid.block_rank()] = sum;
  grid.sync();  // every block has read the partials before they change
  if (block.thread_rank() == 0) partial[grid.block_rank()] = static_cast<long long>(grid.block_rank());
  grid.sync();
  long long ranks = 0;
  for (unsigned long long b = 0; b < grid.num_blocks(); ++b) ranks += partial[b];
  if (block.thread_rank() == block.size() - 1) second[grid.block_rank()] = ranks;
}

void run_two_phase(unsigned blocks, unsigned threads, int per_block) {
  const auto in = random_vector<int>(std::size_t(blocks) * per_block, -1000000, 1000000);
  long long want = 0;
  for (int v : in) want += v;
  device_buffer<int> d_in(in);
  device_buffer<long long> partial(blocks), total(blocks), second(blocks);
  lockstep::launch_cooperative(two_phase_sum, blocks, threads)(d_in.get(), partial.get(), total.get(), second.get(), per_block);
  const auto got = total.download();
  const auto got_second = second.download();
  const long long rank_sum = (long long)blocks * (blocks - 1) / 2;
  for (unsigned b = 0; b < blocks; ++b) {
    ASSERT_EQ(got[b], want) << "block " << b << " of " << blocks;
    ASSERT_EQ(got_second[b], rank_sum) << "block " << b << " of " << blocks;
  }
}

TEST(CooperativeGroupsGrid, TwoPhaseSumAcrossManyBlocks) { run_two_phase(264, 128, 1000); }

// The largest grid of 512-thread blocks an H100 holds at once: 132 SMs x 4.
TEST(CooperativeGroupsGrid, TwoPhaseSumOnAFullH100Grid) { run_two_phase(132 * 4, 512, 512); }

__global__ void sync_only() { cg::this_grid().sync(); }

TEST(CooperativeGroupsGrid, TooLargeCooperativeLaunchFails) {
  // 2048 threads per SM: 5 blocks of 512 threads per SM do not fit.
  try {
    lockstep::launch_cooperative(sync_only, 132 * 4 + 1, 512)();
    FAIL() << "a cooperative launch of more blocks than can be resident succeeded";
  } catch (const lockstep::launch_error& e) {
    EXPECT_EQ(static_cast<int>(e.code()), 720) << e.what();  // cudaErrorCooperativeLaunchTooLarge
  }
  cudaGetLastError();
}

// Shared memory limits residency too: 228 KiB per SM, 1 KiB of it reserved
// per block, holds 5 blocks of 40 KiB.
TEST(CooperativeGroupsGrid, TooLargeForSharedMemoryFails) {
  try {
    lockstep::launch_cooperative(sync_only, 132 * 5 + 1, 32, 40 * 1024)();
    FAIL() << "a cooperative launch of more blocks than shared memory holds succeeded";
  } catch (const lockstep::launch_error& e) {
    EXPECT_EQ(static_cast<int>(e.code()), 720) << e.what();
  }
  cudaGetLastError();
}

TEST(CooperativeGroupsGrid, ResidentBlocksPerSmOnH100) {
  const auto resident_blocks_per_sm = [](unsigned threads, std::size_t shared) {
    return lockstep::max_blocks_per_sm(lockstep::h100_sm_limits, threads, lockstep::emulated_registers_per_thread, shared);
  };
  EXPECT_EQ(resident_blocks_per_sm(32, 0), 32u);   // the block limit
  EXPECT_EQ(resident_blocks_per_sm(512, 0), 4u);   // the thread limit
  EXPECT_EQ(resident_blocks_per_sm(1000, 0), 2u);  // whole warps: 1024 threads
  EXPECT_EQ(resident_blocks_per_sm(33, 0), 32u);   // 64 threads a block
  EXPECT_EQ(resident_blocks_per_sm(32, 40 * 1024), 5u);
  EXPECT_EQ(resident_blocks_per_sm(32, 227 * 1024), 1u);
}

#if !defined(__CUDACC__)
TEST(CooperativeGroupsGrid, TooLargeMessageNamesTheLimit) {
  try {
    lockstep::launch_cooperative(sync_only, 132 * 32 + 1, 32)();
    FAIL() << "a cooperative launch of more blocks than can be resident succeeded";
  } catch (const lockstep::launch_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("at most 4224 blocks"), std::string::npos) << what;
    EXPECT_NE(what.find("sync_only"), std::string::npos) << what;
  }
}

// On a GPU grid.sync() outside a cooperative launch is undefined (it may
// hang); the emulator ends the launch and says what to do.
TEST(CooperativeGroupsGrid, GridSyncWithoutCooperativeLaunchIsAnError) {
  try {
    lockstep::launch(sync_only, 4, 64)();
    FAIL() << "grid.sync() ran in a launch that was not cooperative";
  } catch (const lockstep::kernel_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("sync_only"), std::string::npos) << what;
    EXPECT_NE(what.find("thread ("), std::string::npos) << what;
    EXPECT_NE(what.find("cudaLaunchCooperativeKernel"), std::string::npos) << what;
  }
  cudaGetLastError();
}

__global__ void grid_sync_in_some_blocks() {
  if (blockIdx.x != 2) cg::this_grid().sync();
}

// A block that ends without reaching grid.sync() would hang a GPU.
TEST(CooperativeGroupsGrid, BlockSkippingGridSyncIsAnError) {
  try {
    lockstep::launch_cooperative(grid_sync_in_some_blocks, 6, 32)();
    FAIL() << "grid.sync() released although a block never reached it";
  } catch (const lockstep::kernel_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("block (2, 0, 0) has ended without reaching it"), std::string::npos) << what;
  }
  cudaGetLastError();
}

// A failure in one block ends the launch while the others wait at grid.sync().
__global__ void trap_while_others_wait() {
  if (blockIdx.x == 3 && threadIdx.x == 5) __trap();
  cg::this_grid().sync();
}

TEST(CooperativeGroupsGrid, FailureInOneBlockEndsTheWaitingOnes) {
  try {
    lockstep::launch_cooperative(trap_while_others_wait, 8, 64)();
    FAIL() << "a launch with a trapping block succeeded";
  } catch (const lockstep::kernel_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("__trap()"), std::string::npos) << what;
    EXPECT_NE(what.find("block (3, 0, 0), thread (5, 0, 0)"), std::string::npos) << what;
  }
  cudaGetLastError();
}

__global__ void spin_while_others_wait(int* flag) {
  if (blockIdx.x == 0)
    while (*static_cast<volatile int*>(flag) == 0) {
    }
  cg::this_grid().sync();
}

// The time limit stops a spinning block and the blocks waiting for it.
TEST(CooperativeGroupsGrid, TimeLimitStopsBlocksWaitingAtGridSync) {
  const lockstep::emu::options saved = lockstep::emu::get_options();
  lockstep::emu::options limited = saved;
  limited.timeout_seconds = 0.3;
  lockstep::emu::set_options(limited);
  device_buffer<int> flag(1, 0);
  try {
    lockstep::launch_cooperative(spin_while_others_wait, 6, 32)(flag.get());
    ADD_FAILURE() << "a spinning block finished";
  } catch (const lockstep::kernel_error& e) {
    EXPECT_EQ(e.code(), cudaErrorLaunchTimeout) << e.what();
  }
  lockstep::emu::set_options(saved);
  cudaGetLastError();
}
#endif

}  // namespace
