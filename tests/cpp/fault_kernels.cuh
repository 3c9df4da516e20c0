// Kernels that fault, one per kind, for the emulator's fault tests
// (test_faults.cu) and for the same kernels on a GPU (tests/gpu/fault_kinds.cu),
// which shows the CUDA error each one gives there. Single source: nvcc and the
// host compiler read the same text.
//
// Each *_line constant is the line of the statement that faults, which the
// emulator's message must name: keep each faulting statement on its own line
// (clang-format is off below for that).
#pragma once
#undef NDEBUG  // the assert below must stay in a release build
#include <cassert>

#include "lockstep/cuda.h"

namespace fault_kernels {
// clang-format off

// The thread that faults in the kernels that take a `who`: one thread of a
// block that is not the first, so that the message must name both right.
inline constexpr unsigned faulting_block = 1, faulting_thread = 5, threads = 32, blocks = 2;

// Every thread but `who` copies; `who` reads through `p` (null, wild...).
inline constexpr int read_through_line = __LINE__ + 4;
__global__ void read_through(const float* p, const float* in, float* out) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  const bool who = blockIdx.x == faulting_block && threadIdx.x == faulting_thread;
  out[i] = who ? p[threadIdx.x] : in[i];
}

// Thread `bad` of the grid reads through `p`; the kernel reads threadIdx.x
// and blockIdx.x only as their sum, so on the emulator runs of blocks along
// x are one call of its loops (loop_claim), and the fault must still name
// the block and thread.
inline constexpr int read_through_global_index_line = __LINE__ + 3;
__global__ void read_through_global_index(const float* p, const float* in, float* out, int bad) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = i == bad ? p[i - bad] : in[i];
}

// The same after a barrier: on the emulator a kernel the region-loop
// compiler splits, whose fault must still name the thread.
inline constexpr int read_after_barrier_line = __LINE__ + 7;
__global__ void read_after_barrier(const float* p, const float* in, float* out) {
  __shared__ float staged[threads];
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  staged[threadIdx.x] = in[i];
  __syncthreads();
  const bool who = blockIdx.x == faulting_block && threadIdx.x == faulting_thread;
  out[i] = who ? p[threadIdx.x] : staged[threads - 1 - threadIdx.x];
}

// Every thread reads through a null pointer the compiler can see: a
// dereference it must keep (and the emulator report), not undefined
// behaviour it may delete with the whole loop over the threads.
inline constexpr int null_literal_read_line = __LINE__ + 3;
__global__ void null_literal_read(float* out) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = *static_cast<volatile float*>(nullptr);
}

// Faults where a counter's value is faulting_thread: a second run of the
// block, which counts on, does not fault.
inline constexpr int fault_once_line = __LINE__ + 6;
__global__ void fault_once(int* counter, float* p, float* out) {
  __shared__ int seen[threads];
  seen[threadIdx.x] = atomicAdd(counter, 1);
  __syncthreads();
  out[threadIdx.x] = float(seen[threads - 1 - threadIdx.x]);
  if (seen[threadIdx.x] == int(faulting_thread)) p[threadIdx.x] = 1.0f;
}

inline constexpr int write_through_line = __LINE__ + 5;
__global__ void write_through(float* p, float* out) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = 1.0f;
  if (blockIdx.x == faulting_block && threadIdx.x == faulting_thread)
    p[threadIdx.x] = 2.0f;
}

// A store `far` elements past the end of `a` (of `n` elements).
inline constexpr int store_past_line = __LINE__ + 3;
__global__ void store_past(float* a, int n, long long far) {
  if (blockIdx.x == faulting_block && threadIdx.x == faulting_thread)
    a[n + far] = 1.0f;
  else if (threadIdx.x < n)
    a[threadIdx.x] = 3.0f;
}

inline constexpr int divide_line = __LINE__ + 3;
__global__ void divide(const int* numerator, const int* denominator, int* out) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = numerator[i] / denominator[i];
}

// Recursion the compiler cannot turn into a loop: a volatile frame read after the call.
__device__ int recurse(int depth) {
  volatile char frame[512];
  frame[depth & 511] = static_cast<char>(depth);
  if (depth == 0) return 0;
  return recurse(depth - 1) + frame[(depth * 7) & 511];
}

__global__ void deep_recursion_with_barrier(int* out, int depth) {
  __syncthreads();
  out[threadIdx.x] = threadIdx.x == faulting_thread ? recurse(depth) : 1;
}

__global__ void deep_recursion(int* out, int depth) { out[threadIdx.x] = threadIdx.x == faulting_thread ? recurse(depth) : 1; }

// 384 KiB of locals: more than the emulator's default 256 KiB stack.
__global__ void large_local_array(const int* in, int* out) {
  volatile int big[96 * 1024];
  __syncthreads();
  for (int k = 0; k < 96 * 1024; k += 1024)
    big[k + threadIdx.x] = in[threadIdx.x] + k;
  __syncthreads();
  out[threadIdx.x] = big[threadIdx.x];
}

// A float4 load from a float pointer one element into an array (x[1:] in Python).
inline constexpr int misaligned_line = __LINE__ + 4;
__global__ void misaligned_float4(const float* in, float4* out) {
  const float4* v = reinterpret_cast<const float4*>(in + 1);
  if (threadIdx.x < 4)
    out[threadIdx.x] = v[threadIdx.x];
}

// Reverses a block's values through dynamic shared memory: needs blockDim.x floats.
inline constexpr int extern_shared_line = __LINE__ + 5;
__global__ void reverse_in_shared(const float* in, float* out) {
  extern __shared__ float tile[];
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned t = threadIdx.x;
  tile[t] = in[i];
  __syncthreads();
  out[i] = tile[blockDim.x - 1 - t];
}

inline constexpr int trap_line = __LINE__ + 4;
__global__ void trap_in_one_thread(int* out) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
  if (blockIdx.x == faulting_block && threadIdx.x == faulting_thread)
    __trap();
}

inline constexpr int assert_line = __LINE__ + 3;
__global__ void assert_below(const int* in, int limit) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  assert(in[i] < limit);
}

// Waits for a flag nobody sets. `started` tells the host the loop is running.
inline constexpr int spin_line = __LINE__ + 4;
__global__ void spin_until_set(volatile int* flag, volatile int* started) {
  if (threadIdx.x == 0) {
    *started = 1;
    while (flag[0] == 0) {
    }
  }
}

// The kernel a test runs after each fault: the device must still work.
__global__ void add_one(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] + 1.0f;
}

// clang-format on
}  // namespace fault_kernels
