// The reduction family's kernels and launch shapes (kernels/reduce.cu), read
// by the kernels and by the tensor layer that launches them (src/tensor/ops.cpp).
#pragma once
#include "lockstep/kernels/launch_shapes.h"

namespace lockstep::kernels {

// One thread per output walks the reduced dimension: grid_stride_launch.
inline constexpr const char* reduce_dim_kernel = "reduce_dim";
// argmax/argmin along a dim, the same way, to int64 indices.
inline constexpr const char* arg_reduce_dim_kernel = "arg_reduce_dim";

// Every element to one value, in two launches: reduce_all_blocks leaves one
// partial per block, reduce_all_finish (one block) folds them.
inline constexpr const char* reduce_all_blocks_kernel = "reduce_all_blocks";
inline constexpr const char* reduce_all_finish_kernel = "reduce_all_finish";
// A block of `threads` (a multiple of 32) loads `unroll` vectors per thread
// per iteration; at most max_blocks blocks: all resident at once on an H100
// (132 SMs x 8). The emulator runs these blocks on fibers (warp shuffles),
// a switch per thread and shuffle, so there at most emulator_max_blocks,
// each thread walking more elements: 4M floats summed in 59 ms with 1024
// blocks, 6.1 with 64, on one core (bench/RESULTS.md).
struct reduce_all_launch {
  static constexpr unsigned threads = 256, max_blocks = 1024, emulator_max_blocks = 64;
  static constexpr int unroll = 4;
};

// name<T> for every dtype T.
inline constexpr const char* reduce_kernels_per_dtype[] = {reduce_dim_kernel, arg_reduce_dim_kernel, reduce_all_blocks_kernel,
                                                           reduce_all_finish_kernel};

}  // namespace lockstep::kernels
