// Matrix multiply C[m,n] = A[m,k] @ B[k,n], row-major float32: the lectures'
// ladder, each variant beside the one it improves on. Each algorithm is a
// device function over one matrix product; the 2-D kernels run one product,
// the *_batched kernels one product per blockIdx.z, with the batch's element
// offsets into A and B given per product (so broadcast batch dimensions are
// offsets that repeat) and C packed. Each rung's tile sizes and launch are its
// row in lockstep/kernels/matmul_recipes.h, which the host reads too. The
// best rung, double_buffered, also takes matmul's fused epilogue
// (lockstep/kernels/matmul_epilogue.h: act(alpha * acc + bias) + residual)
// and applies it as it stores C; after the other rungs the host applies it.
#pragma once
#include "lockstep/cuda.h"
#include "lockstep/kernels/matmul_recipes.h"
#include "matmul_epilogue.cuh"
#include "vector16.cuh"

namespace lockstep::kernels {

// Naive: one thread per output element, 2-D blocks (the lecture uses 16x16);
// every thread reads a full row of A and column of B from global memory.
// H100 4096^3 (lockstep bench, 2026-11-22, bench/RESULTS.md): 5.4 TFLOP/s,
// 0.10 of cuBLAS SGEMM.
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
// H100 4096^3 (lockstep bench, 2026-11-22): 8.2 TFLOP/s (16x16), 0.16 of cuBLAS SGEMM.
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
// H100 4096^3 (lockstep bench, 2026-11-22): 6.5 TFLOP/s (16x16), 0.13 of
// cuBLAS SGEMM: the tile size is not a compile-time constant, so the inner
// loop is not unrolled.
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

// ---------------------------------------------------------------------------
// The ladder after the tiled kernel: fewer shared-memory reads per FMA, then
// wider and conflict-free memory accesses, then latency hiding. All of them
// take any m, n, k: blocks on the bottom/right edge (and the last, partial
// k-tile) load with bounds checks and zero fill and store with bounds checks;
// the other blocks take the unchecked path (`interior`, uniform per block).
// The 16-byte loads and stores are used only where legal (row length a
// multiple of 4 and the base pointer 16-byte aligned, tested per product at
// run time: a batch offset may break the alignment); otherwise the same tile
// is loaded with scalar loads.

#if defined(__CUDACC__)
#define LOCKSTEP_UNROLL _Pragma("unroll")
#else
#define LOCKSTEP_UNROLL
#endif

namespace matmul_detail {

__device__ __forceinline__ float4 load4(const float* p) { return *reinterpret_cast<const float4*>(p); }
__device__ __forceinline__ void store4(float* p, float4 v) { *reinterpret_cast<float4*>(p) = v; }

// p[0..3], the elements at columns col..col+3 of a row of a matrix with
// `cols` columns; zero where `checked` and outside (row_ok false, or the
// column past the end). `vector_ok`: cols % 4 == 0, col % 4 == 0 and p
// 16-byte aligned, so the four are all inside or all outside.
__device__ __forceinline__ float4 load_four(const float* p, bool row_ok, int col, int cols, bool vector_ok, bool checked) {
  if (vector_ok) return (!checked || (row_ok && col < cols)) ? load4(p) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  float v[4];
  LOCKSTEP_UNROLL
  for (int j = 0; j < 4; ++j) v[j] = (!checked || (row_ok && col + j < cols)) ? p[j] : 0.0f;
  return make_float4(v[0], v[1], v[2], v[3]);
}

// The store that matches load_four: only the elements inside when checked.
__device__ __forceinline__ void store_four(float* p, bool row_ok, int col, int cols, bool vector_ok, bool checked, float4 v) {
  if (vector_ok) {
    if (!checked || (row_ok && col < cols)) store4(p, v);
    return;
  }
  const float e[4] = {v.x, v.y, v.z, v.w};
  LOCKSTEP_UNROLL
  for (int j = 0; j < 4; ++j)
    if (!checked || (row_ok && col + j < cols)) p[j] = e[j];
}

// A pointer to row `row` (clamped into the matrix, so the arithmetic stays
// inside it; the bounds checks decide whether it is read) at column `col`.
__device__ __forceinline__ const float* row_pointer(const float* base, int rows, int cols, int row, int col) {
  const int r = row < rows ? row : rows - 1;
  return base + static_cast<long long>(r > 0 ? r : 0) * cols + col;
}

}  // namespace matmul_detail

// 1-D register blocking. H100 4096^3
// (lockstep bench, 2026-11-22, bench/RESULTS.md): 16.2 TFLOP/s, 0.31 of cuBLAS SGEMM.
// The tiled kernel does two shared-memory reads per FMA. Here each thread
// computes a column of TM = 8 outputs: it reads one B element from shared
// memory and reuses it from a register for 8 FMAs, with the 8 A elements it
// needs from shared memory (broadcast within the warp). Block tile 64x64, k-tile
// 8, 512 threads (1-D block), 4 KiB static shared memory.

__device__ __forceinline__ void matmul_register_1d_product(const float* a, const float* b, float* c, int m, int n, int k) {
  constexpr int BM = register_1d_bm, BN = register_1d_bn, BK = register_1d_bk, TM = register_1d_tm;
  __shared__ float a_tile[BM][BK];
  __shared__ float b_tile[BK][BN];
  const int tid = threadIdx.x;
  const int block_row = blockIdx.y * BM, block_col = blockIdx.x * BN;
  const bool interior = block_row + BM <= m && block_col + BN <= n;
  const int thread_col = tid % BN, thread_row = tid / BN * TM;  // this thread's outputs: rows thread_row..+TM of column thread_col
  const int a_row = tid / BK, a_col = tid % BK;                 // the A element and B element it loads per k-tile
  const int b_row = tid / BN, b_col = tid % BN;
  float acc[TM] = {};
  for (int t0 = 0; t0 < k; t0 += BK) {
    if (interior && t0 + BK <= k) {
      a_tile[a_row][a_col] = a[(block_row + a_row) * k + t0 + a_col];
      b_tile[b_row][b_col] = b[(t0 + b_row) * n + block_col + b_col];
    } else {
      const int ar = block_row + a_row, ac = t0 + a_col, br = t0 + b_row, bc = block_col + b_col;
      a_tile[a_row][a_col] = (ar < m && ac < k) ? a[ar * k + ac] : 0.0f;
      b_tile[b_row][b_col] = (br < k && bc < n) ? b[br * n + bc] : 0.0f;
    }
    __syncthreads();
    LOCKSTEP_UNROLL
    for (int i = 0; i < BK; ++i) {
      const float b_value = b_tile[i][thread_col];
      LOCKSTEP_UNROLL
      for (int r = 0; r < TM; ++r) acc[r] += a_tile[thread_row + r][i] * b_value;
    }
    __syncthreads();
  }
  const int col = block_col + thread_col;
  LOCKSTEP_UNROLL
  for (int r = 0; r < TM; ++r) {
    const int row = block_row + thread_row + r;
    if (interior || (row < m && col < n)) c[row * n + col] = acc[r];
  }
}

// 2-D register blocking. H100 4096^3
// (lockstep bench, 2026-11-22, bench/RESULTS.md): 19.2 TFLOP/s, 0.37 of cuBLAS SGEMM.
// Each thread now computes an 8x8 tile of C in registers: per k step it reads
// 8 A and 8 B values from shared memory into registers and does their outer
// product, 64 FMAs for 16 shared reads (the 1-D kernel: 8 FMAs for 9). The
// block tile grows to 128x128 with 256 threads (each loads 4 A and 4 B
// elements per k-tile of 8), so each global element is read 128x less often
// than in the naive kernel. 8 KiB static shared memory.

__device__ __forceinline__ void matmul_register_2d_product(const float* a, const float* b, float* c, int m, int n, int k) {
  constexpr int BM = register_2d_bm, BN = register_2d_bn, BK = register_2d_bk, TM = 8, TN = 8, threads = register_2d_threads;
  __shared__ float a_tile[BM][BK];
  __shared__ float b_tile[BK][BN];
  const int tid = threadIdx.x;
  const int block_row = blockIdx.y * BM, block_col = blockIdx.x * BN;
  const bool interior = block_row + BM <= m && block_col + BN <= n;
  const int thread_row = tid / (BN / TN) * TM, thread_col = tid % (BN / TN) * TN;
  float acc[TM][TN] = {};
  float a_regs[TM], b_regs[TN];
  for (int t0 = 0; t0 < k; t0 += BK) {
    const bool checked = !(interior && t0 + BK <= k);
    LOCKSTEP_UNROLL
    for (int i = 0; i < BM * BK / threads; ++i) {
      const int e = tid + i * threads, r = e / BK, q = e % BK;
      const int ar = block_row + r, ac = t0 + q;
      a_tile[r][q] = (!checked || (ar < m && ac < k)) ? a[ar * k + ac] : 0.0f;
    }
    LOCKSTEP_UNROLL
    for (int i = 0; i < BK * BN / threads; ++i) {
      const int e = tid + i * threads, r = e / BN, q = e % BN;
      const int br = t0 + r, bc = block_col + q;
      b_tile[r][q] = (!checked || (br < k && bc < n)) ? b[br * n + bc] : 0.0f;
    }
    __syncthreads();
    LOCKSTEP_UNROLL
    for (int p = 0; p < BK; ++p) {
      LOCKSTEP_UNROLL
      for (int i = 0; i < TM; ++i) a_regs[i] = a_tile[thread_row + i][p];
      LOCKSTEP_UNROLL
      for (int j = 0; j < TN; ++j) b_regs[j] = b_tile[p][thread_col + j];
      LOCKSTEP_UNROLL
      for (int i = 0; i < TM; ++i) {
        LOCKSTEP_UNROLL
        for (int j = 0; j < TN; ++j) acc[i][j] += a_regs[i] * b_regs[j];
      }
    }
    __syncthreads();
  }
  LOCKSTEP_UNROLL
  for (int i = 0; i < TM; ++i) {
    const int row = block_row + thread_row + i;
    LOCKSTEP_UNROLL
    for (int j = 0; j < TN; ++j) {
      const int col = block_col + thread_col + j;
      if (interior || (row < m && col < n)) c[row * n + col] = acc[i][j];
    }
  }
}

// Vectorized. H100 4096^3
// (lockstep bench, 2026-11-22, bench/RESULTS.md): 32.9 TFLOP/s, 0.64 of cuBLAS SGEMM.
// As the 2-D kernel, with 16-byte memory operations: each thread loads its A
// and B elements of a k-tile as one float4 each (one instruction instead of
// four, full 32-byte sectors per thread pair), and A is stored transposed in
// shared memory (a_tile[k][m]) so that a thread's 8 A values, like its 8 B
// values, are contiguous: both fragments are read as two float4 per k step.
// Scalar loads where the float4 ones are not legal (k or n not a multiple
// of 4, or a misaligned base). 8 KiB static shared memory.

__device__ __forceinline__ void matmul_vectorized_product(const float* a, const float* b, float* c, int m, int n, int k) {
  using namespace matmul_detail;
  constexpr int BM = vectorized_bm, BN = vectorized_bn, BK = vectorized_bk, TM = 8, TN = 8;
  __align__(16) __shared__ float a_tile[BK][BM];  // transposed: a_tile[q][r] = A[block_row + r][t0 + q]
  __align__(16) __shared__ float b_tile[BK][BN];
  const int tid = threadIdx.x;
  const int block_row = blockIdx.y * BM, block_col = blockIdx.x * BN;
  const bool interior = block_row + BM <= m && block_col + BN <= n;
  const bool a_vec = k % 4 == 0 && aligned16(a), b_vec = n % 4 == 0 && aligned16(b), c_vec = n % 4 == 0 && aligned16(c);
  const int thread_row = tid / (BN / TN) * TM, thread_col = tid % (BN / TN) * TN;
  // Per k-tile each thread loads A[a_r][t0 + a_q .. +3] and B[t0 + b_r][b_c .. +3].
  const int a_r = tid / (BK / 4), a_q = tid % (BK / 4) * 4, b_r = tid / (BN / 4), b_c = tid % (BN / 4) * 4;
  const bool a_row_ok = block_row + a_r < m;
  const float* a_next = row_pointer(a, m, k, block_row + a_r, a_q);
  const float* b_next = b + static_cast<long long>(b_r) * n + block_col + b_c;
  float acc[TM][TN] = {};
  for (int t0 = 0; t0 < k; t0 += BK, a_next += BK, b_next += static_cast<long long>(BK) * n) {
    const bool checked = !(interior && t0 + BK <= k);
    const float4 av = load_four(a_next, a_row_ok, t0 + a_q, k, a_vec, checked);
    const float4 bv = load_four(b_next, t0 + b_r < k, block_col + b_c, n, b_vec, checked);
    a_tile[a_q + 0][a_r] = av.x;
    a_tile[a_q + 1][a_r] = av.y;
    a_tile[a_q + 2][a_r] = av.z;
    a_tile[a_q + 3][a_r] = av.w;
    store4(&b_tile[b_r][b_c], bv);
    __syncthreads();
    LOCKSTEP_UNROLL
    for (int p = 0; p < BK; ++p) {
      const float4 a0 = load4(&a_tile[p][thread_row]), a1 = load4(&a_tile[p][thread_row + 4]);
      const float4 b0 = load4(&b_tile[p][thread_col]), b1 = load4(&b_tile[p][thread_col + 4]);
      const float a_regs[TM] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float b_regs[TN] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
      LOCKSTEP_UNROLL
      for (int i = 0; i < TM; ++i) {
        LOCKSTEP_UNROLL
        for (int j = 0; j < TN; ++j) acc[i][j] += a_regs[i] * b_regs[j];
      }
    }
    __syncthreads();
  }
  LOCKSTEP_UNROLL
  for (int i = 0; i < TM; ++i) {
    const int row = block_row + thread_row + i;
    LOCKSTEP_UNROLL
    for (int j = 0; j < TN; j += 4) {
      const int col = block_col + thread_col + j;
      if (interior || row < m)
        store_four(c + static_cast<long long>(row) * n + col, row < m, col, n, c_vec, !interior,
                   make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]));
    }
  }
}

// The thread layout of the warp-tiled kernels: the 128x128 block tile is cut
// into 8 warp tiles of 32 rows x 64 columns (4 x 2 warps); within its warp
// tile a lane (4 x 8 lanes) owns four 4x4 pieces, at rows lane_row * 4 and
// lane_row * 4 + 16 and columns lane_col * 4 and lane_col * 4 + 32. So one
// float4 read of an A fragment touches 4 distinct addresses per warp and one
// of a B fragment 8 consecutive float4s: broadcasts, free of bank conflicts
// (the vectorized kernel's 8 contiguous columns per thread put lanes 32 bytes
// apart: 2-way conflicts), and C is written as 128-byte rows per warp.
struct warp_tile_layout {
  int row, col;  // the thread's first piece in the block tile; the others are +16 rows, +32 columns
  __device__ __forceinline__ explicit warp_tile_layout(int tid) {
    const int warp = tid / 32, lane = tid % 32;
    row = warp / 2 * 32 + lane / 8 * 4;
    col = warp % 2 * 64 + lane % 8 * 4;
  }
  __device__ __forceinline__ static int row_of(int i) { return i / 4 * 16 + i % 4; }  // fragment index 0..7 -> offset
  __device__ __forceinline__ static int col_of(int j) { return j / 4 * 32 + j % 4; }
};

// Writes a thread's 8x8 accumulators of the warp-tiled layout to C.
__device__ __forceinline__ void store_warp_tile(float* c, int m, int n, int block_row, int block_col, warp_tile_layout at, const float (&acc)[8][8],
                                                bool interior) {
  using namespace matmul_detail;
  const bool c_vec = n % 4 == 0 && aligned16(c);
  LOCKSTEP_UNROLL
  for (int i = 0; i < 8; ++i) {
    const int row = block_row + at.row + warp_tile_layout::row_of(i);
    LOCKSTEP_UNROLL
    for (int j = 0; j < 8; j += 4) {
      const int col = block_col + at.col + warp_tile_layout::col_of(j);
      if (interior || row < m)
        store_four(c + static_cast<long long>(row) * n + col, row < m, col, n, c_vec, !interior,
                   make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]));
    }
  }
}

// Warp tiling. H100 4096^3
// (lockstep bench, 2026-11-22, bench/RESULTS.md): 39.3 TFLOP/s, 0.76 of cuBLAS SGEMM.
// As the vectorized kernel, with a warp tile level between block and thread
// (warp_tile_layout): each warp owns a 32x64 sub-tile and each thread four
// 4x4 pieces within it, so every shared-memory fragment read of a warp is a
// conflict-free broadcast, and a warp's A and B fragments span 32 + 64
// values instead of 128 + 128 (less shared traffic per warp, fragments
// reused from registers across 4 lanes / 8 lanes). The transposed A tile is
// padded by 4 columns so its transposing stores are conflict-free too.
// 8.3 KiB static shared memory.

__device__ __forceinline__ void matmul_warp_tiled_product(const float* a, const float* b, float* c, int m, int n, int k) {
  using namespace matmul_detail;
  constexpr int BM = warp_tiled_bm, BN = warp_tiled_bn, BK = warp_tiled_bk, pad = 4;
  __align__(16) __shared__ float a_tile[BK][BM + pad];
  __align__(16) __shared__ float b_tile[BK][BN];
  const int tid = threadIdx.x;
  const int block_row = blockIdx.y * BM, block_col = blockIdx.x * BN;
  const bool interior = block_row + BM <= m && block_col + BN <= n;
  const bool a_vec = k % 4 == 0 && aligned16(a), b_vec = n % 4 == 0 && aligned16(b);
  const warp_tile_layout at(tid);
  const int a_r = tid / (BK / 4), a_q = tid % (BK / 4) * 4, b_r = tid / (BN / 4), b_c = tid % (BN / 4) * 4;
  const bool a_row_ok = block_row + a_r < m;
  const float* a_next = row_pointer(a, m, k, block_row + a_r, a_q);
  const float* b_next = b + static_cast<long long>(b_r) * n + block_col + b_c;
  float acc[8][8] = {};
  for (int t0 = 0; t0 < k; t0 += BK, a_next += BK, b_next += static_cast<long long>(BK) * n) {
    const bool checked = !(interior && t0 + BK <= k);
    const float4 av = load_four(a_next, a_row_ok, t0 + a_q, k, a_vec, checked);
    const float4 bv = load_four(b_next, t0 + b_r < k, block_col + b_c, n, b_vec, checked);
    a_tile[a_q + 0][a_r] = av.x;
    a_tile[a_q + 1][a_r] = av.y;
    a_tile[a_q + 2][a_r] = av.z;
    a_tile[a_q + 3][a_r] = av.w;
    store4(&b_tile[b_r][b_c], bv);
    __syncthreads();
    LOCKSTEP_UNROLL
    for (int p = 0; p < BK; ++p) {
      const float4 a0 = load4(&a_tile[p][at.row]), a1 = load4(&a_tile[p][at.row + 16]);
      const float4 b0 = load4(&b_tile[p][at.col]), b1 = load4(&b_tile[p][at.col + 32]);
      const float a_regs[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float b_regs[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
      LOCKSTEP_UNROLL
      for (int i = 0; i < 8; ++i) {
        LOCKSTEP_UNROLL
        for (int j = 0; j < 8; ++j) acc[i][j] += a_regs[i] * b_regs[j];
      }
    }
    __syncthreads();
  }
  store_warp_tile(c, m, n, block_row, block_col, at, acc, interior);
}

// Double buffered. H100 4096^3
// (lockstep bench, 2026-11-22, bench/RESULTS.md): 46.8 TFLOP/s, 0.903 of cuBLAS SGEMM
// (52.0 in the same run; 0.88-0.91 over the day's runs).
// Takes the fused epilogue (matmul_epilogue.h): relu(alpha * acc + bias) folded into its stores, any
// other applied to its tile of C right after storing it.
// As the warp-tiled kernel, with the waits taken out of the loop and a
// larger tile: two shared-memory stages, so the next k-tile is stored into
// one while the current one is read from the other and one __syncthreads
// per k-tile suffices (a stage is rewritten only after the barrier that
// follows its last read); the next k-tile's global loads are issued into
// registers at the top of the iteration and stored to shared memory only at
// its last k step, so their latency hides behind 31 steps of FMAs; and the
// fragments are double buffered in registers too (step p + 1's are read
// from shared memory while step p's FMAs run). Block tile 128x256, k-tile
// BK = 32, 256 threads as 2 x 4 warps of 64x64; a warp's lanes form a 4 x 8
// grid and each lane owns 4 x 2 pieces of 4x4 (16x8 outputs, rows
// lane_row * 4 + 16 i, columns lane_col * 4 + 32 j), so fragment reads stay
// conflict-free broadcasts (4 A float4 with 4 distinct addresses, 2 B
// float4 with 8 consecutive) and a thread does 128 FMAs per 6 shared reads
// (the warp-tiled kernel: 64 per 4). One block per SM (up to 255 registers,
// no spills), 2 * 32 * (128 + 4 + 256) * 4 = 99,328 bytes of dynamic shared
// memory (set it at launch and raise the kernel's limit). On an H100 at
// 4096^3 this measured 46.6 TFLOP/s against 45.0-45.5 for the 128x128 tile,
// BK = 16, 8x8-per-thread, two-blocks-per-SM version it replaces; in the
// same run 128x256 with BK = 16 or 64, 256x128, 8x16 per thread, 128-thread
// blocks (cuBLAS's 128x128 with 64x64 warps) and cp.async stages for A
// and/or B (2-4 stages) were all slower.
// may_fold: whether the stores may fold relu(alpha * acc + bias) in (the
// batched kernel does not: it then spills 28 bytes, with 255 registers).
template <class S, bool may_fold = true>
__device__ __forceinline__ void matmul_double_buffered_product(const float* a, const float* b, float* c, int m, int n, int k,
                                                               const matmul_epilogue& epilogue) {
  using namespace matmul_detail;
  constexpr int BM = S::BM, BN = S::BN, BK = S::BK, threads = S::threads, pad = S::pad, PM = S::pieces_m, PN = S::pieces_n;
  constexpr int TM = 4 * PM, TN = 4 * PN;
  constexpr int a_loads = BM * BK / 4 / threads, b_loads = BK * BN / 4 / threads;  // float4s per thread per k-tile
  static_assert(a_loads >= 1 && b_loads >= 1 && BM * BK / 4 % threads == 0 && BK * BN / 4 % threads == 0,
                "the tiles must split into float4s per thread");
  // Dynamic: S::shared_bytes, over the 48 KiB of static shared memory.
  // a_tiles[s][q][r] = A[block_row + r][t0 + q] (transposed), b_tiles[s][q][col].
  extern __shared__ __align__(16) float double_buffered_shared[];
  float(*a_tiles)[BK][BM + pad] = reinterpret_cast<float(*)[BK][BM + pad]>(double_buffered_shared);
  float(*b_tiles)[BK][BN] = reinterpret_cast<float(*)[BK][BN]>(double_buffered_shared + 2 * BK * (BM + pad));
  const int tid = threadIdx.x;
  const int block_row = blockIdx.y * BM, block_col = blockIdx.x * BN;
  const bool interior = block_row + BM <= m && block_col + BN <= n;
  const bool a_vec = k % 4 == 0 && aligned16(a), b_vec = n % 4 == 0 && aligned16(b);
  // The thread's first piece in the block tile; the others are + lane_rows * 4 rows, + lane_cols * 4 columns.
  const int warp = tid / 32, lane = tid % 32;
  const int thread_row = warp / S::warps_n * S::warp_m + lane / S::lane_cols * 4;
  const int thread_col = warp % S::warps_n * S::warp_n + lane % S::lane_cols * 4;

  // Load number l of a thread per k-tile: A[a_r + l * a_step][t0 + a_q..+3], B[t0 + b_r + l * b_step][b_c..+3].
  constexpr int a_step = threads / (BK / 4), b_step = threads / (BN / 4);
  const int a_r = tid / (BK / 4), a_q = tid % (BK / 4) * 4, b_r = tid / (BN / 4), b_c = tid % (BN / 4) * 4;
  // Element offsets rather than pointers (fewer registers). Unsigned: an
  // offset past the end may wrap, but is then never read; one that is read
  // is below m * k or k * n, which fit in an int.
  unsigned a_offset[a_loads];
  bool a_row_ok[a_loads];
  LOCKSTEP_UNROLL
  for (int l = 0; l < a_loads; ++l) {
    const int row = min(block_row + a_r + l * a_step, m - 1);
    a_offset[l] = static_cast<unsigned>(row) * static_cast<unsigned>(k) + a_q;
    a_row_ok[l] = block_row + a_r + l * a_step < m;
  }
  const unsigned b_offset = static_cast<unsigned>(b_r) * static_cast<unsigned>(n) + block_col + b_c;
  float4 a_staged[a_loads], b_staged[b_loads];
  auto load_tile = [&](int t0) {
    const bool checked = !(interior && t0 + BK <= k);
    LOCKSTEP_UNROLL
    for (int l = 0; l < a_loads; ++l) a_staged[l] = load_four(a + (a_offset[l] + t0), a_row_ok[l], t0 + a_q, k, a_vec, checked);
    LOCKSTEP_UNROLL
    for (int l = 0; l < b_loads; ++l)
      b_staged[l] = load_four(b + (b_offset + static_cast<unsigned>(t0 + l * b_step) * static_cast<unsigned>(n)), t0 + b_r + l * b_step < k,
                              block_col + b_c, n, b_vec, checked);
  };
  auto store_tile = [&](int s) {
    LOCKSTEP_UNROLL
    for (int l = 0; l < a_loads; ++l) {
      a_tiles[s][a_q + 0][a_r + l * a_step] = a_staged[l].x;
      a_tiles[s][a_q + 1][a_r + l * a_step] = a_staged[l].y;
      a_tiles[s][a_q + 2][a_r + l * a_step] = a_staged[l].z;
      a_tiles[s][a_q + 3][a_r + l * a_step] = a_staged[l].w;
    }
    LOCKSTEP_UNROLL
    for (int l = 0; l < b_loads; ++l) store4(&b_tiles[s][b_r + l * b_step][b_c], b_staged[l]);
  };

  float acc[TM][TN] = {};
  float4 a_frag[2][PM], b_frag[2][PN];  // [register stage][piece]
  auto load_fragments = [&](int s, int p, int f) {
    LOCKSTEP_UNROLL
    for (int i = 0; i < PM; ++i) a_frag[f][i] = load4(&a_tiles[s][p][thread_row + i * S::lane_rows * 4]);
    LOCKSTEP_UNROLL
    for (int j = 0; j < PN; ++j) b_frag[f][j] = load4(&b_tiles[s][p][thread_col + j * S::lane_cols * 4]);
  };

  const int tiles = (k + BK - 1) / BK;
  if (tiles > 0) {
    load_tile(0);
    store_tile(0);
    __syncthreads();
    load_fragments(0, 0, 0);
  }
  for (int t = 0; t < tiles; ++t) {
    const int s = t & 1;
    const bool more = t + 1 < tiles;
    if (more) load_tile((t + 1) * BK);  // in flight while this tile is multiplied
    LOCKSTEP_UNROLL
    for (int p = 0; p < BK; ++p) {
      if (p == BK - 1 && more) {
        store_tile(s ^ 1);  // stage s ^ 1 was last read before the previous iteration's barrier
        __syncthreads();
      }
      if (p < BK - 1)
        load_fragments(s, p + 1, (p + 1) % 2);
      else if (more)
        load_fragments(s ^ 1, 0, 0);
      float a_regs[TM], b_regs[TN];
      LOCKSTEP_UNROLL
      for (int i = 0; i < PM; ++i) {
        const float4 v = a_frag[p % 2][i];
        a_regs[4 * i] = v.x, a_regs[4 * i + 1] = v.y, a_regs[4 * i + 2] = v.z, a_regs[4 * i + 3] = v.w;
      }
      LOCKSTEP_UNROLL
      for (int j = 0; j < PN; ++j) {
        const float4 v = b_frag[p % 2][j];
        b_regs[4 * j] = v.x, b_regs[4 * j + 1] = v.y, b_regs[4 * j + 2] = v.z, b_regs[4 * j + 3] = v.w;
      }
      LOCKSTEP_UNROLL
      for (int i = 0; i < TM; ++i) {
        LOCKSTEP_UNROLL
        for (int j = 0; j < TN; ++j) acc[i][j] += a_regs[i] * b_regs[j];
      }
    }
  }
  const bool c_vec = n % 4 == 0 && aligned16(c);
  // relu(alpha * acc + bias), the commonest epilogue, is folded into the
  // stores: a thread's columns are the same in all its rows, so its bias is
  // PN float4 loaded once after the main loop (which keeps its registers:
  // 252, no spills); other epilogues are applied to the stored tile below.
  const bool folded = may_fold && epilogue_active(epilogue) && epilogue_foldable(epilogue);  // the same in every thread
  const bool relu = epilogue.activation == static_cast<int>(unary_op::relu);
  float4 bias[PN];
  LOCKSTEP_UNROLL
  for (int j = 0; j < PN; ++j) {
    const int col = block_col + thread_col + j * (S::lane_cols * 4);
    bias[j] = folded && epilogue.bias ? load_four(static_cast<const float*>(epilogue.bias) + col, true, col, n, c_vec, !interior)
                                      : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  }
  const auto fold = [&](float x, float b) {
    x = epilogue.alpha * x + b;
    return relu ? fmaxf(x, 0.0f) : x;
  };
  LOCKSTEP_UNROLL
  for (int i = 0; i < TM; ++i) {
    const int row = block_row + thread_row + i / 4 * (S::lane_rows * 4) + i % 4;
    LOCKSTEP_UNROLL
    for (int j = 0; j < TN; j += 4) {
      const int col = block_col + thread_col + j / 4 * (S::lane_cols * 4);
      float4 v = make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
      if (folded) {
        const float4 b = bias[j / 4];
        v = make_float4(fold(v.x, b.x), fold(v.y, b.y), fold(v.z, b.z), fold(v.w, b.w));
      }
      if (interior || row < m) store_four(c + static_cast<long long>(row) * n + col, row < m, col, n, c_vec, !interior, v);
    }
  }
  if (epilogue_active(epilogue) && !folded) {  // the same in every thread
    // The epilogue right after those stores, over the block's tile of C read
    // back (from L2, after the barrier that makes every thread's stores
    // visible to the block), consecutive threads on consecutive elements, in
    // a loop that is not unrolled (matmul_epilogue.cuh). Applying it to the
    // accumulators themselves, or staging them through shared memory half a
    // tile at a time, changed nvcc's allocation of the main loop (255
    // registers and spills instead of 252 and none) and cost the product
    // without an epilogue 2-4% (H100, 4096^3); a whole tile, 128 KiB, would
    // not fit the 99 KiB of shared memory of sm_86 and sm_89. Reading back
    // leaves the main loop as it was. Product blockIdx.z of a batched kernel
    // reads its residual z * m * n elements on, as it writes its C (0 in the
    // 2-D kernel).
    const matmul_epilogue e_z = epilogue_at<float>(epilogue, static_cast<long long>(blockIdx.z) * m * n);
    __syncthreads();
    LOCKSTEP_EPILOGUE_LOOP
    for (int e = tid; e < BM * BN; e += threads) {
      const int row = block_row + e / BN, col = block_col + e % BN;
      if (row < m && col < n) {
        float* const out = c + static_cast<long long>(row) * n + col;
        *out = apply_epilogue<float>(e_z, *out, row, col, n);
      }
    }
  }
}

__global__ void matmul_naive(const float* a, const float* b, float* c, int m, int n, int k) { matmul_naive_product(a, b, c, m, n, k); }

template <int tile_size>
__global__ void matmul_tiled_static(const float* a, const float* b, float* c, int m, int n, int k) {
  matmul_tiled_static_product<tile_size>(a, b, c, m, n, k);
}

__global__ void matmul_tiled_dynamic(const float* a, const float* b, float* c, int m, int n, int k) {
  matmul_tiled_dynamic_product(a, b, c, m, n, k);
}

__global__ void __launch_bounds__(register_1d_threads) matmul_register_1d(const float* a, const float* b, float* c, int m, int n, int k) {
  matmul_register_1d_product(a, b, c, m, n, k);
}

__global__ void __launch_bounds__(register_2d_threads) matmul_register_2d(const float* a, const float* b, float* c, int m, int n, int k) {
  matmul_register_2d_product(a, b, c, m, n, k);
}

__global__ void __launch_bounds__(vectorized_threads) matmul_vectorized(const float* a, const float* b, float* c, int m, int n, int k) {
  matmul_vectorized_product(a, b, c, m, n, k);
}

__global__ void __launch_bounds__(warp_tiled_threads) matmul_warp_tiled(const float* a, const float* b, float* c, int m, int n, int k) {
  matmul_warp_tiled_product(a, b, c, m, n, k);
}

__global__ void __launch_bounds__(double_buffered_threads, 1)
    matmul_double_buffered(const float* a, const float* b, float* c, int m, int n, int k, matmul_epilogue epilogue) {
  matmul_double_buffered_product<double_buffered_config>(a, b, c, m, n, k, epilogue);
}

// The batched kernels: product blockIdx.z of a batch, A's and B's at their
// element offsets (a broadcast batch dimension repeats offsets), C packed.
// The offsets are `const __restrict__`: read-only for the launch, so every
// thread of a block reads the same ones (the emulator's region loops then
// run the product once for the block, the compiler being able to tell).
#define LOCKSTEP_BATCH_OPERANDS(z) a + a_offsets[z], b + b_offsets[z], c + static_cast<long long>(z) * m* n

__global__ void matmul_naive_batched(const float* a, const float* b, float* c, int m, int n, int k, const long long* __restrict__ a_offsets,
                                     const long long* __restrict__ b_offsets) {
  const long long z = blockIdx.z;
  matmul_naive_product(LOCKSTEP_BATCH_OPERANDS(z), m, n, k);
}

template <int tile_size>
__global__ void matmul_tiled_static_batched(const float* a, const float* b, float* c, int m, int n, int k, const long long* __restrict__ a_offsets,
                                            const long long* __restrict__ b_offsets) {
  const long long z = blockIdx.z;
  matmul_tiled_static_product<tile_size>(LOCKSTEP_BATCH_OPERANDS(z), m, n, k);
}

__global__ void matmul_tiled_dynamic_batched(const float* a, const float* b, float* c, int m, int n, int k, const long long* __restrict__ a_offsets,
                                             const long long* __restrict__ b_offsets) {
  const long long z = blockIdx.z;
  matmul_tiled_dynamic_product(LOCKSTEP_BATCH_OPERANDS(z), m, n, k);
}
__global__ void __launch_bounds__(register_1d_threads)
    matmul_register_1d_batched(const float* a, const float* b, float* c, int m, int n, int k, const long long* __restrict__ a_offsets,
                               const long long* __restrict__ b_offsets) {
  const long long z = blockIdx.z;
  matmul_register_1d_product(LOCKSTEP_BATCH_OPERANDS(z), m, n, k);
}

__global__ void __launch_bounds__(register_2d_threads)
    matmul_register_2d_batched(const float* a, const float* b, float* c, int m, int n, int k, const long long* __restrict__ a_offsets,
                               const long long* __restrict__ b_offsets) {
  const long long z = blockIdx.z;
  matmul_register_2d_product(LOCKSTEP_BATCH_OPERANDS(z), m, n, k);
}

__global__ void __launch_bounds__(vectorized_threads)
    matmul_vectorized_batched(const float* a, const float* b, float* c, int m, int n, int k, const long long* __restrict__ a_offsets,
                              const long long* __restrict__ b_offsets) {
  const long long z = blockIdx.z;
  matmul_vectorized_product(LOCKSTEP_BATCH_OPERANDS(z), m, n, k);
}

__global__ void __launch_bounds__(warp_tiled_threads)
    matmul_warp_tiled_batched(const float* a, const float* b, float* c, int m, int n, int k, const long long* __restrict__ a_offsets,
                              const long long* __restrict__ b_offsets) {
  const long long z = blockIdx.z;
  matmul_warp_tiled_product(LOCKSTEP_BATCH_OPERANDS(z), m, n, k);
}

__global__ void __launch_bounds__(double_buffered_threads, 1)
    matmul_double_buffered_batched(const float* a, const float* b, float* c, int m, int n, int k, const long long* __restrict__ a_offsets,
                                   const long long* __restrict__ b_offsets, matmul_epilogue epilogue) {
  const long long z = blockIdx.z;
  matmul_double_buffered_product<double_buffered_config, false>(LOCKSTEP_BATCH_OPERANDS(z), m, n, k, epilogue);
}
#undef LOCKSTEP_BATCH_OPERANDS
#undef LOCKSTEP_UNROLL

}  // namespace lockstep::kernels
