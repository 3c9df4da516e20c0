// How each matmul kernel is launched, one table row per algo: the float32
// SIMT ladder of kernels/matmul.cu here, its tensor-core rungs in
// matmul_tensor_core_recipes.h. The kernels take their tile sizes from the
// constants below, and the tensor layer (src/tensor/ops.cpp), the list of
// kernels the built-in modules instantiate (builtin_kernel_names.h) and
// Python (lockstep._core.matmul_algos(), the bench, the docs) read the rows,
// so a new rung is its kernel plus one row. Plain C++20 (no CUDA types, no
// standard headers): the host compiler, nvcc and NVRTC all read it.
#pragma once

namespace lockstep::kernels {

// How the host passes a product to the kernel (its parameters) and covers C.
// The kernels of a row with fused_epilogue take one parameter more, last: the
// matmul_epilogue (matmul_epilogue.h).
enum class matmul_operands : int {
  // (a, b, c, m, n, k), row-major float32; a block per tile_m x tile_n tile of
  // C. The batched kernel adds (a_offsets, b_offsets), the element offsets of
  // each product's A and B, and computes product blockIdx.z of a packed C.
  row_major,
  // (a, lda, b_t, ldb, c, ldc, m, n, k): B as its transpose b_t[n,k], rows
  // k-contiguous with row strides in elements; a block per tile; one launch per product.
  b_transposed,
  // (a_map, b_map, c, ldc, m, n, k): TMA descriptors of A and b_t, boxes of
  // tile_m and tile_n rows of tile_k_bytes with the 128-byte swizzle; a
  // persistent grid of at most one block per multiprocessor walks the tiles.
  tma_b_transposed,
};

// A row names its fields (C++20 designated initializers, in this order); the
// ones it leaves out keep these defaults.
struct matmul_recipe {
  const char* algo = nullptr;             // matmul's algo argument
  const char* float32_kernel = nullptr;   // name expression in lockstep::kernels for float32 inputs (through tf32 on tensor cores)
  const char* bfloat16_kernel = nullptr;  // the same for bfloat16 inputs and output
  const char* batched_kernel = nullptr;   // row_major only: the float32 kernel over a batch
  matmul_operands operands = matmul_operands::row_major;
  unsigned block_x = 1, block_y = 1;
  int tile_m = 0, tile_n = 0;  // the tile of C a block computes
  int tile_k_bytes = 0;        // the k extent of the operand tiles staged per step, in bytes (0: none)
  int shared_bytes = 0;        // dynamic shared memory per block (over 48 KiB the host raises the kernel's limit)
  bool tensor_cores = false;
  bool fused_epilogue = false;  // its kernels take matmul_epilogue (matmul_epilogue.h) as their last argument
  bool gpu_only = false;        // not in the emulator's module (inline PTX)
  const char* arch = nullptr;   // the GPUs it runs on ("sm_90"); nullptr: any device
  bool lecture = false;         // the lecture's own kernel (the bench and examples run these on the emulator)
};

#define LOCKSTEP_MATMUL_STRINGIFY(x) #x
#define LOCKSTEP_MATMUL_STRING(x) LOCKSTEP_MATMUL_STRINGIFY(x)

// ---------------------------------------------------------------- the float32 SIMT ladder's tiles

// The lecture's tile: 16x16 blocks for naive and the tiled kernels
// (matmul_tiled_static's template argument, matmul_tiled_dynamic's blockDim).
#define LOCKSTEP_MATMUL_LECTURE_TILE 16
inline constexpr int lecture_tile = LOCKSTEP_MATMUL_LECTURE_TILE;
inline constexpr int tiled_dynamic_shared_bytes = 2 * lecture_tile * lecture_tile * static_cast<int>(sizeof(float));

// register_1d: block tile 64x64, k-tile 8, a column of 8 outputs per thread, 512 threads.
inline constexpr int register_1d_bm = 64, register_1d_bn = 64, register_1d_bk = 8, register_1d_tm = 8, register_1d_threads = 512;
// register_2d, vectorized, warp_tiled: block tile 128x128, k-tile 8, 8x8 outputs per thread, 256 threads.
inline constexpr int register_2d_bm = 128, register_2d_bn = 128, register_2d_bk = 8, register_2d_threads = 256;
inline constexpr int vectorized_bm = 128, vectorized_bn = 128, vectorized_bk = 8, vectorized_threads = 256;
inline constexpr int warp_tiled_bm = 128, warp_tiled_bn = 128, warp_tiled_bk = 8, warp_tiled_threads = 256;

// double_buffered: block tile BM x BN, k-tile BK, `threads` as warps of
// warp_m x warp_n (warps_n across), a warp's lanes lane_rows x lane_cols,
// each lane pieces_m x pieces_n pieces of 4x4; two shared stages of the
// transposed A tile (rows padded by `pad`) and the B tile.
template <int BM_, int BN_, int BK_, int threads_, int warps_n_, int lane_rows_, int pieces_m_, int pieces_n_>
struct double_buffered_shape {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, threads = threads_, warps_n = warps_n_, pad = 4;
  static constexpr int lane_rows = lane_rows_, lane_cols = 32 / lane_rows_, pieces_m = pieces_m_, pieces_n = pieces_n_;
  static constexpr int warp_m = lane_rows * 4 * pieces_m, warp_n = lane_cols * 4 * pieces_n, warps_m = threads / 32 / warps_n;
  static_assert(warps_m * warp_m == BM && warps_n * warp_n == BN, "the warp tiles must cover the block tile");
  static constexpr int shared_bytes = 2 * BK * (BM + pad + BN) * static_cast<int>(sizeof(float));
};
using double_buffered_config = double_buffered_shape<128, 256, 32, 256, 4, 4, 4, 2>;
inline constexpr int double_buffered_bm = double_buffered_config::BM, double_buffered_bn = double_buffered_config::BN,
                     double_buffered_bk = double_buffered_config::BK, double_buffered_threads = double_buffered_config::threads,
                     double_buffered_shared_bytes = double_buffered_config::shared_bytes;

// ---------------------------------------------------------------- the float32 SIMT ladder

// Simplest first.
inline constexpr int float32_bytes = static_cast<int>(sizeof(float));
inline constexpr matmul_recipe simt_matmul_recipes[] = {
    {.algo = "naive",
     .float32_kernel = "matmul_naive",
     .batched_kernel = "matmul_naive_batched",
     .block_x = lecture_tile,
     .block_y = lecture_tile,
     .tile_m = lecture_tile,
     .tile_n = lecture_tile,
     .lecture = true},
    {.algo = "tiled_static",
     .float32_kernel = "matmul_tiled_static<" LOCKSTEP_MATMUL_STRING(LOCKSTEP_MATMUL_LECTURE_TILE) ">",
     .batched_kernel = "matmul_tiled_static_batched<" LOCKSTEP_MATMUL_STRING(LOCKSTEP_MATMUL_LECTURE_TILE) ">",
     .block_x = lecture_tile,
     .block_y = lecture_tile,
     .tile_m = lecture_tile,
     .tile_n = lecture_tile,
     .tile_k_bytes = lecture_tile * float32_bytes,
     .lecture = true},
    {.algo = "tiled_dynamic",
     .float32_kernel = "matmul_tiled_dynamic",
     .batched_kernel = "matmul_tiled_dynamic_batched",
     .block_x = lecture_tile,
     .block_y = lecture_tile,
     .tile_m = lecture_tile,
     .tile_n = lecture_tile,
     .tile_k_bytes = lecture_tile * float32_bytes,
     .shared_bytes = tiled_dynamic_shared_bytes,
     .lecture = true},
    {.algo = "register_1d",
     .float32_kernel = "matmul_register_1d",
     .batched_kernel = "matmul_register_1d_batched",
     .block_x = register_1d_threads,
     .tile_m = register_1d_bm,
     .tile_n = register_1d_bn,
     .tile_k_bytes = register_1d_bk * float32_bytes},
    {.algo = "register_2d",
     .float32_kernel = "matmul_register_2d",
     .batched_kernel = "matmul_register_2d_batched",
     .block_x = register_2d_threads,
     .tile_m = register_2d_bm,
     .tile_n = register_2d_bn,
     .tile_k_bytes = register_2d_bk * float32_bytes},
    {.algo = "vectorized",
     .float32_kernel = "matmul_vectorized",
     .batched_kernel = "matmul_vectorized_batched",
     .block_x = vectorized_threads,
     .tile_m = vectorized_bm,
     .tile_n = vectorized_bn,
     .tile_k_bytes = vectorized_bk * float32_bytes},
    {.algo = "warp_tiled",
     .float32_kernel = "matmul_warp_tiled",
     .batched_kernel = "matmul_warp_tiled_batched",
     .block_x = warp_tiled_threads,
     .tile_m = warp_tiled_bm,
     .tile_n = warp_tiled_bn,
     .tile_k_bytes = warp_tiled_bk * float32_bytes},
    {.algo = "double_buffered",
     .float32_kernel = "matmul_double_buffered",
     .batched_kernel = "matmul_double_buffered_batched",
     .block_x = double_buffered_threads,
     .tile_m = double_buffered_bm,
     .tile_n = double_buffered_bn,
     .tile_k_bytes = double_buffered_bk * float32_bytes,
     .shared_bytes = double_buffered_shared_bytes,
     .fused_epilogue = true},
};

// What algo "auto" picks for float32 inputs: the fastest rung on a GPU; on
// the emulator the fastest there, whose register tiles run as region loops
// (double_buffered, with lambdas over its stages, stays on fibers: 3x slower
// at 256^3-1024^3, bench/RESULTS.md, issue 18's eleventh part).
inline constexpr const char* matmul_auto_float32 = "double_buffered";
inline constexpr const char* matmul_auto_float32_emulator = "vectorized";

}  // namespace lockstep::kernels
