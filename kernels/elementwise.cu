// Elementwise kernels over strided tensors: map (one input) and zip (two
// inputs, already broadcast to the output's shape by the tensor layer), for
// every dtype, the operation chosen at run time. One thread per output
// element, grid-stride so any grid size covers any tensor.
//
// Variant 1 (this file): position from the ordinal by division per dimension;
// correct for any layout. Faster contiguous paths come in the speed issue.
#pragma once
#include <type_traits>

#include "lockstep/cuda.h"
#include "lockstep/kernels/op_codes.h"
#include "strided.cuh"

namespace lockstep::kernels {

template <class C>
__host__ __device__ inline C apply_unary(unary_op op, C x) {
  switch (op) {
    case unary_op::copy: return x;
    case unary_op::neg: return -x;
    case unary_op::abs: return x < C(0) ? -x : x;
    case unary_op::exp: return static_cast<C>(exp(static_cast<double>(x)));
    case unary_op::log: return static_cast<C>(log(static_cast<double>(x)));
    case unary_op::sqrt: return static_cast<C>(sqrt(static_cast<double>(x)));
    case unary_op::relu: return x > C(0) ? x : C(0);
    case unary_op::sigmoid: return static_cast<C>(1.0 / (1.0 + exp(-static_cast<double>(x))));
    case unary_op::tanh: return static_cast<C>(tanh(static_cast<double>(x)));
    case unary_op::square: return x * x;
    case unary_op::reciprocal: return static_cast<C>(1.0 / static_cast<double>(x));
  }
  return x;
}

// Integer division by zero is undefined in C++ (the emulator's CPU traps,
// killing the process; a GPU returns garbage): like NumPy's, it gives 0.
// Floating-point division follows IEEE.
// Integer division by zero gives 0 (NumPy's answer) and the one overflowing
// quotient, MIN / -1, wraps to MIN as the GPU's integer division does,
// instead of trapping the host; floating division is IEEE.
template <class C>
__host__ __device__ inline C divide(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    if (b == C(0)) return C(0);
    if (std::is_signed_v<C> && b == C(-1)) return static_cast<C>(std::make_unsigned_t<C>(0) - static_cast<std::make_unsigned_t<C>>(a));
  }
  return a / b;
}

// Integer powers by repeated squaring, exact where pow() in double could land
// one ulp under an integer and truncate; negative exponents give 0 unless the
// base is 1 or -1 (NumPy raises; a kernel cannot).
template <class C>
__host__ __device__ inline C power(C base, C exponent) {
  if constexpr (std::is_integral_v<C>) {
    if (exponent < C(0)) return base == C(1) ? C(1) : (base == C(-1) ? ((exponent % 2) ? C(-1) : C(1)) : C(0));
    C result = 1;
    for (; exponent > C(0); exponent /= 2, base *= base)
      if (exponent % 2) result *= base;
    return result;
  } else {
    return static_cast<C>(pow(static_cast<double>(base), static_cast<double>(exponent)));
  }
}

template <class C>
__host__ __device__ inline C apply_binary(binary_op op, C a, C b) {
  switch (op) {
    case binary_op::add: return a + b;
    case binary_op::sub: return a - b;
    case binary_op::mul: return a * b;
    case binary_op::div: return divide(a, b);
    case binary_op::maximum: return a > b ? a : b;
    case binary_op::minimum: return a < b ? a : b;
    case binary_op::pow: return power(a, b);
    case binary_op::eq: return a == b ? C(1) : C(0);
    case binary_op::lt: return a < b ? C(1) : C(0);
    case binary_op::gt: return a > b ? C(1) : C(0);
  }
  return a;
}

template <class T>
__global__ void map_strided(T* out, strided_layout out_layout, const T* in, strided_layout in_layout, long long n, int op) {
  using C = typename compute_type<T>::type;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    const C x = static_cast<C>(in[position_of(i, out_layout, in_layout)]);
    out[position_of(i, out_layout, out_layout)] = static_cast<T>(apply_unary(static_cast<unary_op>(op), x));
  }
}

template <class T>
__global__ void zip_strided(T* out, strided_layout out_layout, const T* a, strided_layout a_layout, const T* b,
                            strided_layout b_layout, long long n, int op) {
  using C = typename compute_type<T>::type;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    const C x = static_cast<C>(a[position_of(i, out_layout, a_layout)]);
    const C y = static_cast<C>(b[position_of(i, out_layout, b_layout)]);
    out[position_of(i, out_layout, out_layout)] = static_cast<T>(apply_binary(static_cast<binary_op>(op), x, y));
  }
}

// Casts between dtypes (the copy behind Tensor.to(dtype)).
template <class From, class To>
__global__ void cast_strided(To* out, strided_layout out_layout, const From* in, strided_layout in_layout, long long n) {
  using C = typename compute_type<From>::type;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    out[position_of(i, out_layout, out_layout)] = static_cast<To>(static_cast<C>(in[position_of(i, out_layout, in_layout)]));
}

// A user's own function object, for C++ callers: map with any callable that
// the compiler can run on the device (a __device__ functor, or an extended
// __device__ lambda under nvcc).
template <class F, class T, class U>
__global__ void map_functor(U* out, strided_layout out_layout, const T* in, strided_layout in_layout, long long n, F f) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    out[position_of(i, out_layout, out_layout)] = f(in[position_of(i, out_layout, in_layout)]);
}

}  // namespace lockstep::kernels
