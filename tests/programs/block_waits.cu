// Device code that real programs guard with __CUDA_ARCH__, and threads that
// wait for each other outside __syncthreads: libcu++'s cuda::barrier (the CUDA
// samples' simpleAWBarrier) and a spin on a shared flag with __nanosleep. On
// the emulator the first takes nvcc's device-pass branch (an H100's 900,
// src/emulator/compile_time/host_source/device_arch_conditionals.cpp), the others let the
// block's other threads run while one waits (src/emulator/execution/thread_yield.cpp).
// Built for the emulator through `lockstep nvcc` and for the GPU by nvcc; the
// program checks every result itself and exits non-zero on a mismatch.
#include <cstdio>
#include <cstdlib>
#include <cuda/barrier>
#include <vector>

#include <cuda_runtime.h>

#include "expect.h"

template <class T>
__device__ T scaled(T x) {
  return 2 * x;
}
#if __CUDA_ARCH__ >= 800
// A specialization only the device pass sees, as the samples' reduction has.
template <>
__device__ int scaled<int>(int x) {
  return 3 * x;
}
#endif

__global__ void arch_branches(int* out) {
#if __CUDA_ARCH__ >= 700
  out[threadIdx.x] = scaled(static_cast<int>(threadIdx.x));
#else
  out[threadIdx.x] = -1;
#endif
#ifdef __CUDA_ARCH__
  if (threadIdx.x == 0) out[blockDim.x] = __CUDA_ARCH__ >= 900 ? 1 : 0;
#endif
}

// Each thread publishes a value, arrives, does its own work, then waits: after
// the wait every thread's value is visible. Several phases of one barrier.
__global__ void split_arrive_wait(const int* in, int* out, int phases) {
  extern __shared__ int published[];
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ cuda::barrier<cuda::thread_scope_block> barrier;
  const unsigned t = threadIdx.x, n = blockDim.x;
  if (t == 0) init(&barrier, n);
  __syncthreads();
  int total = 0;
  for (int phase = 0; phase < phases; ++phase) {
    published[t] = in[blockIdx.x * n + t] * (phase + 1);
    cuda::barrier<cuda::thread_scope_block>::arrival_token token = barrier.arrive();
    total += phase;  // work between arrival and wait
    barrier.wait(std::move(token));
    total += published[(t + 1) % n];
    barrier.arrive_and_wait();  // nobody overwrites `published` before all have read it
  }
  out[blockIdx.x * n + t] = total;
}

// The block's first thread waits on a flag that its last thread sets.
__global__ void flag_wait(int* out) {
  __shared__ volatile int flag;
  __shared__ int message;
  if (threadIdx.x == 0) flag = 0;
  __syncthreads();
  if (threadIdx.x == blockDim.x - 1) {
    message = 1000 + blockIdx.x;
    __threadfence_block();
    flag = 1;
  }
  if (threadIdx.x == 0) {
    while (flag == 0) __nanosleep(100);
    __threadfence_block();
    out[blockIdx.x] = message;
  }
}

int main() {
  const int threads = 128, blocks = 3;
  int* d_out = nullptr;
  int* d_in = nullptr;
  cudaMalloc(&d_out, (blocks * threads + 1) * sizeof(int));
  cudaMalloc(&d_in, blocks * threads * sizeof(int));
  cudaMemset(d_out, 0xff, (blocks * threads + 1) * sizeof(int));  // poisoned: an unwritten element fails

  arch_branches<<<1, threads>>>(d_out);
  std::vector<int> out(blocks * threads + 1);
  EXPECT(cudaMemcpy(out.data(), d_out, (threads + 1) * sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess);
  for (int t = 0; t < threads; ++t) EXPECT(out[t] == 3 * t);
  EXPECT(out[threads] == 1);

  std::vector<int> in(blocks * threads);
  for (int& v : in) v = std::rand() % 1000;
  cudaMemcpy(d_in, in.data(), in.size() * sizeof(int), cudaMemcpyHostToDevice);
  const int phases = 3;
  split_arrive_wait<<<blocks, threads, threads * sizeof(int)>>>(d_in, d_out, phases);
  EXPECT(cudaDeviceSynchronize() == cudaSuccess);
  cudaMemcpy(out.data(), d_out, blocks * threads * sizeof(int), cudaMemcpyDeviceToHost);
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < threads; ++t) {
      int expected = 0;
      for (int phase = 0; phase < phases; ++phase) expected += phase + in[b * threads + (t + 1) % threads] * (phase + 1);
      EXPECT(out[b * threads + t] == expected);
    }

  cudaMemset(d_out, 0xff, blocks * sizeof(int));
  flag_wait<<<blocks, threads>>>(d_out);
  EXPECT(cudaDeviceSynchronize() == cudaSuccess);
  cudaMemcpy(out.data(), d_out, blocks * sizeof(int), cudaMemcpyDeviceToHost);
  for (int b = 0; b < blocks; ++b) EXPECT(out[b] == 1000 + b);

  cudaFree(d_out);
  cudaFree(d_in);
  if (failures) return 1;
  std::printf("block_waits: all results as expected\n");
  return 0;
}
