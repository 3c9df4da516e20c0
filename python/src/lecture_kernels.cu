// Launches the lecture kernels with the block shapes the lectures use; built
// for the emulator only (the pointers are host memory, see lecture_kernels.h).
#include "lecture_kernels.h"

#include "grayscale.cu"
#include "matmul.cu"

namespace lockstep::python {
namespace {
constexpr int tile = 16;  // the lectures' block edge for the 2-D kernels

unsigned blocks_for(int n, int per_block) { return static_cast<unsigned>((n + per_block - 1) / per_block); }
dim3 tiles_over(int rows, int cols) { return dim3(blocks_for(cols, tile), blocks_for(rows, tile)); }
}  // namespace

void rgb_to_grayscale_1d(unsigned char* gray, const unsigned char* image, int width, int height) {
  const int pixels = width * height, threads = 256;
  lockstep::launch(kernels::rgb_to_grayscale_1d, blocks_for(pixels, threads), threads)(gray, image, pixels);
}

void rgb_to_grayscale_2d(unsigned char* gray, const unsigned char* image, int width, int height) {
  lockstep::launch(kernels::rgb_to_grayscale_2d, tiles_over(height, width), dim3(tile, tile))(gray, image, width, height);
}

void matmul_naive(const float* a, const float* b, float* c, int m, int n, int k) {
  lockstep::launch(kernels::matmul_naive, tiles_over(m, n), dim3(tile, tile))(a, b, c, m, n, k);
}

void matmul_tiled_static(const float* a, const float* b, float* c, int m, int n, int k) {
  lockstep::launch(kernels::matmul_tiled_static<tile>, tiles_over(m, n), dim3(tile, tile))(a, b, c, m, n, k);
}

void matmul_tiled_dynamic(const float* a, const float* b, float* c, int m, int n, int k) {
  const std::size_t shared_bytes = 2 * tile * tile * sizeof(float);  // one tile of A and one of B
  lockstep::launch(kernels::matmul_tiled_dynamic, tiles_over(m, n), dim3(tile, tile), shared_bytes)(a, b, c, m, n, k);
}

}  // namespace lockstep::python
