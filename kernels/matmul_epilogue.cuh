// matmul's fused epilogue (lockstep/kernels/matmul_epilogue.h) as the kernels
// of matmul.cu and matmul_tensor_core.cu apply it as they store C.
//
// The unary switch holds every op's math in double, and the kernels hold
// their accumulators in registers, in unrolled code: inlined into every
// unrolled store, the switch came to 1.5 MB of code per kernel (15 times the
// rest; nvcc 13, sm_90a). So double_buffered and wmma apply the epilogue in a
// loop over the block's tile of C that is not unrolled (LOCKSTEP_EPILOGUE_LOOP:
// the switch inlined once), wmma on its staging tile in shared memory,
// double_buffered on the tile it has just stored (matmul.cu says why), except
// relu(alpha * acc + bias), which double_buffered folds into its stores
// (epilogue_foldable: no switch, one bias load per column); wgmma,
// whose shared memory already holds the next tile's operands, applies it to
// its registers with relu inlined and any other activation a call to the one
// out-of-line copy of the switch (activation_site). Without an epilogue each
// kernel stores C as it did before it took one: a branch on epilogue_active,
// the same in every thread, picks the path.
// H100 4096^3 (cudaEvent timing, 2026-11-24), time with bias and relu / with
// alpha, bias, gelu and residual, against none: double_buffered +4% / +14%
// (bias and relu folded into the stores, 2026-11-25: +0.1%);
// wmma float32 +2% / +7%, bfloat16 +8% / +29%; wgmma float32 +0% / +63%,
// bfloat16 +7% / +148% (gelu's erfc in double, by a call per element; with
// alpha 1, wgmma starts its accumulators at the bias, 2026-11-25: bfloat16
// bias and relu +1.5%). Times
// without an epilogue: those of the kernels before they took one (within 1%).
#pragma once
#include "lockstep/cuda.h"
#include "lockstep/kernels/matmul_epilogue.h"
#include "unary_ops.cuh"

// A loop over elements through the epilogue: unrolled 4 times, so that the
// loads of 4 elements are in flight together; not more, as each copy holds
// the switch (activation_site::rolled).
#if defined(__CUDACC__)
#define LOCKSTEP_EPILOGUE_LOOP _Pragma("unroll 4")
#else
#define LOCKSTEP_EPILOGUE_LOOP
#endif

namespace lockstep::kernels {

// Whether the epilogue changes anything.
__host__ __device__ inline bool epilogue_active(const matmul_epilogue& e) {
  return e.bias || e.residual || e.alpha != 1.0f || e.activation != matmul_no_activation;
}

// Whether a kernel may fold the epilogue into its stores of float32
// accumulators: no residual, and relu or no activation (act(alpha * acc + bias)
// with the activation inlined; double_buffered does).
__host__ __device__ inline bool epilogue_foldable(const matmul_epilogue& e) {
  return !e.residual && (e.activation == matmul_no_activation || e.activation == static_cast<int>(unary_op::relu));
}

// bias[col] and residual[row * n + col] as float, 0 where absent (bias and
// residual hold C's element type Out). Plain loads: __ldg of a bfloat16 is
// inline assembly, which nvcc keeps in order with the stores to C (wgmma's
// bfloat16 product with bias and relu took 0.34 ms with it, 0.25 without; 0.20
// without an epilogue). Callers ask only for elements inside C (row < m, col < n).
template <class Out>
__device__ __forceinline__ float epilogue_bias(const matmul_epilogue& e, int col) {
  return e.bias ? static_cast<float>(static_cast<const Out*>(e.bias)[col]) : 0.0f;
}
template <class Out>
__device__ __forceinline__ float epilogue_residual(const matmul_epilogue& e, int row, int col, int n) {
  return e.residual ? static_cast<float>(static_cast<const Out*>(e.residual)[static_cast<long long>(row) * n + col]) : 0.0f;
}

// The switch out of line, once per module: activation_site::unrolled calls it.
__device__ __noinline__ inline float activation_out_of_line(int op, float x) { return apply_unary(static_cast<unary_op>(op), x); }

// Where a kernel runs the activation, which decides how:
// rolled: in a loop that is not unrolled, so the switch is inlined there, once;
// unrolled: in code unrolled over many elements, so relu is inlined (a
//   constant op: the switch folds to its row) and any other activation is a
//   call to the one out-of-line copy of the switch;
// relu_or_none: the same, where the kernel has checked that the activation
//   is relu or none, so the code holds no call (call sites, even untaken,
//   made wgmma's bfloat16 product with bias and relu 0.25 ms, not 0.21).
enum class activation_site { rolled, unrolled, relu_or_none };

// act(alpha * acc + bias) + residual, with the element's bias and residual
// already loaded.
template <activation_site site>
__device__ __forceinline__ float epilogue_math(const matmul_epilogue& e, float acc, float bias, float residual) {
  float x = e.alpha * acc + bias;
  if constexpr (site == activation_site::rolled) {
    if (e.activation != matmul_no_activation) x = apply_unary(static_cast<unary_op>(e.activation), x);
  } else {
    if (e.activation == static_cast<int>(unary_op::relu))
      x = apply_unary(unary_op::relu, x);
    else if (site == activation_site::unrolled && e.activation != matmul_no_activation)
      x = activation_out_of_line(e.activation, x);
  }
  return x + residual;
}

// Element (row, col) of C, of n columns, from its accumulator, in a loop that
// is not unrolled.
template <class Out>
__device__ __forceinline__ float apply_epilogue(const matmul_epilogue& e, float acc, int row, int col, int n) {
  return epilogue_math<activation_site::rolled>(e, acc, epilogue_bias<Out>(e, col), epilogue_residual<Out>(e, row, col, n));
}

// The epilogue of the product whose C starts `offset` elements into the
// batch's: its residual starts as far into the batch's residual.
template <class Out>
__device__ __forceinline__ matmul_epilogue epilogue_at(matmul_epilogue e, long long offset) {
  if (e.residual) e.residual = static_cast<const Out*>(e.residual) + offset;
  return e;
}

}  // namespace lockstep::kernels
