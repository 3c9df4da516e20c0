// The unary ops' switch, one case per row of LOCKSTEP_UNARY_OPS
// (lockstep/kernels/op_codes.h): map's kernels (elementwise.cu) and matmul's
// fused epilogue (matmul_epilogue.cuh) both apply an op through it.
#pragma once
#include "lockstep/cuda.h"
#include "lockstep/kernels/op_codes.h"

namespace lockstep::kernels {

// GELU, x * Phi(x) with Phi the standard normal's CDF: PyTorch's default
// form 0.5 x (1 + erf(x / sqrt(2))), and its approximate="tanh" form
// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))). Written as the same
// functions without the sums 1 + erf and 1 + tanh, which cancel to nothing
// for large negative x (1 + erf(z) = erfc(-z), 1 + tanh(y) = 2 / (1 + e^-2y)),
// so results keep their relative precision in that tail too.
__host__ __device__ inline double gelu_erf_form(double x) { return 0.5 * x * erfc(-x * 0.70710678118654752440); }
__host__ __device__ inline double gelu_tanh_form(double x) {
  const double two_sqrt_2_over_pi = 1.59576912160573071176;
  return x / (1.0 + exp(-two_sqrt_2_over_pi * (x + 0.044715 * x * x * x)));
}

template <class C>
__host__ __device__ inline C apply_unary(unary_op op, C x) {
  switch (op) {
#define LOCKSTEP_UNARY_CASE(name, floating_only, ...) \
  case unary_op::name:                                \
    return __VA_ARGS__;
    LOCKSTEP_UNARY_OPS(LOCKSTEP_UNARY_CASE)
#undef LOCKSTEP_UNARY_CASE
  }
  return x;
}

}  // namespace lockstep::kernels
