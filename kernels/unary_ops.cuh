// The unary ops' switch, one case per row of LOCKSTEP_UNARY_OPS
// (lockstep/kernels/op_codes.h): map's kernels (elementwise.cu) and matmul's
// fused epilogue (matmul_epilogue.cuh) both apply an op through it.
#pragma once
#include "lockstep/cuda.h"
#include "lockstep/kernels/op_codes.h"
#include "lockstep/kernels/op_functions.h"

namespace lockstep::kernels {

// The op's function (op_functions.h) in the compute type C, except that the
// floating_only ops compute in double, their result rounded once to C.
template <class C>
__host__ __device__ inline C apply_unary(unary_op op, C x) {
  switch (op) {
#define LOCKSTEP_UNARY_CASE(name, floating_only, ...)                      \
  case unary_op::name:                                                     \
    if constexpr (floating_only)                                           \
      return static_cast<C>(unary_##name<double>(static_cast<double>(x))); \
    else                                                                   \
      return unary_##name<C>(x);
    LOCKSTEP_UNARY_OPS(LOCKSTEP_UNARY_CASE)
#undef LOCKSTEP_UNARY_CASE
  }
  return x;
}

}  // namespace lockstep::kernels
