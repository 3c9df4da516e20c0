// RGB -> grayscale, the lectures' first kernel.
//
// Input is channels-first uint8 (3 planes of height*width), output one plane;
// weights 0.2989 / 0.5870 / 0.1140, truncated to uint8 like the lecture's.
// Variants: 1-D and 2-D launches (the lecture's), batched, and vectorized
// (16 pixels per thread at copy bandwidth).
#pragma once
#include "lockstep/cuda.h"
#include "lockstep/kernels/grayscale_recipes.h"

namespace lockstep::kernels {

// One pixel: (0.2989 r + 0.5870 g) + 0.1140 b in float, truncated. The
// explicit round-to-nearest multiplies and adds keep nvcc from fusing them
// into FMAs, so every kernel here, on the GPU and on the emulator, gives the
// same bits as NumPy's float32 arithmetic on the same expression.
__device__ inline unsigned char grey_level(unsigned r, unsigned g, unsigned b) {
  const float sum = __fadd_rn(__fadd_rn(__fmul_rn(0.2989f, static_cast<float>(r)), __fmul_rn(0.5870f, static_cast<float>(g))),
                              __fmul_rn(0.1140f, static_cast<float>(b)));
  return static_cast<unsigned char>(sum);
}

// 1-D launch: one thread per pixel, pixels numbered row-major.
__global__ void rgb_to_grayscale_1d(unsigned char* out, const unsigned char* in, int pixels) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < pixels) out[i] = grey_level(in[i], in[i + pixels], in[i + 2 * pixels]);
}

// 2-D launch: x over columns, y over rows, as the image is laid out.
__global__ void rgb_to_grayscale_2d(unsigned char* out, const unsigned char* in, int width, int height) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (col < width && row < height) {
    int i = row * width + col, pixels = width * height;
    out[i] = grey_level(in[i], in[i + pixels], in[i + 2 * pixels]);
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
    out[blockIdx.z * pixels + i] = grey_level(image[i], image[i + pixels], image[i + 2 * pixels]);
  }
}

// Vectorized: the 1-D and 2-D kernels move one byte per load and store, so a
// warp asks for 32 bytes per instruction and the image runs at well under
// half of copy bandwidth (H100 8192x8192, 2-D launch: 38% of copy). Here each
// thread converts 16 consecutive pixels with one 16-byte load per plane and
// one 16-byte store, over the chunks of all `images` images (a batch is one
// long run of chunks). The per-pixel arithmetic is grey_level, the same as
// the other kernels', so the result is bit-identical to theirs.
// Launched with a thread per chunk: on the H100 that ran at 100% of copy
// bandwidth, while a grid-strided loop over 132 x 8 blocks reached 88% with
// one chunk per iteration and 88-93% with 2 or 4 (cudaEvent timing, 8192x8192,
// .device probe of 2026-11-22). The loop stays for grids capped smaller.
// When a plane is not a multiple of 16 pixels the G and B planes are not
// 16-byte aligned: the kernel then uses 4-byte (4 pixels) or 1-byte accesses,
// whichever the plane size and the pointers allow (and the same for an input
// that starts off a 16-byte boundary).
// Launch: 1-D, any grid and block.
// H100 8192x8192 (lockstep bench, 2026-11-22): 92 us, 2920 GB/s, 1.00 of the
// device copy's 2923 GB/s (the 2-D launch: 0.38).
template <int Bytes>
struct grayscale_word;
template <>
struct grayscale_word<16> {
  using type = uint4;
};
static_assert(vector_bytes == 16, "the vectorized launch's word is a uint4");
template <>
struct grayscale_word<4> {
  using type = unsigned int;
};
template <>
struct grayscale_word<1> {
  using type = unsigned char;
};

// Byte k of a word of 1, 4 or 16 bytes (little-endian, as the GPU and x86 are).
__device__ inline unsigned byte_of(unsigned char w, int) { return w; }
__device__ inline unsigned byte_of(unsigned int w, int k) { return (w >> (8 * k)) & 0xffu; }
__device__ inline unsigned byte_of(uint4 w, int k) {
  const unsigned word = k < 4 ? w.x : k < 8 ? w.y : k < 12 ? w.z : w.w;
  return (word >> (8 * (k % 4))) & 0xffu;
}
__device__ inline void set_byte(unsigned char& w, int, unsigned v) { w = static_cast<unsigned char>(v); }
__device__ inline void set_byte(unsigned int& w, int k, unsigned v) { w |= v << (8 * k); }
__device__ inline void set_byte(uint4& w, int k, unsigned v) {
  unsigned& word = k < 4 ? w.x : k < 8 ? w.y : k < 12 ? w.z : w.w;
  word |= v << (8 * (k % 4));
}

// Chunks of Bytes pixels: chunk c covers pixels [c * Bytes, (c + 1) * Bytes)
// of the batch, all of one image (pixels % Bytes == 0).
template <int Bytes>
__device__ void rgb_to_grayscale_chunks(unsigned char* __restrict__ out, const unsigned char* __restrict__ in, long long pixels, long long chunks) {
  using W = typename grayscale_word<Bytes>::type;
  const long long chunks_per_image = pixels / Bytes;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  auto convert = [&](long long c) {
    const long long image = chunks_per_image == chunks ? 0 : c / chunks_per_image;  // one image: no division
    const W* r = reinterpret_cast<const W*>(in + 2 * image * pixels) + c;           // image's R plane, pixels c * Bytes on
    const W red = r[0], green = r[chunks_per_image], blue = r[2 * chunks_per_image];
    W grey{};
#pragma unroll
    for (int k = 0; k < Bytes; ++k) set_byte(grey, k, grey_level(byte_of(red, k), byte_of(green, k), byte_of(blue, k)));
    reinterpret_cast<W*>(out)[c] = grey;
  };
  for (long long c = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; c < chunks; c += stride) convert(c);
}

// images (images, 3, pixels) -> (images, pixels), channels-first uint8.
__global__ void rgb_to_grayscale_vectorized(unsigned char* out, const unsigned char* in, long long pixels, int images) {
  const unsigned long long alignment = reinterpret_cast<unsigned long long>(in) | reinterpret_cast<unsigned long long>(out);
  const long long total = pixels * images;
  if (pixels % vector_bytes == 0 && alignment % vector_bytes == 0)
    rgb_to_grayscale_chunks<vector_bytes>(out, in, pixels, total / vector_bytes);
  else if (pixels % 4 == 0 && alignment % 4 == 0)
    rgb_to_grayscale_chunks<4>(out, in, pixels, total / 4);
  else
    rgb_to_grayscale_chunks<1>(out, in, pixels, total);
}

}  // namespace lockstep::kernels
