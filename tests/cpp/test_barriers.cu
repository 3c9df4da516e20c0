// Block barriers: __syncthreads and its counting forms, early-exiting threads,
// multi-dimensional blocks, and barrier misuse reported as a deadlock.
#include "test_util.h"

using namespace testing_util;

namespace {

// Each round every thread reads its neighbours' previous values, which is only
// right if the barrier separates all writes of one round from the reads.
__global__ void neighbour_rounds(const int* in, int* out, int rounds) {
  extern __shared__ int cells[];
  const int t = threadIdx.x, n = blockDim.x;
  cells[t] = in[blockIdx.x * n + t];
  __syncthreads();
  for (int r = 0; r < rounds; ++r) {
    int left = cells[(t + n - 1) % n], right = cells[(t + 1) % n];
    __syncthreads();
    cells[t] = left + right;
    __syncthreads();
  }
  out[blockIdx.x * n + t] = cells[t];
}

__global__ void barrier_predicates(const int* flags, int* count, int* all, int* any) {
  const int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const int block_threads = blockDim.x * blockDim.y * blockDim.z;
  const int b = blockIdx.x;
  const int p = flags[b * block_threads + t];
  int c = __syncthreads_count(p);
  int a = __syncthreads_and(p);
  int o = __syncthreads_or(p);
  if (t == 0) {
    count[b] = c;
    all[b] = a;
    any[b] = o;
  }
}

// Threads past n return before the barrier; the rest must still get through
// it (exited threads do not count on Volta and later).
__global__ void early_exit_then_barrier(const float* in, float* out, int n) {
  __shared__ float tile[128];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  tile[threadIdx.x] = in[i];
  __syncthreads();
  const int partner = (threadIdx.x ^ 1) < blockDim.x && blockIdx.x * blockDim.x + (threadIdx.x ^ 1) < n ? threadIdx.x ^ 1 : threadIdx.x;
  out[i] = tile[partner];
}

__global__ void coordinates(unsigned* out) {
  const unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const unsigned i = b * blockDim.x * blockDim.y * blockDim.z + t;
  out[4 * i + 0] = threadIdx.x | threadIdx.y << 10 | threadIdx.z << 20;
  out[4 * i + 1] = blockIdx.x | blockIdx.y << 10 | blockIdx.z << 20;
  out[4 * i + 2] = blockDim.x | blockDim.y << 10 | blockDim.z << 20;
  out[4 * i + 3] = gridDim.x | gridDim.y << 10 | gridDim.z << 20;
}

TEST(Barriers, NeighbourRoundsNeedEveryBarrier) {
  const int blocks = 5, threads = 96, rounds = 6;
  auto v = random_vector<int>(blocks * threads, -100, 100);
  device_buffer<int> in(v), out(v.size());
  lockstep::launch(neighbour_rounds, blocks, threads, threads * sizeof(int))(in.get(), out.get(), rounds);
  auto got = out.download();
  for (int b = 0; b < blocks; ++b) {
    std::vector<long long> cells(v.begin() + b * threads, v.begin() + (b + 1) * threads), next(threads);
    for (int r = 0; r < rounds; ++r) {
      for (int t = 0; t < threads; ++t) next[t] = cells[(t + threads - 1) % threads] + cells[(t + 1) % threads];
      cells = next;
    }
    for (int t = 0; t < threads; ++t) ASSERT_EQ(got[b * threads + t], static_cast<int>(cells[t])) << "block " << b << " thread " << t;
  }
}

TEST(Barriers, CountAndOrPredicates) {
  const dim3 block(8, 4, 3);
  const int blocks = 6, per_block = 8 * 4 * 3;
  std::vector<int> flags(blocks * per_block, 0);
  // block 0: none set, block 1: all set, the rest random.
  auto noise = random_vector<int>(flags.size(), 0, 1);
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < per_block; ++t) flags[b * per_block + t] = b == 0 ? 0 : b == 1 ? 7 : noise[b * per_block + t];
  device_buffer<int> dflags(flags), count(blocks), all(blocks), any(blocks);
  lockstep::launch(barrier_predicates, blocks, block)(dflags.get(), count.get(), all.get(), any.get());
  auto c = count.download(), a = all.download(), o = any.download();
  for (int b = 0; b < blocks; ++b) {
    int expected = 0;
    for (int t = 0; t < per_block; ++t) expected += flags[b * per_block + t] != 0;
    EXPECT_EQ(c[b], expected) << "block " << b;
    EXPECT_EQ(a[b] != 0, expected == per_block) << "block " << b;
    EXPECT_EQ(o[b] != 0, expected > 0) << "block " << b;
  }
}

TEST(Barriers, ExitedThreadsDoNotBlockTheBarrier) {
  const int n = 300;  // the last block of 128 is partly empty
  auto v = random_vector<float>(n);
  device_buffer<float> in(v), out(n);
  lockstep::launch(early_exit_then_barrier, 3, 128)(in.get(), out.get(), n);
  auto got = out.download();
  for (int i = 0; i < n; ++i) {
    const int partner = (i ^ 1) < n ? (i ^ 1) : i;
    ASSERT_EQ(got[i], v[partner]) << i;
  }
}

TEST(Barriers, BuiltinsInThreeDimensions) {
  const dim3 grid(3, 2, 2), block(4, 3, 5);
  const unsigned total = 3 * 2 * 2 * 4 * 3 * 5;
  device_buffer<unsigned> out(4 * total);
  lockstep::launch(coordinates, grid, block)(out.get());
  auto got = out.download();
  unsigned i = 0;
  for (unsigned bz = 0; bz < 2; ++bz)
    for (unsigned by = 0; by < 2; ++by)
      for (unsigned bx = 0; bx < 3; ++bx)
        for (unsigned tz = 0; tz < 5; ++tz)
          for (unsigned ty = 0; ty < 3; ++ty)
            for (unsigned tx = 0; tx < 4; ++tx, ++i) {
              ASSERT_EQ(got[4 * i + 0], tx | ty << 10 | tz << 20);
              ASSERT_EQ(got[4 * i + 1], bx | by << 10 | bz << 20);
              ASSERT_EQ(got[4 * i + 2], 4u | 3u << 10 | 5u << 20);
              ASSERT_EQ(got[4 * i + 3], 3u | 2u << 10 | 2u << 20);
            }
}

#if !defined(__CUDACC__)
// On the GPU these hang or are undefined; the emulator reports them.

__global__ void barrier_and_shuffle_deadlock(int* out) {
  int v = threadIdx.x;
  if (threadIdx.x < 16) {
    v = __shfl_sync(0xffffffffu, v, 0);  // waits for lanes 16..31
  } else {
    __syncthreads();  // waits for lanes 0..15
  }
  out[threadIdx.x] = v;
}

TEST(Barriers, DeadlockIsReportedNotHung) {
  device_buffer<int> out(32);
  try {
    lockstep::launch(barrier_and_shuffle_deadlock, 1, 32)(out.get());
    FAIL() << "expected a kernel_error";
  } catch (const lockstep::kernel_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("deadlock"), std::string::npos) << what;
    EXPECT_NE(what.find("barrier_and_shuffle_deadlock"), std::string::npos) << what;
    EXPECT_NE(what.find("__shfl_sync"), std::string::npos) << what;
    EXPECT_NE(what.find("__syncthreads"), std::string::npos) << what;
  }
}

// A failed launch leaves the emulator usable.
TEST(Barriers, EmulatorRecoversAfterAFailedBlock) {
  device_buffer<int> out(32);
  EXPECT_THROW(lockstep::launch(barrier_and_shuffle_deadlock, 4, 32)(out.get()), lockstep::kernel_error);
  auto v = random_vector<int>(5 * 96, -100, 100);
  device_buffer<int> in(v), out2(v.size());
  lockstep::launch(neighbour_rounds, 5, 96, 96 * sizeof(int))(in.get(), out2.get(), 0);
  std::vector<int> got = out2.download();
  EXPECT_EQ(got, v);
}
#endif

}  // namespace
