// Reductions along one dimension of a strided tensor (sum, max, min, prod,
// mean), minitorch's reduce: the output has the input's shape with the
// reduced dimension of extent 1; one thread per output element walks the
// reduced dimension, accumulating in a wider type (float for half types,
// double for float and double, int64 for integers).
//
// Variant 1: a thread per output. Block-cooperative and warp-shuffle
// reductions at bandwidth come in the speed issue.
#pragma once
#include "lockstep/cuda.h"
#include "lockstep/kernels/op_codes.h"
#include "strided.cuh"

namespace lockstep::kernels {

template <class T> struct accumulate_type { using type = long long; };
template <> struct accumulate_type<float> { using type = double; };
template <> struct accumulate_type<double> { using type = double; };
template <> struct accumulate_type<__half> { using type = float; };
template <> struct accumulate_type<__nv_bfloat16> { using type = float; };

template <class T>
__global__ void reduce_dim(T* out, strided_layout out_layout, const T* in, strided_layout in_layout, int dim, long long n_out, int op) {
  using A = typename accumulate_type<T>::type;
  const long long extent = in_layout.shape[dim], step = in_layout.strides[dim];
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n_out; i += (long long)gridDim.x * blockDim.x) {
    // out_layout has extent 1 at `dim`, so the ordinal walks the other
    // dimensions and lands on element 0 of the reduced one.
    const T* row = in + position_of(i, out_layout, in_layout);
    A acc = static_cast<A>(static_cast<typename compute_type<T>::type>(row[0]));
    for (long long j = 1; j < extent; ++j) {
      const A x = static_cast<A>(static_cast<typename compute_type<T>::type>(row[j * step]));
      switch (static_cast<reduce_op>(op)) {
        case reduce_op::sum:
        case reduce_op::mean: acc += x; break;
        case reduce_op::max: acc = x > acc ? x : acc; break;
        case reduce_op::min: acc = x < acc ? x : acc; break;
        case reduce_op::prod: acc *= x; break;
      }
    }
    if (static_cast<reduce_op>(op) == reduce_op::mean) acc = acc / static_cast<A>(extent);
    out[position_of(i, out_layout, out_layout)] = static_cast<T>(acc);
  }
}

}  // namespace lockstep::kernels
