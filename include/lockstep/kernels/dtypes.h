// The element types, listed once. The tensor layer's dtype enum and its table
// (lockstep/tensor.h, src/tensor/dtype.cpp), the kernels' accumulate types
// (kernels/reduce.cu) and the per-dtype kernels the built-in modules
// instantiate (lockstep/kernels/builtin_kernel_names.h) are generated from it.
// Preprocessor text only, so the host compiler, nvcc and NVRTC all read it.
#pragma once

// X(name, text, kernel_type, size, scalar, floating, accumulate), one row per dtype:
//   name        lockstep::dtype::name
//   text        the name Python and error messages use (PyTorch's)
//   kernel_type the C++ type the kernels are instantiated with
//   size        bytes per element
//   scalar      its lockstep::jit::scalar_type (what kernel signatures say)
//   floating    whether it is a floating-point type
//   accumulate  the dtype reductions accumulate in (float for the half types,
//               double for float and double, int64 for integers)
#define LOCKSTEP_DTYPES(X)                                           \
  X(boolean, "bool", bool, 1, boolean, false, int64)                 \
  X(uint8, "uint8", unsigned char, 1, uint8, false, int64)           \
  X(int32, "int32", int, 4, int32, false, int64)                     \
  X(int64, "int64", long long, 8, int64, false, int64)               \
  X(float16, "float16", __half, 2, float16, true, float32)           \
  X(bfloat16, "bfloat16", __nv_bfloat16, 2, bfloat16, true, float32) \
  X(float32, "float32", float, 4, float32, true, float64)            \
  X(float64, "float64", double, 8, float64, true, float64)
