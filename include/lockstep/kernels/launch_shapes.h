// The launch shapes the elementwise, reduction and grayscale families share,
// read by their kernels and by the tensor layer that launches them
// (src/tensor/builtin.cpp). Plain C++ for the host compiler, nvcc and NVRTC.
#pragma once

namespace lockstep::kernels {

// The widest access a thread makes: one 16-byte vector (kernels/vector16.cuh).
inline constexpr int vector_bytes = 16;

// Grid-stride kernels (elementwise *_strided, cast_strided, reduce_dim) over n
// outputs: enough blocks to fill a GPU, few enough that the emulator's
// per-block cost stays small; the loop covers the rest.
struct grid_stride_launch {
  static constexpr unsigned threads = 256, max_blocks = 4096;
};

// Kernels that give each thread one 16-byte vector (vectorized grayscale,
// map_contiguous and zip_contiguous): a thread per vector on a GPU
// (grid-strided loops over fewer blocks ran slower on the H100); the emulator
// pays per block, so there at most emulator_max_blocks walk the rest.
struct vector_launch {
  static constexpr unsigned threads = 256, emulator_max_blocks = 1024;
};

}  // namespace lockstep::kernels
