// Matrix multiply C[m,n] = A[m,k] @ B[k,n], row-major float32: the lectures'
// ladder, each variant beside the one it improves on. Each algorithm is a
// device function over one matrix product; the 2-D kernels run one product,
// the *_batched kernels one product per blockIdx.z, with the batch's element
// offsets into A and B given per product (so broadcast batch dimensions are
// offsets that repeat) and C packed.
#pragma once
#include "lockstep/cuda.h"

namespace lockstep::kernels {

// Naive: one thread per output element, 2-D blocks (the lecture uses 16x16);
// every thread reads a full row of A and column of B from global memory.
__device__ __forceinline__ void matmul_naive_product(const float* a, const float* b, float* c, int m, int n, int k) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < m && col < n) {
    float acc = 0.0f;
    for (int i = 0; i < k; ++i) acc += a[row * k + i] * b[i * n + col];
    c[row * n + col] = acc;
  }
}

// Tiled with static shared memory: the block stages a tile_size x tile_size
// tile of A and of B in shared memory, so each global element is read
// k/tile_size times fewer. Launch with blocks of tile_size x tile_size.
template <int tile_size>
__device__ __forceinline__ void matmul_tiled_static_product(const float* a, const float* b, float* c, int m, int n, int k) {
  __shared__ float a_tile[tile_size][tile_size];
  __shared__ float b_tile[tile_size][tile_size];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * tile_size + ty, col = blockIdx.x * tile_size + tx;
  float acc = 0.0f;
  for (int t0 = 0; t0 < k; t0 += tile_size) {
    a_tile[ty][tx] = (row < m && t0 + tx < k) ? a[row * k + t0 + tx] : 0.0f;
    b_tile[ty][tx] = (t0 + ty < k && col < n) ? b[(t0 + ty) * n + col] : 0.0f;
    __syncthreads();  // the tiles are complete before anyone reads them
    for (int i = 0; i < tile_size; ++i) acc += a_tile[ty][i] * b_tile[i][tx];
    __syncthreads();  // everyone is done reading before the next tile overwrites them
  }
  if (row < m && col < n) c[row * n + col] = acc;
}

// Tiled with dynamic shared memory: the same algorithm with the tile size
// chosen at launch (blockDim.x == blockDim.y == tile size) and
// 2 * tile * tile * sizeof(float) bytes of dynamic shared memory.
__device__ __forceinline__ void matmul_tiled_dynamic_product(const float* a, const float* b, float* c, int m, int n, int k) {
  extern __shared__ float tiles[];
  const int tile_size = blockDim.x;
  float* a_tile = tiles;
  float* b_tile = tiles + tile_size * tile_size;
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * tile_size + ty, col = blockIdx.x * tile_size + tx;
  float acc = 0.0f;
  for (int t0 = 0; t0 < k; t0 += tile_size) {
    a_tile[ty * tile_size + tx] = (row < m && t0 + tx < k) ? a[row * k + t0 + tx] : 0.0f;
    b_tile[ty * tile_size + tx] = (t0 + ty < k && col < n) ? b[(t0 + ty) * n + col] : 0.0f;
    __syncthreads();
    for (int i = 0; i < tile_size; ++i) acc += a_tile[ty * tile_size + i] * b_tile[i * tile_size + tx];
    __syncthreads();
  }
  if (row < m && col < n) c[row * n + col] = acc;
}

__global__ void matmul_naive(const float* a, const float* b, float* c, int m, int n, int k) { matmul_naive_product(a, b, c, m, n, k); }

template <int tile_size>
__global__ void matmul_tiled_static(const float* a, const float* b, float* c, int m, int n, int k) {
  matmul_tiled_static_product<tile_size>(a, b, c, m, n, k);
}

__global__ void matmul_tiled_dynamic(const float* a, const float* b, float* c, int m, int n, int k) {
  matmul_tiled_dynamic_product(a, b, c, m, n, k);
}

#define LOCKSTEP_BATCHED_PRODUCT(product_call)                                                    \
  const long long z = blockIdx.z;                                                                 \
  const float* a_z = a + a_offsets[z];                                                            \
  const float* b_z = b + b_offsets[z];                                                            \
  float* c_z = c + z * static_cast<long long>(m) * n;                                             \
  product_call

__global__ void matmul_naive_batched(const float* a, const float* b, float* c, int m, int n, int k, const long long* a_offsets,
                                     const long long* b_offsets) {
  LOCKSTEP_BATCHED_PRODUCT(matmul_naive_product(a_z, b_z, c_z, m, n, k));
}

template <int tile_size>
__global__ void matmul_tiled_static_batched(const float* a, const float* b, float* c, int m, int n, int k, const long long* a_offsets,
                                            const long long* b_offsets) {
  LOCKSTEP_BATCHED_PRODUCT(matmul_tiled_static_product<tile_size>(a_z, b_z, c_z, m, n, k));
}

__global__ void matmul_tiled_dynamic_batched(const float* a, const float* b, float* c, int m, int n, int k, const long long* a_offsets,
                                             const long long* b_offsets) {
  LOCKSTEP_BATCHED_PRODUCT(matmul_tiled_dynamic_product(a_z, b_z, c_z, m, n, k));
}
#undef LOCKSTEP_BATCHED_PRODUCT

}  // namespace lockstep::kernels
