// Tests assert the line numbers of statements in this file, so it keeps its layout.
// clang-format off
// Planted bugs: small kernels written the way CUDA code is written, each with
// one classic bug, beside its correct twin (the same kernel with the bug
// fixed, or the same kernel used correctly).
//
// The line a checker should name carries `// BUG(case)`; a race's other
// access carries `// PEER(case)`. The tests find the expected lines by those
// markers, so editing this file cannot make them check the wrong line.
//
// Single source: test_planted.cu runs every case in the emulator's check
// mode; planted_main.cu runs one case by name, built for the emulator
// (lockstep-check) or by nvcc for compute-sanitizer on a GPU.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "lockstep/cuda.h"
#ifndef __CUDACC__
#include "lockstep/emu/check.h"  // poison_region
#endif

namespace planted {

inline constexpr const char* source_file = __FILE__;
inline constexpr int threads = 64;  // per block, everywhere below

// --- memcheck ------------------------------------------------------------

__global__ void scale_off_by_one(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) out[i] = 2.0f * in[i];  // BUG(off_by_one_guard)
}
__global__ void scale(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * in[i];
}

// Each thread takes its right neighbour's element from a shared tile.
__global__ void shift_left_past_tile(const float* in, float* out) {
  __shared__ float tile[threads];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = in[i];
  __syncthreads();
  out[i] = tile[threadIdx.x + 1];  // BUG(shared_out_of_bounds)
}
__global__ void shift_left(const float* in, float* out) {
  __shared__ float tile[threads];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = in[i];
  __syncthreads();
  out[i] = threadIdx.x + 1 < threads ? tile[threadIdx.x + 1] : 0.0f;
}

// Stages two values per thread in dynamic shared memory of 2 * blockDim.x
// floats; the buggy launch passes only blockDim.x floats.
__global__ void stage_pairs(const float* in, float* out) {
  extern __shared__ float pairs[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  pairs[2 * threadIdx.x] = in[i];  // BUG(dynamic_shared_out_of_bounds)
  pairs[2 * threadIdx.x + 1] = -in[i];
  __syncthreads();
  out[i] = pairs[2 * threadIdx.x] + pairs[2 * (blockDim.x - 1 - threadIdx.x) + 1];
}

// The host frees `in` before the launch in the buggy case.
__global__ void copy(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];  // BUG(use_after_free)
}

// Reads 4-byte words from a byte buffer; the buggy call starts one byte in.
__global__ void read_words(const unsigned char* bytes, unsigned* out, int offset) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = *reinterpret_cast<const unsigned*>(bytes + 4 * i + offset);  // BUG(misaligned_access)
}

// Vector loads and stores must be aligned to the vector's size on the GPU;
// x86 takes them at any address. The buggy calls start `offset` elements in.
// A float4 whose components are used: GCC loads it as four aligned floats.
__global__ void sum_float4(const float* in, float* out, int offset) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float4 v = reinterpret_cast<const float4*>(in + offset)[i];  // BUG(misaligned_float4)
  out[i] = v.x + v.y + v.z + v.w;
}
// A float2 copied whole: one 8-byte access at a 4-byte aligned address.
__global__ void copy_float2(const float* in, float* out, int offset) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  reinterpret_cast<float2*>(out)[i] = reinterpret_cast<const float2*>(in + offset)[i];  // BUG(misaligned_float2)
}
// An int4 store at an 8-byte aligned address.
__global__ void store_int4(int* out, int offset) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  reinterpret_cast<int4*>(out + offset)[i] = make_int4(i, i + 1, i + 2, i + 3);  // BUG(misaligned_int4)
}
// A double2 load at an 8-byte aligned address.
__global__ void sum_double2(const double* in, double* out, int offset) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  double2 v = reinterpret_cast<const double2*>(in + offset)[i];  // BUG(misaligned_double2)
  out[i] = v.x - v.y;
}

// Forward differences; the buggy one reads one element past the end of `in`.
__global__ void difference_past_end(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i + 1] - in[i];  // BUG(overflow_into_next_region)
}
__global__ void difference(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i + 1 < n) out[i] = in[i + 1] - in[i];
}

// --- racecheck -----------------------------------------------------------

// Tiled matrix product (the lecture's), tile x tile blocks.
constexpr int tile = 8;
__global__ void matmul_no_barrier_before_read(const float* a, const float* b, float* c, int n) {
  __shared__ float a_tile[tile][tile];
  __shared__ float b_tile[tile][tile];
  int tx = threadIdx.x, ty = threadIdx.y, row = blockIdx.y * tile + ty, col = blockIdx.x * tile + tx;
  float acc = 0.0f;
  for (int t0 = 0; t0 < n; t0 += tile) {
    a_tile[ty][tx] = a[row * n + t0 + tx];  // PEER(missing_barrier_before_read)
    b_tile[ty][tx] = b[(t0 + ty) * n + col];  // PEER(missing_barrier_before_read)
    for (int i = 0; i < tile; ++i) acc += a_tile[ty][i] * b_tile[i][tx];  // BUG(missing_barrier_before_read)
    __syncthreads();
  }
  c[row * n + col] = acc;
}
__global__ void matmul_no_barrier_after_read(const float* a, const float* b, float* c, int n) {
  __shared__ float a_tile[tile][tile];
  __shared__ float b_tile[tile][tile];
  int tx = threadIdx.x, ty = threadIdx.y, row = blockIdx.y * tile + ty, col = blockIdx.x * tile + tx;
  float acc = 0.0f;
  for (int t0 = 0; t0 < n; t0 += tile) {
    a_tile[ty][tx] = a[row * n + t0 + tx];  // PEER(missing_barrier_after_read)
    b_tile[ty][tx] = b[(t0 + ty) * n + col];  // PEER(missing_barrier_after_read)
    __syncthreads();
    for (int i = 0; i < tile; ++i) acc += a_tile[ty][i] * b_tile[i][tx];  // BUG(missing_barrier_after_read)
  }
  c[row * n + col] = acc;
}
__global__ void matmul_tiled(const float* a, const float* b, float* c, int n) {
  __shared__ float a_tile[tile][tile];
  __shared__ float b_tile[tile][tile];
  int tx = threadIdx.x, ty = threadIdx.y, row = blockIdx.y * tile + ty, col = blockIdx.x * tile + tx;
  float acc = 0.0f;
  for (int t0 = 0; t0 < n; t0 += tile) {
    a_tile[ty][tx] = a[row * n + t0 + tx];
    b_tile[ty][tx] = b[(t0 + ty) * n + col];
    __syncthreads();
    for (int i = 0; i < tile; ++i) acc += a_tile[ty][i] * b_tile[i][tx];
    __syncthreads();
  }
  c[row * n + col] = acc;
}

// Every block writes the first blockDim.x outputs: the index forgets blockIdx.
__global__ void scale_forgot_block_offset(const float* in, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[threadIdx.x] = 2.0f * in[i];  // BUG(global_race_between_blocks)
}
__global__ void scale_all(const float* in, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = 2.0f * in[i];
}

// A per-block histogram in shared memory; the buggy one reads it back
// before every thread has added its element.
constexpr int bins = 8;
__global__ void histogram_no_barrier(const int* in, int* out) {
  __shared__ int hist[bins];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x < bins) hist[threadIdx.x] = 0;
  __syncthreads();
  atomicAdd(&hist[in[i] % bins], 1);  // PEER(shared_read_racing_atomics)
  if (threadIdx.x < bins) out[blockIdx.x * bins + threadIdx.x] = hist[threadIdx.x];  // BUG(shared_read_racing_atomics)
}
__global__ void histogram(const int* in, int* out) {
  __shared__ int hist[bins];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x < bins) hist[threadIdx.x] = 0;
  __syncthreads();
  atomicAdd(&hist[in[i] % bins], 1);
  __syncthreads();
  if (threadIdx.x < bins) out[blockIdx.x * bins + threadIdx.x] = hist[threadIdx.x];
}

// Every thread adds its element to a grand total. The buggy one has each
// block's thread 0 read the total back while other threads still add to it;
// the correct one lets the thread that finishes last read it (each thread
// fences its addition, then takes a ticket).
__global__ void total_read_while_adding(const float* in, float* total, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(total, in[i]);  // PEER(global_read_racing_atomics)
  if (threadIdx.x == 0) out[blockIdx.x] = *total;  // BUG(global_read_racing_atomics)
}
__global__ void total_read_by_last(const float* in, float* total, unsigned* finished, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(total, in[i]);
  __threadfence();
  if (atomicAdd(finished, 1u) == gridDim.x * blockDim.x - 1) out[0] = *total;
}

// One thread per block adds the block's value to a running total and count;
// the correct one holds a spin lock around the update (acquire: atomicCAS,
// then a fence; release: a fence, then atomicExch).
__global__ void add_to_total_unlocked(const float* in, float* total) {
  if (threadIdx.x != 0) return;
  total[0] += in[blockIdx.x];  // BUG(unlocked_critical_section)
  total[1] += 1.0f;
}
__global__ void add_to_total_locked(const float* in, float* total, int* lock) {
  if (threadIdx.x != 0) return;
  while (atomicCAS(lock, 0, 1) != 0) {
  }
  __threadfence();
  total[0] += in[blockIdx.x];
  total[1] += 1.0f;
  __threadfence();
  atomicExch(lock, 0);
}

// --- synccheck -----------------------------------------------------------

// The first 16 threads also stage a second value, and wait for it inside the branch.
__global__ void stage_with_barrier_in_branch(const float* in, float* out) {
  __shared__ float staged[2 * threads];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  staged[threadIdx.x] = in[i];
  if (threadIdx.x < 16) {
    staged[threads + threadIdx.x] = 2.0f * in[i];
    __syncthreads();  // BUG(barrier_in_branch)
  }
  __syncthreads();
  out[i] = staged[(threadIdx.x + 1) % threads] + (threadIdx.x < 16 ? staged[threads + threadIdx.x] : 0.0f);
}
__global__ void stage_then_barrier(const float* in, float* out) {
  __shared__ float staged[2 * threads];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  staged[threadIdx.x] = in[i];
  if (threadIdx.x < 16) staged[threads + threadIdx.x] = 2.0f * in[i];
  __syncthreads();
  out[i] = staged[(threadIdx.x + 1) % threads] + (threadIdx.x < 16 ? staged[threads + threadIdx.x] : 0.0f);
}

// Averages each element with its right neighbour; threads past n leave early.
__global__ void smooth_early_exit(const float* in, float* out, int n) {
  __shared__ float s[threads];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  s[threadIdx.x] = in[i];
  __syncthreads();  // BUG(exit_before_barrier)
  float right = threadIdx.x + 1 < blockDim.x && i + 1 < n ? s[threadIdx.x + 1] : 0.0f;
  out[i] = 0.5f * (s[threadIdx.x] + right);
}
__global__ void smooth(const float* in, float* out, int n) {
  __shared__ float s[threads];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) s[threadIdx.x] = in[i];
  __syncthreads();
  float right = threadIdx.x + 1 < blockDim.x && i + 1 < n ? s[threadIdx.x + 1] : 0.0f;
  if (i < n) out[i] = 0.5f * (s[threadIdx.x] + right);
}

// Sums pairs within the first half-warp with a shuffle.
__global__ void half_warp_pairs_full_mask(const int* in, int* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x % 32;
  int v = in[i];
  if (lane < 16) v += __shfl_down_sync(0xffffffffu, v, 8);  // BUG(wrong_shuffle_mask)
  out[i] = v;
}
__global__ void half_warp_pairs(const int* in, int* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x % 32;
  int v = in[i];
  if (lane < 16) v += __shfl_down_sync(0x0000ffffu, v, 8, 16);
  out[i] = v;
}

// Each half-warp exchanges values within itself (width 16), on its own
// branch with its own mask; the buggy one copied the first half's mask.
__global__ void half_warp_exchange_copied_mask(const int* in, int* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x % 32;
  int v = in[i];
  if (lane < 16) v += __shfl_xor_sync(0x0000ffffu, v, 1, 16);
  else v -= __shfl_xor_sync(0x0000ffffu, v, 2, 16);  // BUG(half_warp_copied_mask)
  out[i] = v;
}
__global__ void half_warp_exchange(const int* in, int* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x % 32;
  int v = in[i];
  if (lane < 16) v += __shfl_xor_sync(0x0000ffffu, v, 1, 16);
  else v -= __shfl_xor_sync(0xffff0000u, v, 2, 16);
  out[i] = v;
}

// --- initcheck -----------------------------------------------------------

// Reverses each block's elements through shared memory; the buggy one loads only half.
__global__ void reverse_half_loaded(const float* in, float* out) {
  __shared__ float s[threads];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x < threads / 2) s[threadIdx.x] = in[i];
  __syncthreads();
  out[i] = s[threads - 1 - threadIdx.x];  // BUG(uninitialised_shared_read)
}
__global__ void reverse(const float* in, float* out) {
  __shared__ float s[threads];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = in[i];
  __syncthreads();
  out[i] = s[threads - 1 - threadIdx.x];
}

// Adds into `sum`, which the buggy host code never clears.
__global__ void accumulate(const float* in, float* sum, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) sum[i] += in[i];  // BUG(uninitialised_global_read)
}

// --- host side: each case with the bug or fixed --------------------------

inline void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "planted: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(2);
  }
}

template <class T>
struct device_array {
  T* ptr = nullptr;
  std::size_t n;
  explicit device_array(std::size_t count, bool cleared = true) : n(count) {
    check_cuda(cudaMalloc(&ptr, n * sizeof(T)), "cudaMalloc");
    if (cleared) check_cuda(cudaMemset(ptr, 0, n * sizeof(T)), "cudaMemset");
  }
  explicit device_array(const std::vector<T>& host) : device_array(host.size(), false) {
    check_cuda(cudaMemcpy(ptr, host.data(), n * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  ~device_array() { cudaFree(ptr); }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;
};

template <class T = float>
std::vector<T> ramp(std::size_t n) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<T>(i % 97);
  return v;
}

inline void finish(const char* what) {
  check_cuda(cudaDeviceSynchronize(), what);
}

inline void run_off_by_one_guard(bool bug) {
  const int n = 100;
  device_array<float> in(ramp(n)), out(n);
  if (bug) lockstep::launch(scale_off_by_one, 2, threads)(in.ptr, out.ptr, n);
  else lockstep::launch(scale, 2, threads)(in.ptr, out.ptr, n);
  finish("scale");
}

inline void run_shared_out_of_bounds(bool bug) {
  device_array<float> in(ramp(2 * threads)), out(2 * threads);
  if (bug) lockstep::launch(shift_left_past_tile, 2, threads)(in.ptr, out.ptr);
  else lockstep::launch(shift_left, 2, threads)(in.ptr, out.ptr);
  finish("shift_left");
}

inline void run_dynamic_shared_out_of_bounds(bool bug) {
  device_array<float> in(ramp(2 * threads)), out(2 * threads);
  const std::size_t floats = bug ? threads : 2 * threads;
  lockstep::launch(stage_pairs, 2, threads, floats * sizeof(float))(in.ptr, out.ptr);
  finish("stage_pairs");
}

inline void run_use_after_free(bool bug) {
  const int n = 100;
  const std::vector<float> host = ramp(n);
  float* in = nullptr;
  check_cuda(cudaMalloc(&in, n * sizeof(float)), "cudaMalloc");
  check_cuda(cudaMemcpy(in, host.data(), n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy");
  device_array<float> out(n);
  if (bug) cudaFree(in);  // too early: the kernel still reads it
  lockstep::launch(copy, 2, threads)(in, out.ptr, n);
  finish("copy");
  if (!bug) cudaFree(in);
}

inline void run_misaligned_access(bool bug) {
  device_array<unsigned char> bytes(ramp<unsigned char>(4 * 2 * threads + 4));
  device_array<unsigned> out(2 * threads);
  lockstep::launch(read_words, 2, threads)(bytes.ptr, out.ptr, bug ? 1 : 0);
  finish("read_words");
}

// `in` and `out` carved out of one allocation, each padded to 128 floats; the
// emulator is told the padding is no array's, so running off `in` is seen.
inline void run_overflow_into_next_region(bool bug) {
  const int n = 100, stride = 128;
  float* both = nullptr;
  check_cuda(cudaMalloc(&both, 2 * stride * sizeof(float)), "cudaMalloc");
  check_cuda(cudaMemset(both, 0, 2 * stride * sizeof(float)), "cudaMemset");
  float *in = both, *out = both + stride;
#ifndef __CUDACC__
  lockstep::emu::poison_region(in + n, (stride - n) * sizeof(float));
  lockstep::emu::poison_region(out + n, (stride - n) * sizeof(float));
#endif
  if (bug) lockstep::launch(difference_past_end, 2, threads)(in, out, n);
  else lockstep::launch(difference, 2, threads)(in, out, n);
  finish("difference");
  cudaFree(both);
}

// Each vector case: 2 blocks, one vector per thread, the buggy one `offset` elements in.
inline void run_misaligned_float4(bool bug) {
  device_array<float> in(ramp(4 * 2 * threads + 4)), out(2 * threads);
  lockstep::launch(sum_float4, 2, threads)(in.ptr, out.ptr, bug ? 2 : 0);
  finish("sum_float4");
}
inline void run_misaligned_float2(bool bug) {
  device_array<float> in(ramp(2 * 2 * threads + 2)), out(2 * 2 * threads);
  lockstep::launch(copy_float2, 2, threads)(in.ptr, out.ptr, bug ? 1 : 0);
  finish("copy_float2");
}
inline void run_misaligned_int4(bool bug) {
  device_array<int> out(4 * 2 * threads + 4);
  lockstep::launch(store_int4, 2, threads)(out.ptr, bug ? 2 : 0);
  finish("store_int4");
}
inline void run_misaligned_double2(bool bug) {
  device_array<double> in(ramp<double>(2 * 2 * threads + 2)), out(2 * threads);
  lockstep::launch(sum_double2, 2, threads)(in.ptr, out.ptr, bug ? 1 : 0);
  finish("sum_double2");
}

inline void run_matmul(void (*kernel)(const float*, const float*, float*, int)) {
  const int n = 32;
  device_array<float> a(ramp(n * n)), b(ramp(n * n)), c(n * n);
  lockstep::launch(kernel, dim3(n / tile, n / tile), dim3(tile, tile))(a.ptr, b.ptr, c.ptr, n);
  finish("matmul");
}
inline void run_missing_barrier_before_read(bool bug) { run_matmul(bug ? matmul_no_barrier_before_read : matmul_tiled); }
inline void run_missing_barrier_after_read(bool bug) { run_matmul(bug ? matmul_no_barrier_after_read : matmul_tiled); }

inline void run_global_race_between_blocks(bool bug) {
  device_array<float> in(ramp(4 * threads)), out(4 * threads);
  if (bug) lockstep::launch(scale_forgot_block_offset, 4, threads)(in.ptr, out.ptr);
  else lockstep::launch(scale_all, 4, threads)(in.ptr, out.ptr);
  finish("scale_all");
}

inline void run_shared_read_racing_atomics(bool bug) {
  device_array<int> in(ramp<int>(2 * threads)), out(2 * bins);
  if (bug) lockstep::launch(histogram_no_barrier, 2, threads)(in.ptr, out.ptr);
  else lockstep::launch(histogram, 2, threads)(in.ptr, out.ptr);
  finish("histogram");
}

inline void run_global_read_racing_atomics(bool bug) {
  const int blocks = 4;
  device_array<float> in(ramp(blocks * threads)), total(1), out(blocks);
  device_array<unsigned> finished(1);
  if (bug) lockstep::launch(total_read_while_adding, blocks, threads)(in.ptr, total.ptr, out.ptr);
  else lockstep::launch(total_read_by_last, blocks, threads)(in.ptr, total.ptr, finished.ptr, out.ptr);
  finish("total_read");
}

inline void run_unlocked_critical_section(bool bug) {
  const int blocks = 8;
  device_array<float> in(ramp(blocks)), total(2);
  device_array<int> lock(1);
  if (bug) lockstep::launch(add_to_total_unlocked, blocks, threads)(in.ptr, total.ptr);
  else lockstep::launch(add_to_total_locked, blocks, threads)(in.ptr, total.ptr, lock.ptr);
  finish("add_to_total");
}

inline void run_barrier_in_branch(bool bug) {
  device_array<float> in(ramp(2 * threads)), out(2 * threads);
  if (bug) lockstep::launch(stage_with_barrier_in_branch, 2, threads)(in.ptr, out.ptr);
  else lockstep::launch(stage_then_barrier, 2, threads)(in.ptr, out.ptr);
  finish("stage");
}

inline void run_exit_before_barrier(bool bug) {
  const int n = 100;
  device_array<float> in(ramp(n)), out(n);
  if (bug) lockstep::launch(smooth_early_exit, 2, threads)(in.ptr, out.ptr, n);
  else lockstep::launch(smooth, 2, threads)(in.ptr, out.ptr, n);
  finish("smooth");
}

inline void run_wrong_shuffle_mask(bool bug) {
  device_array<int> in(ramp<int>(2 * threads)), out(2 * threads);
  if (bug) lockstep::launch(half_warp_pairs_full_mask, 2, threads)(in.ptr, out.ptr);
  else lockstep::launch(half_warp_pairs, 2, threads)(in.ptr, out.ptr);
  finish("half_warp_pairs");
}

inline void run_half_warp_copied_mask(bool bug) {
  device_array<int> in(ramp<int>(2 * threads)), out(2 * threads);
  if (bug) lockstep::launch(half_warp_exchange_copied_mask, 2, threads)(in.ptr, out.ptr);
  else lockstep::launch(half_warp_exchange, 2, threads)(in.ptr, out.ptr);
  finish("half_warp_exchange");
}

inline void run_uninitialised_shared_read(bool bug) {
  device_array<float> in(ramp(2 * threads)), out(2 * threads);
  if (bug) lockstep::launch(reverse_half_loaded, 2, threads)(in.ptr, out.ptr);
  else lockstep::launch(reverse, 2, threads)(in.ptr, out.ptr);
  finish("reverse");
}

inline void run_uninitialised_global_read(bool bug) {
  const int n = 100;
  device_array<float> in(ramp(n)), sum(n, /*cleared=*/!bug);
  lockstep::launch(accumulate, 2, threads)(in.ptr, sum.ptr, n);
  finish("accumulate");
}

// --- CUDA API calls (memcheck) -------------------------------------------
// The calls fail with an error code that the buggy code does not look at.

inline void run_double_free(bool bug) {
  const int n = 100;
  float* in = nullptr;
  check_cuda(cudaMalloc(&in, n * sizeof(float)), "cudaMalloc");
  check_cuda(cudaMemset(in, 0, n * sizeof(float)), "cudaMemset");
  device_array<float> out(n);
  lockstep::launch(scale, 2, threads)(in, out.ptr, n);
  finish("scale");
  cudaFree(in);
  if (bug) cudaFree(in);  // BUG(double_free)
}

// Two arrays carved out of one allocation; the buggy code frees the second too.
inline void run_free_never_allocated(bool bug) {
  const int n = 100;
  float* both = nullptr;
  check_cuda(cudaMalloc(&both, 2 * n * sizeof(float)), "cudaMalloc");
  check_cuda(cudaMemset(both, 0, 2 * n * sizeof(float)), "cudaMemset");
  float *in = both, *out = both + n;
  lockstep::launch(scale, 2, threads)(in, out, n);
  finish("scale");
  if (bug) cudaFree(out);  // BUG(free_never_allocated)
  cudaFree(both);
}

// Copies the result back with the element count of the input, one too many.
inline void run_memcpy_past_end(bool bug) {
  const int n = 100;
  device_array<float> in(ramp(n + 1)), out(n);
  lockstep::launch(scale, 2, threads)(in.ptr, out.ptr, n);
  finish("scale");
  std::vector<float> host(n + 1);
  const std::size_t count = bug ? in.n : out.n;
  cudaMemcpy(host.data(), out.ptr, count * sizeof(float), cudaMemcpyDeviceToHost);  // BUG(memcpy_past_end)
}

struct planted_case {
  const char* name;  // as in the BUG(name) markers
  const char* tool;  // the checker that should find it
  void (*run)(bool bug);
};

inline const std::vector<planted_case>& cases() {
  static const std::vector<planted_case> all{
      {"off_by_one_guard", "memcheck", run_off_by_one_guard},
      {"shared_out_of_bounds", "memcheck", run_shared_out_of_bounds},
      {"dynamic_shared_out_of_bounds", "memcheck", run_dynamic_shared_out_of_bounds},
      {"use_after_free", "memcheck", run_use_after_free},
      {"misaligned_access", "memcheck", run_misaligned_access},
      {"overflow_into_next_region", "memcheck", run_overflow_into_next_region},
      {"misaligned_float4", "memcheck", run_misaligned_float4},
      {"misaligned_float2", "memcheck", run_misaligned_float2},
      {"misaligned_int4", "memcheck", run_misaligned_int4},
      {"misaligned_double2", "memcheck", run_misaligned_double2},
      {"missing_barrier_before_read", "racecheck", run_missing_barrier_before_read},
      {"missing_barrier_after_read", "racecheck", run_missing_barrier_after_read},
      {"global_race_between_blocks", "racecheck", run_global_race_between_blocks},
      {"shared_read_racing_atomics", "racecheck", run_shared_read_racing_atomics},
      {"global_read_racing_atomics", "racecheck", run_global_read_racing_atomics},
      {"unlocked_critical_section", "racecheck", run_unlocked_critical_section},
      {"barrier_in_branch", "synccheck", run_barrier_in_branch},
      {"exit_before_barrier", "synccheck", run_exit_before_barrier},
      {"wrong_shuffle_mask", "synccheck", run_wrong_shuffle_mask},
      {"half_warp_copied_mask", "synccheck", run_half_warp_copied_mask},
      {"uninitialised_shared_read", "initcheck", run_uninitialised_shared_read},
      {"uninitialised_global_read", "initcheck", run_uninitialised_global_read},
      {"double_free", "memcheck", run_double_free},
      {"free_never_allocated", "memcheck", run_free_never_allocated},
      {"memcpy_past_end", "memcheck", run_memcpy_past_end},
  };
  return all;
}

}  // namespace planted
