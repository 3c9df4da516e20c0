// Inline PTX reading special registers, as kernels in the wild read them
// (`asm("mov.u32 %0, %%laneid;" : "=r"(lane))`): each value is checked
// against what CUDA C++ computes for the same thread, in a kernel with a
// barrier between the reads and their use, and in one without.
#include <cstdint>
#include <vector>

#include "expect.h"

// Per thread: 0 when every register agreed with its CUDA C++ counterpart, else the number of the first that did not.
__global__ void read_registers(int* mismatch, unsigned* smids, unsigned long long* timers) {
  __shared__ unsigned lanes[256];
  unsigned lane, warp, sm, sms, tid_x, tid_y, ntid_x, ctaid_x, nctaid_x, lt, le, eq, gt, ge;
  unsigned long long timer, clock;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  asm volatile("mov.u32 %0, %%warpid;" : "=r"(warp));
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  asm("mov.u32 %0, %%nsmid;" : "=r"(sms));
  asm("mov.u32 %0, %%tid.x;" : "=r"(tid_x));
  asm("mov.u32 %0, %%tid.y;" : "=r"(tid_y));
  asm("mov.u32 %0, %%ntid.x;" : "=r"(ntid_x));
  asm("mov.u32 %0, %%ctaid.x;" : "=r"(ctaid_x));
  asm("mov.u32 %0, %%nctaid.x;" : "=r"(nctaid_x));
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(lt));
  asm("mov.u32 %0, %%lanemask_le;" : "=r"(le));
  asm("mov.u32 %0, %%lanemask_eq;" : "=r"(eq));
  asm("mov.u32 %0, %%lanemask_gt;" : "=r"(gt));
  asm("mov.u32 %0, %%lanemask_ge;" : "=r"(ge));
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(timer));
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(clock) : : "memory");
  const unsigned linear = threadIdx.x + blockDim.x * threadIdx.y;
  lanes[linear] = lane;
  __syncthreads();
  int bad = 0;
  if (lane != linear % 32)
    bad = 1;
  else if (lanes[linear ^ 1] != (linear ^ 1) % 32)
    bad = 2;
  else if (sm >= sms)
    bad = 3;
  else if (tid_x != threadIdx.x || tid_y != threadIdx.y || ntid_x != blockDim.x)
    bad = 4;
  else if (ctaid_x != blockIdx.x || nctaid_x != gridDim.x)
    bad = 5;
  else if (eq != 1u << lane || lt != eq - 1u || le != (lt | eq) || gt != ~le || ge != ~lt)
    bad = 6;
  else if (warp >= 64)
    bad = 7;
  else if (timer == 0 || clock == 0)
    bad = 8;
  const unsigned block_threads = blockDim.x * blockDim.y;
  mismatch[blockIdx.x * block_threads + linear] = bad;
  if (linear == 0) {
    smids[blockIdx.x] = sm;
    timers[blockIdx.x] = timer;
  }
}

// The same registers in a kernel without barriers (which the emulator may run as one loop over the threads).
__global__ void lane_of_each_thread(unsigned* lanes, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  if (i < n) lanes[i] = lane;
}

int main() {
  constexpr int blocks = 3;
  const dim3 block(16, 8);
  const int threads = blocks * 128;
  int* mismatch;
  unsigned* smids;
  unsigned long long* timers;
  EXPECT_ERROR(cudaMalloc(&mismatch, threads * sizeof(int)), cudaSuccess);
  EXPECT_ERROR(cudaMalloc(&smids, blocks * sizeof(unsigned)), cudaSuccess);
  EXPECT_ERROR(cudaMalloc(&timers, blocks * sizeof(unsigned long long)), cudaSuccess);
  EXPECT_ERROR(cudaMemset(mismatch, 0xff, threads * sizeof(int)), cudaSuccess);  // poisoned: an unwritten entry fails
  read_registers<<<blocks, block>>>(mismatch, smids, timers);
  EXPECT_ERROR(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<int> host(threads);
  EXPECT_ERROR(cudaMemcpy(host.data(), mismatch, threads * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int t = 0; t < threads; ++t)
    if (host[t] != 0) {
      std::fprintf(stderr, "thread %d: register check %d failed\n", t, host[t]);
      ++failures;
      break;
    }
  int sm_count = 0;
  EXPECT_ERROR(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  std::vector<unsigned> host_smids(blocks);
  EXPECT_ERROR(cudaMemcpy(host_smids.data(), smids, blocks * sizeof(unsigned), cudaMemcpyDeviceToHost), cudaSuccess);
  for (unsigned s : host_smids) EXPECT(s < static_cast<unsigned>(sm_count));

  const int n = 1000;
  unsigned* lanes;
  EXPECT_ERROR(cudaMalloc(&lanes, n * sizeof(unsigned)), cudaSuccess);
  EXPECT_ERROR(cudaMemset(lanes, 0xff, n * sizeof(unsigned)), cudaSuccess);
  lane_of_each_thread<<<(n + 95) / 96, 96>>>(lanes, n);
  std::vector<unsigned> host_lanes(n);
  EXPECT_ERROR(cudaMemcpy(host_lanes.data(), lanes, n * sizeof(unsigned), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int i = 0; i < n; ++i)
    if (host_lanes[i] != static_cast<unsigned>(i % 96 % 32)) {
      std::fprintf(stderr, "lane of thread %d: %u\n", i, host_lanes[i]);
      ++failures;
      break;
    }
  cudaFree(mismatch);
  cudaFree(smids);
  cudaFree(timers);
  cudaFree(lanes);
  std::printf("special_registers: %d failures\n", failures);
  return failures ? 1 : 0;
}
