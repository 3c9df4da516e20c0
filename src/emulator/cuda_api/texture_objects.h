// What runtime_textures.cpp (arrays, copies, object creation) and
// texture_sampling.cpp (what kernels fetch) share: a CUDA array's storage and
// the immutable descriptor a texture or surface object's handle points to.
#pragma once
#include <cstddef>
#include <cstdint>

#include "lockstep/emu/runtime_textures.h"

// A CUDA array: elements stored densely, row after row, slice after slice
// (a layer, a cubemap face, or a z), each dimension at least 1.
struct cudaArray {
  cudaChannelFormatDesc desc{};
  cudaExtent extent{};  // as allocated: 0 for a dimension the array lacks
  unsigned flags = 0;
  std::size_t element_bytes = 0;
  std::size_t width = 1, height = 1, depth = 1;
  unsigned char* data = nullptr;
  std::size_t row_bytes() const { return width * element_bytes; }
  std::size_t slice_bytes() const { return row_bytes() * height; }
};

namespace lockstep::emu::textures {

// A channel format as the sampler reads it.
struct channel_format {
  enum class kind { signed_int, unsigned_int, floating } k = kind::floating;
  int channels = 0;         // 1, 2 or 4
  int bits = 0;             // per channel: 8, 16 or 32
  bool normalized = false;  // one of the *Normalized* kinds: read as floats in [0, 1] or [-1, 1]
  std::size_t element_bytes = 0;
};
// The format of `desc`, or why it is not one (cudaErrorInvalidChannelDescriptor).
cudaError_t format_of(const cudaChannelFormatDesc& desc, channel_format& format);

struct object {
  bool surface = false;
  cudaResourceDesc resource{};
  cudaTextureDesc texture{};
  channel_format format;
  const unsigned char* base = nullptr;
  std::size_t width = 1, height = 1, depth = 1;  // elements, rows, slices
  std::size_t row_pitch = 0, slice_pitch = 0;    // bytes
  bool linear = false;                           // a linear resource: tex1Dfetch, no filtering or address modes
  bool layered = false, cubemap = false;
  bool returns_float = false;  // float channels, or a normalized-float read of integers
  bool normalize = false;      // integers become floats in [0, 1] or [-1, 1]
};

}  // namespace lockstep::emu::textures
