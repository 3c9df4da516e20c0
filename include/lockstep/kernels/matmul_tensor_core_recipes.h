// The tensor-core rungs of matmul (kernels/matmul_tensor_core.cu), one row
// each, with the tile shapes their kernels are built from; the float32 SIMT
// ladder and the row's fields are in matmul_recipes.h. Plain C++20 for the host
// compiler, nvcc and NVRTC.
#pragma once
#include "lockstep/kernels/matmul_recipes.h"

namespace lockstep::kernels {

// wmma: block tile 128 x tile_n, eight warps (2 x 4) of 64 x warp_n, k tiles
// of 128-byte rows in a ring of `stages` shared buffers, rows padded by 16
// bytes; the same shared memory then stages C as floats.
template <int tile_n_, int warp_n_, int stages_, int min_blocks_>
struct wmma_shape {
  static constexpr int tile_m = 128, tile_n = tile_n_, row_bytes = 128, pitch_bytes = row_bytes + 16, stages = stages_, threads = 256;
  static constexpr int warp_m = 64, warp_n = warp_n_, min_blocks = min_blocks_;
  static constexpr int staging_pitch = tile_n + 4;  // floats
  static constexpr int operand_bytes = stages * (tile_m + tile_n) * pitch_bytes;
  static constexpr int staging_bytes = tile_m * staging_pitch * 4;
  static constexpr int shared_bytes = operand_bytes > staging_bytes ? operand_bytes : staging_bytes;
};
// 72 KiB of dynamic shared memory, two blocks of 8 warps per SM on Hopper.
using matmul_wmma_shape = wmma_shape<128, 32, 2, 2>;

// wgmma (Hopper): a producer warpgroup and `consumers` warpgroups, each
// consumer a 64 x tile_n half of the 128 x tile_n tile; k tiles of 128-byte
// rows in a ring of `stages` buffers.
struct wgmma_shape {
  static constexpr int tile_m = 128, tile_n = 256, row_bytes = 128, stages = 4, consumers = 2, threads = 128 * (1 + consumers);
  // A tile's bias, as each consumer stages it for the next tile: two slots of tile_n floats.
  static constexpr int bias_bytes = consumers * 2 * tile_n * 4;
  // The tiles, a full and an empty barrier (8 bytes) per stage, the bias, and
  // slack to start the tiles on a 1024-byte boundary (the 128-byte swizzle's period).
  static constexpr int shared_bytes = stages * (tile_m + tile_n) * row_bytes + 2 * stages * 8 + bias_bytes + 1024;
};

// Simplest first.
inline constexpr matmul_recipe tensor_core_matmul_recipes[] = {
    {.algo = "wmma",
     .float32_kernel = "matmul_wmma<float, float>",
     .bfloat16_kernel = "matmul_wmma<__nv_bfloat16, __nv_bfloat16>",
     .operands = matmul_operands::b_transposed,
     .block_x = matmul_wmma_shape::threads,
     .tile_m = matmul_wmma_shape::tile_m,
     .tile_n = matmul_wmma_shape::tile_n,
     .tile_k_bytes = matmul_wmma_shape::row_bytes,
     .shared_bytes = matmul_wmma_shape::shared_bytes,
     .tensor_cores = true,
     .fused_epilogue = true},
    {.algo = "wgmma",
     .float32_kernel = "matmul_wgmma<float>",
     .bfloat16_kernel = "matmul_wgmma<__nv_bfloat16>",
     .operands = matmul_operands::tma_b_transposed,
     .block_x = wgmma_shape::threads,
     .tile_m = wgmma_shape::tile_m,
     .tile_n = wgmma_shape::tile_n,
     .tile_k_bytes = wgmma_shape::row_bytes,
     .shared_bytes = wgmma_shape::shared_bytes,
     .tensor_cores = true,
     .fused_epilogue = true,
     .gpu_only = true,
     .arch = "sm_90"},
};

// What algo "auto" picks for bfloat16 inputs: the first of these the device runs.
inline constexpr const char* matmul_auto_bfloat16[] = {"wgmma", "wmma"};

}  // namespace lockstep::kernels
