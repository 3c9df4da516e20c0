// How a kernel sees a strided tensor: its shape and strides in elements, the
// same number of dimensions as the output it is read for. A broadcast
// dimension has stride 0, so broadcasting costs the kernels nothing: the
// tensor layer expands every input to the output's shape before launching
// (minitorch's broadcast_index, done once per launch instead of per element).
#pragma once
#include "lockstep/cuda.h"
#include "lockstep/kernels/strided_layout.h"

namespace lockstep::kernels {

// The memory position (in elements) of the element at row-major `ordinal` of
// `shape` in a layout over that shape: minitorch's to_index followed by
// index_to_position, fused.
__host__ __device__ inline long long position_of(long long ordinal, const strided_layout& shape, const strided_layout& layout) {
  long long position = 0;
  for (int d = shape.ndim - 1; d >= 0; --d) {
    const long long extent = shape.shape[d];
    position += (ordinal % extent) * layout.strides[d];
    ordinal /= extent;
  }
  return position;
}

// The arithmetic type for an element type: half types compute in float, bool
// in int (so bool + bool is 2, stored as true, as PyTorch's add of bools).
template <class T>
struct compute_type {
  using type = T;
};
template <>
struct compute_type<__half> {
  using type = float;
};
template <>
struct compute_type<__nv_bfloat16> {
  using type = float;
};
template <>
struct compute_type<bool> {
  using type = int;
};

}  // namespace lockstep::kernels
