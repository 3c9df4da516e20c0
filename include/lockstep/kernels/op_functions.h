// The function of each unary and binary op of lockstep/kernels/op_codes.h,
// generated from its row: unary_<name>(x) and binary_<name>(a, b), templates
// over the type M they compute in. The eager kernels (kernels/unary_ops.cuh,
// kernels/elementwise.cu), matmul's fused epilogue and @lockstep.fuse's
// generated kernels all call these, so an op's formula is written once; each
// caller picks M (the eager kernels: double for the rows that say so, fusion:
// the dtype's compute type). Plain CUDA C++ for the host compiler, nvcc and
// NVRTC.
#pragma once

#include "lockstep/cuda.h"
#include "lockstep/kernels/op_codes.h"
#include "lockstep/python_arithmetic.h"

namespace lockstep::kernels {

// GELU, x * Phi(x) with Phi the standard normal's CDF: PyTorch's default
// form 0.5 x (1 + erf(x / sqrt(2))), and its approximate="tanh" form
// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))). Written as the same
// functions without the sums 1 + erf and 1 + tanh, which cancel to nothing
// for large negative x (1 + erf(z) = erfc(-z), 1 + tanh(y) = 2 / (1 + e^-2y)),
// so results keep their relative precision in that tail too.
template <class M>
__host__ __device__ inline M gelu_erf_form(M x) {
  return M(0.5) * x * erfc(-x * M(0.70710678118654752440));
}
template <class M>
__host__ __device__ inline M gelu_tanh_form(M x) {
  const M two_sqrt_2_over_pi = M(1.59576912160573071176);
  return x / (M(1) + exp(-two_sqrt_2_over_pi * (x + M(0.044715) * x * x * x)));
}

// NaN wins, as in PyTorch's maximum and minimum.
template <class M>
__host__ __device__ inline M maximum(M a, M b) {
  if constexpr (!arithmetic::is_integer<M>())
    if (a != a || b != b) return a != a ? a : b;
  return a > b ? a : b;
}
template <class M>
__host__ __device__ inline M minimum(M a, M b) {
  if constexpr (!arithmetic::is_integer<M>())
    if (a != a || b != b) return a != a ? a : b;
  return a < b ? a : b;
}
// and (0), or (1), xor (2); the tensor layer and fusion refuse floating-point operands.
template <class M>
__host__ __device__ inline M bitwise(M a, M b, int which) {
  if constexpr (arithmetic::is_integer<M>()) return which == 0 ? M(a & b) : which == 1 ? M(a | b) : M(a ^ b);
  return a;
}

#define LOCKSTEP_UNARY_FUNCTION(name, floating_only, ...) \
  template <class M>                                      \
  __host__ __device__ inline M unary_##name(M x) {        \
    return static_cast<M>(__VA_ARGS__);                   \
  }
LOCKSTEP_UNARY_OPS(LOCKSTEP_UNARY_FUNCTION)
#undef LOCKSTEP_UNARY_FUNCTION

#define LOCKSTEP_BINARY_FUNCTION(name, gives_bool, integers_only, in_double, ...) \
  template <class M>                                                              \
  __host__ __device__ inline M binary_##name(M a, M b) {                          \
    return static_cast<M>(__VA_ARGS__);                                           \
  }
LOCKSTEP_BINARY_OPS(LOCKSTEP_BINARY_FUNCTION)
#undef LOCKSTEP_BINARY_FUNCTION

}  // namespace lockstep::kernels
