// A strided tensor as kernels see it: shape and strides in elements, with as
// many dimensions as the output it is read for (a broadcast dimension has
// stride 0). Plain C++ shared by the kernels and the tensor layer, which
// passes it to kernels by value.
#pragma once

namespace lockstep::kernels {

inline constexpr int max_dims = 8;

struct strided_layout {
  int ndim;
  long long shape[max_dims];
  long long strides[max_dims];
};

}  // namespace lockstep::kernels
