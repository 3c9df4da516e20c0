// matmul's fused epilogue, cuBLASLt-style: what a kernel does to each
// accumulator as it stores it, so that act(alpha * (A @ B) + bias) + residual
// costs the one pass over C that the product makes anyway. The host fills it
// (src/tensor/matmul.cpp) and passes it by value as the kernel's last
// argument; kernels/matmul_epilogue.cuh applies it; the recipe rows say which
// kernels take it (matmul_recipe::fused_epilogue). Plain C++ (no standard
// headers): the host compiler, nvcc and NVRTC all read it.
#pragma once

namespace lockstep::kernels {

// matmul_epilogue::activation when there is none; otherwise a unary_op
// (lockstep/kernels/op_codes.h).
inline constexpr int matmul_no_activation = -1;

// out[row, col] = act(alpha * acc + bias[col]) + residual[row * n + col],
// computed in float and rounded once to C's dtype. bias and residual hold
// elements of C's dtype (float for the SIMT ladder, C's type for the
// tensor-core kernels) and are nullptr when absent. residual is packed m x n
// per product: product z of a batched kernel reads it z * m * n elements on,
// as it writes C.
struct matmul_epilogue {
  const void* bias = nullptr;
  const void* residual = nullptr;
  float alpha = 1.0f;
  int activation = matmul_no_activation;
};

}  // namespace lockstep::kernels
