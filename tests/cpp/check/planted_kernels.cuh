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
      {"missing_barrier_before_read", "racecheck", run_missing_barrier_before_read},
      {"missing_barrier_after_read", "racecheck", run_missing_barrier_after_read},
      {"global_race_between_blocks", "racecheck", run_global_race_between_blocks},
      {"barrier_in_branch", "synccheck", run_barrier_in_branch},
      {"exit_before_barrier", "synccheck", run_exit_before_barrier},
      {"wrong_shuffle_mask", "synccheck", run_wrong_shuffle_mask},
      {"uninitialised_shared_read", "initcheck", run_uninitialised_shared_read},
      {"uninitialised_global_read", "initcheck", run_uninitialised_global_read},
  };
  return all;
}

}  // namespace planted
