// RGB -> grayscale, the lectures' first kernel.
//
// Input is channels-first uint8 (3 planes of height*width), output one plane;
// weights 0.2989 / 0.5870 / 0.1140, truncated to uint8 like the lecture's.
#pragma once
#include "lockstep/cuda.h"

namespace lockstep::kernels {

// 1-D launch: one thread per pixel, pixels numbered row-major.
__global__ void rgb_to_grayscale_1d(unsigned char* out, const unsigned char* in, int pixels) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < pixels) out[i] = static_cast<unsigned char>(0.2989f * in[i] + 0.5870f * in[i + pixels] + 0.1140f * in[i + 2 * pixels]);
}

// 2-D launch: x over columns, y over rows, as the image is laid out.
__global__ void rgb_to_grayscale_2d(unsigned char* out, const unsigned char* in, int width, int height) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (col < width && row < height) {
    int i = row * width + col, pixels = width * height;
    out[i] = static_cast<unsigned char>(0.2989f * in[i] + 0.5870f * in[i + pixels] + 0.1140f * in[i + 2 * pixels]);
  }
}

// Batched: images (batch, 3, height, width) -> (batch, height, width), one
// image per blockIdx.z, 2-D blocks over each image as above.
__global__ void rgb_to_grayscale_batched(unsigned char* out, const unsigned char* in, int width, int height) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (col < width && row < height) {
    const long long pixels = static_cast<long long>(width) * height;
    const unsigned char* image = in + blockIdx.z * 3 * pixels;
    const long long i = static_cast<long long>(row) * width + col;
    out[blockIdx.z * pixels + i] = static_cast<unsigned char>(0.2989f * image[i] + 0.5870f * image[i + pixels] + 0.1140f * image[i + 2 * pixels]);
  }
}

}  // namespace lockstep::kernels
