// The grayscale family's launches (kernels/grayscale.cu), one row each: the
// launch name rgb_to_grayscale takes, its kernels and block shape. Read by
// the kernels, the tensor layer (src/tensor/ops.cpp) and the list of kernels
// the built-in modules instantiate. Plain C++ for the host compiler, nvcc and NVRTC.
#pragma once
#include "lockstep/kernels/launch_shapes.h"

namespace lockstep::kernels {

// How a launch covers the pixels, and so the kernel's arguments.
enum class grayscale_grid : int {
  vectors,  // (out, in, pixels per image, images): a thread per vector of pixels_per_thread, vector_launch
  rows,     // (out, in, pixels): 1-D blocks, a thread per pixel
  plane,    // (out, in, width, height): 2-D blocks over the image, blockIdx.z the image of a batch
};

struct grayscale_recipe {
  const char* launch;          // "vectorized", "1d", "2d"
  const char* kernel;          // one image (3, H, W) -> (H, W)
  const char* batched_kernel;  // a batch (B, 3, H, W) -> (B, H, W); nullptr: the launch takes no batch
  grayscale_grid grid;
  unsigned block_x, block_y;
  int pixels_per_thread;
};

// The default launch first.
inline constexpr grayscale_recipe grayscale_recipes[] = {
    {"vectorized", "rgb_to_grayscale_vectorized", "rgb_to_grayscale_vectorized", grayscale_grid::vectors, vector_launch::threads, 1, vector_bytes},
    {"1d", "rgb_to_grayscale_1d", nullptr, grayscale_grid::rows, 256, 1, 1},
    {"2d", "rgb_to_grayscale_2d", "rgb_to_grayscale_batched", grayscale_grid::plane, 16, 16, 1},
};

}  // namespace lockstep::kernels
